// Resolve's input flags, declared once for resolve and check (resolve_flags.h).
#include "resolve_flags.h"

#include <memory>

#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/index/index_spec.h"
#include "gpulock/resolver/provider.h"

#include "machine_flags.h"

namespace gpulock::cli {
namespace {

// A flag, from its row of the request's options table (app/resolve_request.h): the row's parser
// writes the row's field as the value is read (a repeatable flag adds each value); the first
// failure is kept for the command to report with its hints. `names`: the flag with its short
// form ("-f,--find-links"), when it has one.
CLI::Option* add_row(CLI::App& sub, ResolveFlags& flags, std::string_view flag,
                     const std::string& help, std::string_view names = {}) {
  const app::RequestOption* row = app::find_request_option(flag);
  const std::string name(names.empty() ? flag : names);
  auto apply = [&flags, row](const std::string& text) {
    if (auto s = row->apply(flags.request, text); !s && !flags.error) flags.error = s.error();
  };
  CLI::Option* option = row->list ? sub.add_option_function<std::vector<std::string>>(
                                        name,
                                        [apply](const std::vector<std::string>& texts) {
                                          for (const auto& text : texts)
                                            apply(text);
                                        },
                                        help)
                                  : sub.add_option_function<std::string>(name, apply, help);
  return option->type_name("TEXT");
}

}  // namespace

core::Status ResolveFlags::finish() {
  if (error) return std::unexpected(*error);
  // The machine, as given (the lock records the text); the driver is checked now, the ceiling
  // and the GPUs when the plan reads them with the environment (gpu::parse_machine).
  if (auto driver = gpu::DriverSpec::parse(machine.driver); !driver) {
    return std::unexpected(driver.error());
  }
  request.machine = machine;
  if (pre) request.prerelease = resolver::PrereleasePolicy::Allow;
  if (allow_incomplete) request.allow_incomplete = true;
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
  in.push_back(add_row(sub, flags, "--index-url",
                       "Default index (PEP 503/691 simple API; default https://pypi.org/simple/)"));
  in.push_back(add_row(sub, flags, "--extra-index-url", "A lower-priority index (repeatable)"));
  in.push_back(add_row(sub, flags, "--find-links",
                       "A directory or page of wheels (lowest priority)", "-f,--find-links"));
  in.push_back(add_row(sub, flags, "--torch-backend",
                       "Torch family from <torch-index-base>/<backend>: auto, cpu or cuXYZ"));
  in.push_back(add_row(sub, flags, "--torch-index-base", "Base of the PyTorch indexes")
                   ->default_str(r.torch_index_base));
  in.push_back(
      add_row(sub, flags, "--nightly",
              "Torch family from <base>/nightly/<variant>, one build date: YYYY-MM-DD or latest"));
  in.push_back(add_row(sub, flags, "--index-strategy", "first-index or unsafe-best-match")
                   ->default_str("first-index"));
  in.push_back(add_row(sub, flags, "--python-version", "Target Python, e.g. 3.11"));
  in.push_back(
      add_row(sub, flags, "--platform",
              "Target platform tag, e.g. manylinux_2_28_x86_64 (repeatable, as pip's: the first is "
              "the target, later ones add their wheel tags)"));
  in.push_back(
      add_row(sub, flags, "--cuda-compat", "strict, or minor (NVIDIA minor-version compatibility)")
          ->default_str("strict"));
  in.push_back(add_row(sub, flags, "--prerelease", "if-necessary, allow or disallow")
                   ->default_str("if-necessary"));
  in.push_back(sub.add_flag("--pre", flags.pre, "Same as --prerelease allow"));
  in.push_back(sub.add_flag("--allow-incomplete", flags.allow_incomplete,
                            "Lock a set that breaks a rule between its wheels (two writing one "
                            "path, an nvJitLink older than a library links) with a warning, "
                            "recorded in the lock"));
  in.push_back(add_row(sub, flags, "--exclude-newer",
                       "Ignore files published after DATE, TIMESTAMP or DURATION ago (7d)"));
  return in;
}

void add_resolve_source_and_machine_flags(CLI::App& sub, ResolveFlags& flags) {
  auto& r = flags.request;
  add_row(sub, flags, "--index", "A named index NAME=URL, used through --index-for");
  add_row(sub, flags, "--index-for",
          "Take packages matching GLOB only from index NAME: GLOB=NAME (or 'GLOB=NAME; MARKER': "
          "only where the PEP 508 marker holds)");
  sub.add_option("--python", r.target.python,
                 "Resolve for this interpreter (asked for its version and platform)");
  add_machine_flags(sub, flags.machine, MachineRole::Target);
}

}  // namespace gpulock::cli
