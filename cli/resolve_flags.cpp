// Resolve's input flags, declared once for resolve and check (resolve_flags.h).
#include "resolve_flags.h"

#include <memory>

#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/index/index_spec.h"
#include "gpulock/resolver/provider.h"

#include "machine_flags.h"

namespace gpulock::cli {
namespace {

// A flag whose value is a type: `parse` (the type's one parser) runs as the value is read; the
// first failure is kept for the command to report with its hints.
template <class Into, class Parse>
CLI::Option* add_typed(CLI::App& sub, const std::string& name, ResolveFlags& flags, Into& into,
                       Parse parse, const std::string& help) {
  auto* option = sub.add_option_function<std::string>(
      name,
      [&flags, &into, parse](const std::string& text) {
        auto value = parse(text);
        if (!value) {
          if (!flags.error) flags.error = value.error();
          return;
        }
        into = std::move(*value);
      },
      help);
  return option->type_name("TEXT");
}

// The same for a repeatable flag collecting values.
template <class T, class Parse>
CLI::Option* add_typed_list(CLI::App& sub, const std::string& name, ResolveFlags& flags,
                            std::vector<T>& into, Parse parse, const std::string& help) {
  auto* option = sub.add_option_function<std::vector<std::string>>(
      name,
      [&flags, &into, parse](const std::vector<std::string>& texts) {
        for (const auto& text : texts) {
          auto value = parse(text);
          if (!value) {
            if (!flags.error) flags.error = value.error();
            continue;
          }
          into.push_back(std::move(*value));
        }
      },
      help);
  return option->type_name("TEXT");
}

}  // namespace

core::Status ResolveFlags::finish() {
  if (error) return std::unexpected(*error);
  // The machine, as given (the lock records the text); the driver is typed now, the ceiling and
  // the GPUs when the plan reads them with the environment (gpu::parse_machine).
  auto driver = gpu::DriverSpec::parse(machine.driver);
  if (!driver) return std::unexpected(driver.error());
  request.driver = *driver;
  request.cuda_ceiling = machine.cuda_ceiling;
  request.gpu_arch = machine.gpu_arch;
  if (pre) request.prerelease = resolver::PrereleasePolicy::Allow;
  if (!platforms.empty()) {
    request.target.platform = platforms.front();
    request.target.more_platforms.assign(platforms.begin() + 1, platforms.end());
  }
  return {};
}

std::vector<CLI::Option*> add_resolve_input_flags(CLI::App& sub, ResolveFlags& flags) {
  auto& r = flags.request;
  std::vector<CLI::Option*> in;
  in.push_back(sub.add_option("requirements", r.requirements,
                              "Requirements (PEP 508), e.g. 'torch>=2.5' torchvision"));
  in.push_back(sub.add_option("-r,--requirement", r.requirement_files,
                              "Read requirements from a file (pip's format)"));
  in.push_back(sub.add_option("-c,--constraint", r.constraint_files,
                              "Constrain versions with a file (pip's format)"));
  in.push_back(
      sub.add_option("--project", r.project, "Read [project] dependencies from a pyproject.toml"));
  in.push_back(
      sub.add_option("--extra", r.extras, "Include an optional-dependencies extra of --project"));
  in.push_back(
      sub.add_option("--group", r.groups, "Include a [dependency-groups] group of --project"));
  in.push_back(
      sub.add_option("--index-url", r.index_url,
                     "Default index (PEP 503/691 simple API; default https://pypi.org/simple/)"));
  in.push_back(sub.add_option("--extra-index-url", r.extra_index_urls,
                              "A lower-priority index (repeatable)"));
  in.push_back(sub.add_option("-f,--find-links", r.find_links,
                              "A directory or page of wheels (lowest priority)"));
  in.push_back(add_typed(sub, "--torch-backend", flags, r.torch_backend, app::TorchBackend::parse,
                         "Torch family from <torch-index-base>/<backend>: auto, cpu or cuXYZ"));
  in.push_back(
      sub.add_option("--torch-index-base", r.torch_index_base, "Base of the PyTorch indexes")
          ->capture_default_str());
  in.push_back(add_typed(
      sub, "--nightly", flags, r.nightly, app::NightlyDate::parse,
      "Torch family from <base>/nightly/<variant>, one build date: YYYY-MM-DD or latest"));
  in.push_back(add_typed(sub, "--index-strategy", flags, r.index_strategy,
                         app::parse_index_strategy, "first-index or unsafe-best-match")
                   ->default_str("first-index"));
  in.push_back(
      sub.add_option("--python-version", r.target.python_version, "Target Python, e.g. 3.11"));
  in.push_back(sub.add_option(
      "--platform", flags.platforms,
      "Target platform tag, e.g. manylinux_2_28_x86_64 (repeatable, as pip's: the first is "
      "the target, later ones add their wheel tags)"));
  in.push_back(add_typed(sub, "--cuda-compat", flags, r.cuda_compat, gpu::parse_cuda_compat,
                         "strict, or minor (NVIDIA minor-version compatibility)")
                   ->default_str("strict"));
  in.push_back(add_typed(sub, "--prerelease", flags, r.prerelease,
                         resolver::parse_prerelease_policy, "if-necessary, allow or disallow")
                   ->default_str("if-necessary"));
  in.push_back(sub.add_flag("--pre", flags.pre, "Same as --prerelease allow"));
  in.push_back(add_typed(sub, "--exclude-newer", flags, r.exclude_newer, app::ExcludeNewer::parse,
                         "Ignore files published after DATE, TIMESTAMP or DURATION ago (7d)"));
  return in;
}

void add_resolve_source_and_machine_flags(CLI::App& sub, ResolveFlags& flags) {
  auto& r = flags.request;
  add_typed_list(sub, "--index", flags, r.named_indexes, index::NamedIndex::parse,
                 "A named index NAME=URL, used through --index-for");
  add_typed_list(sub, "--index-for", flags, r.index_for, index::IndexPin::parse,
                 "Take packages matching GLOB only from index NAME: GLOB=NAME");
  sub.add_option("--python", r.target.python,
                 "Resolve for this interpreter (asked for its version and platform)");
  add_machine_flags(sub, flags.machine, MachineRole::Target);
}

}  // namespace gpulock::cli
