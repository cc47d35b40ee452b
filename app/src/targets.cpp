// Declared targets and their locks as a set (targets.h, issue 22).
#include "gpulock/app/targets.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/app/requirements_file.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"
#include "gpulock/gpu/cuda_versions.h"
#include "gpulock/gpu/machine_flags.h"
#include "gpulock/lock/toml_document.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;
using lock::TomlArray;
using lock::TomlTable;
using lock::TomlValue;

constexpr std::string_view kTargetKeys[] = {"python-version", "platform", "driver",
                                            "cuda-ceiling",   "gpu-arch", "torch-backend",
                                            "cuda-compat"};

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// One string, or a list of strings (`platform`, `gpu-arch`).
core::Result<std::vector<std::string>> strings_of(const TomlValue& value) {
  std::vector<std::string> out;
  if (const auto* s = value.get_if<std::string>()) {
    out.push_back(*s);
    return out;
  }
  const auto* array = value.get_if<TomlArray>();
  if (array == nullptr)
    return core::fail(ErrorCode::InvalidInput, "expected a string or a list of strings");
  for (const auto& item : *array) {
    const auto* s = item.get_if<std::string>();
    if (s == nullptr)
      return core::fail(ErrorCode::InvalidInput, "expected a string or a list of strings");
    out.push_back(*s);
  }
  if (out.empty()) return core::fail(ErrorCode::InvalidInput, "expected at least one value");
  return out;
}

// The Pythons `python-version` spans: one version as --python-version takes it (its row of the
// request's options table reads it: "3.11", "3.11.4"), or every CPython 3 minor from 3.8 to
// 3.15 a specifier (">=3.10,<3.14") admits.
core::Result<std::vector<std::string>> pythons_of(const std::string& text) {
  if (!text.empty() && text.front() >= '0' && text.front() <= '9') {
    ResolveRequest scratch;
    if (auto s = find_request_option("python-version")->apply(scratch, text); !s)
      return std::unexpected(s.error().with_code(ErrorCode::InvalidInput));
    return std::vector<std::string>{text};
  }
  auto spec = core::SpecifierSet::parse(text);
  if (!spec) {
    return core::fail(ErrorCode::InvalidInput,
                      fmt::format("{} is neither a Python version (3.11) nor a specifier "
                                  "(\">=3.10,<3.14\")",
                                  core::quote_for_message(text)));
  }
  std::vector<std::string> out;
  for (int minor = 8; minor <= 15; ++minor) {
    auto first = core::Version::parse(fmt::format("3.{}.0", minor));
    auto late = core::Version::parse(fmt::format("3.{}.99", minor));
    if ((first && spec->contains(*first, true)) || (late && spec->contains(*late, true)))
      out.push_back(fmt::format("3.{}", minor));
  }
  if (out.empty()) {
    return core::fail(ErrorCode::InvalidInput, fmt::format("{} admits no Python from 3.8 to 3.15",
                                                           core::quote_for_message(text)));
  }
  return out;
}

// A key's value through its flag's parser.
core::Status read_key(std::string_view key, const TomlValue& value, TargetSpec& t) {
  auto texts = strings_of(value);
  if (!texts) return std::unexpected(texts.error());
  const bool list_key = key == "platform" || key == "gpu-arch";
  if (!list_key && (texts->size() != 1 || value.get_if<std::string>() == nullptr)) {
    return core::fail(ErrorCode::InvalidInput, "expected a string");
  }
  const std::string& text = texts->front();
  if (key == "python-version") {
    auto pythons = pythons_of(text);
    if (!pythons) return std::unexpected(pythons.error());
    t.python_version = text;
    t.pythons = std::move(*pythons);
    return {};
  }
  // The other keys: through their rows of the request's options table (resolve_request.h), so
  // by the flags' own parsers (the machine's is gpu::parse_machine), each value as given.
  const RequestOption* row = find_request_option(key);
  ResolveRequest scratch;
  for (const auto& one : *texts) {
    if (auto s = row->apply(scratch, one); !s) return s;
  }
  if (key == "platform") {
    t.platforms = std::move(*texts);
    return {};
  }
  if (key == "gpu-arch") {
    t.gpu_archs = std::move(*texts);
  } else if (key == "cuda-ceiling") {
    t.cuda_ceiling = text;
  } else if (key == "driver") {
    t.driver = driver_of(scratch);
  } else if (key == "torch-backend") {
    t.torch_backend = scratch.torch_backend;
  } else {
    t.cuda_compat = scratch.cuda_compat;
  }
  return {};
}

core::Result<TargetSpec> read_target(const std::string& file, const std::string& table,
                                     const std::string& name, const TomlValue& value) {
  auto fail = [&](std::string message) {
    return core::fail_at(ErrorCode::InvalidInput, fmt::format("[{}]: {}", table, message), file);
  };
  if (!valid_name(name))
    return fail("a target's name is made of a-z, 0-9 and '-' (it names pylock.<name>.toml)");
  const auto* keys = value.get_if<TomlTable>();
  if (keys == nullptr) return fail("a target is a table");
  TargetSpec t;
  t.name = name;
  for (const auto& [key, v] : *keys) {
    if (std::find(std::begin(kTargetKeys), std::end(kTargetKeys), key) == std::end(kTargetKeys)) {
      return fail(fmt::format("unknown key {} (a target takes {})", core::quote_for_message(key),
                              fmt::join(kTargetKeys, ", ")));
    }
    if (auto s = read_key(key, v, t); !s)
      return fail(fmt::format("{}: {}", key, s.error().message));
  }
  if (t.python_version.empty() || t.platforms.empty())
    return fail("a target needs python-version and platform");
  if (!t.driver.is_auto() && !t.cuda_ceiling.empty())
    return fail("give driver or cuda-ceiling, not both");
  return t;
}

// The `[targets]` (gpulock.toml) or `[tool.gpulock.targets]` (pyproject.toml) table of `file`;
// nullopt when it has none.
core::Result<std::optional<DeclaredTargets>> targets_in(const std::string& file) {
  auto text = read_text_file(file);
  if (!text) return std::unexpected(text.error());
  auto doc = lock::parse_toml_document(*text, file);
  if (!doc) return std::unexpected(doc.error().with_code(ErrorCode::InvalidInput));
  const bool standalone = fs::path(file).filename() == "gpulock.toml";
  const TomlTable* at = &*doc;
  for (std::string_view key : standalone ? std::vector<std::string_view>{}
                                         : std::vector<std::string_view>{"tool", "gpulock"}) {
    auto it = at->find(key);
    at = it == at->end() ? nullptr : it->second.get_if<TomlTable>();
    if (at == nullptr) return std::optional<DeclaredTargets>{};
  }
  auto it = at->find("targets");
  if (it == at->end()) return std::optional<DeclaredTargets>{};
  const std::string prefix = standalone ? "targets" : "tool.gpulock.targets";
  const auto* table = it->second.get_if<TomlTable>();
  if (table == nullptr)
    return core::fail_at(ErrorCode::InvalidInput, fmt::format("[{}] is a table", prefix), file);
  DeclaredTargets out;
  out.file = file;
  for (const auto& [name, value] : *table) {
    auto t = read_target(file, fmt::format("{}.{}", prefix, name), name, value);
    if (!t) return std::unexpected(t.error());
    out.targets.push_back(std::move(*t));
  }
  return std::optional<DeclaredTargets>{std::move(out)};
}

}  // namespace

core::Result<DeclaredTargets> read_targets(const std::string& project, const fs::path& dir) {
  std::vector<std::string> files;
  if (!project.empty()) {
    // gpulock.toml beside the project wins, as uv.toml does over pyproject.toml.
    fs::path beside = fs::path(project).parent_path() / "gpulock.toml";
    std::error_code ec;
    if (fs::path(project).filename() != "gpulock.toml" && fs::exists(beside, ec))
      files.push_back(beside.string());
    files.push_back(project);
  } else {
    files = {(dir / "gpulock.toml").string(), (dir / "pyproject.toml").string()};
  }
  for (const auto& f : files) {
    std::error_code ec;
    if (project.empty() && !fs::exists(f, ec)) continue;
    auto found = targets_in(f);
    if (!found) return std::unexpected(found.error());
    if (*found && !(*found)->targets.empty()) return std::move(**found);
  }
  return core::fail(ErrorCode::Usage,
                    project.empty()
                        ? "no targets declared: add [targets.<name>] to gpulock.toml or "
                          "[tool.gpulock.targets.<name>] to pyproject.toml"
                        : fmt::format("{} declares no targets", project));
}

std::vector<std::string> target_differences(const TargetSpec& target, const lock::Lock& lock) {
  std::vector<std::string> out;
  const auto* tool = lock.gpulock ? &*lock.gpulock : nullptr;
  if (tool == nullptr || !tool->target) {
    out.push_back("has a lock without [tool.gpulock.target]");
    return out;
  }
  const auto& t = *tool->target;
  std::vector<std::string> pythons =
      t.pythons.empty() ? std::vector<std::string>{t.python} : t.pythons;
  if (pythons != target.pythons) {
    out.push_back(fmt::format("declares Python {}, the lock is for {}",
                              fmt::join(target.pythons, ", "), fmt::join(pythons, ", ")));
  }
  if (t.platform != target.platforms.front()) {
    out.push_back(fmt::format("declares platform {}, the lock is for {}", target.platforms.front(),
                              t.platform));
  }
  const lock::GpulockGpu* gpu = tool->gpu ? &*tool->gpu : nullptr;
  // The lock's values as it prints them, against the target's as given.
  const std::string locked_driver = gpu && gpu->driver ? gpu->driver->to_string() : "none";
  if (!target.driver.is_auto() && target.driver.to_string() != locked_driver) {
    out.push_back(fmt::format("declares driver {}, the lock was made for driver {}",
                              target.driver.to_string(), locked_driver));
  }
  // The ceiling and the GPUs are compared as values (12 is 12.0, 8.6 is sm_86); a declared one
  // that does not parse is a difference.
  const std::string locked_ceiling =
      gpu && gpu->cuda_ceiling ? gpu->cuda_ceiling->to_string() : "none";
  if (!target.cuda_ceiling.empty()) {
    auto declared = gpu::CudaVersion::parse(target.cuda_ceiling);
    if (gpu == nullptr || !gpu->cuda_ceiling || !declared || *declared != *gpu->cuda_ceiling) {
      out.push_back(fmt::format("declares cuda-ceiling {}, the lock was made for {}",
                                target.cuda_ceiling, locked_ceiling));
    }
  }
  std::vector<std::string> archs;
  std::vector<gpu::ComputeCapability> locked_archs;
  if (gpu) {
    locked_archs = gpu->archs;
    for (const auto& a : gpu->archs)
      archs.push_back(a.to_string());
  }
  bool same_archs = target.gpu_archs.size() == locked_archs.size();
  for (std::size_t i = 0; same_archs && i < locked_archs.size(); ++i) {
    auto declared = gpu::ComputeCapability::parse(target.gpu_archs[i]);
    same_archs = declared && *declared == locked_archs[i];
  }
  if (!same_archs) {
    out.push_back(fmt::format("declares gpu-arch [{}], the lock was made for [{}]",
                              fmt::join(target.gpu_archs, ", "), fmt::join(archs, ", ")));
  }
  return out;
}

ResolveRequest request_for_target(const ResolveRequest& shared, const TargetSpec& target,
                                  const fs::path& dir) {
  ResolveRequest r = shared;
  r.target_name = target.name;
  r.target.python.clear();
  r.target.python_version = target.python_version;
  r.target.platform = target.platforms.front();
  r.target.more_platforms.assign(target.platforms.begin() + 1, target.platforms.end());
  // The target's machine, never this one's (targets_resolve.cpp runs it as given): without
  // driver or cuda-ceiling it has no GPU.
  const bool no_gpu = target.driver.is_auto() && target.cuda_ceiling.empty();
  r.machine.driver =
      no_gpu ? "none" : (target.driver.is_auto() ? std::string() : target.driver.to_string());
  r.machine.cuda_ceiling = target.cuda_ceiling;
  r.machine.gpu_arch = fmt::format("{}", fmt::join(target.gpu_archs, ","));
  if (target.torch_backend) r.torch_backend = target.torch_backend;
  if (target.cuda_compat) r.cuda_compat = *target.cuda_compat;
  r.output = (dir / fmt::format("pylock.{}.toml", target.name)).string();
  return r;
}

}  // namespace gpulock::app
