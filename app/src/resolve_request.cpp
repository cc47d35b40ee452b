// The options table of the resolve request (resolve_request.h): one row per option, each with
// its one parser, its field, and its lock record.

#include "gpulock/app/resolve_request.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "gpulock/core/marker.h"
#include "gpulock/core/text.h"

namespace gpulock::app {
namespace {

using Req = ResolveRequest;
using Rec = RecordedOptions;

// A parsed value into its field.
template <class Parsed, class Into>
core::Status assign(Parsed parsed, Into& into) {
  if (!parsed) return std::unexpected(parsed.error());
  into = std::move(*parsed);
  return {};
}

// A recorded value its parser refused, naming where the lock has it.
std::unexpected<core::Error> recorded_error(std::string_view key, const core::Error& e) {
  return std::unexpected(core::make_error(
      e.code, fmt::format("[tool.gpulock.inputs.options] {}: {}", key, e.message)));
}

// One recorded option through its parser; an absent or empty key leaves `into` as it is.
template <class Parse, class Into>
core::Status read_one(const Rec& in, std::string_view key, Parse parse, Into& into) {
  auto it = in.find(key);
  if (it == in.end() || it->second.empty()) return {};
  auto v = parse(it->second);
  if (!v) return recorded_error(key, v.error());
  into = std::move(*v);
  return {};
}

// A recorded text through its row's parser (the machine's three facts, as flags gave them).
core::Status read_through(const Rec& in, std::string_view key, Req& r,
                          core::Status (*apply)(Req&, std::string_view)) {
  auto it = in.find(key);
  if (it == in.end() || it->second.empty()) return {};
  if (auto s = apply(r, it->second); !s) return recorded_error(key, s.error());
  return {};
}

// A switch's value in the configuration or the record: "true" or "false".
core::Result<bool> parse_switch(std::string_view v) {
  if (v == "true") return true;
  if (v == "false") return false;
  return std::unexpected(core::make_error(
      core::ErrorCode::InvalidInput, fmt::format("invalid value '{}': expected true or false", v)));
}

// `--index-for GLOB=NAME`, or a configured `GLOB=NAME; MARKER` (uv's sources with a marker).
core::Status apply_index_for(Req& r, std::string_view value) {
  auto semi = value.find(';');
  auto pin = index::IndexPin::parse(core::trim(value.substr(0, semi)));
  if (!pin) return std::unexpected(pin.error());
  if (semi == std::string_view::npos) {
    r.index_for.push_back(std::move(*pin));
    return {};
  }
  std::string_view marker = core::trim(value.substr(semi + 1));
  if (auto m = core::Marker::parse(marker); !m) {
    return core::fail(core::ErrorCode::Usage,
                      fmt::format("invalid --index-for {}: {}", core::quote_for_message(value),
                                  m.error().message));
  }
  r.index_for_when.push_back({std::move(*pin), std::string(marker)});
  return {};
}

// `--index-for` pins in order, "GLOB=NAME,GLOB=NAME" (a glob holds no comma; the named indexes
// are [[tool.gpulock.indexes]] records with role "pinned"), and the pins with a marker,
// "GLOB=NAME; MARKER" joined by " | ".
void record_index_for(const Req& r, Rec& out) {
  if (!r.index_for.empty()) {
    std::string pins;
    for (const auto& p : r.index_for)
      pins += (pins.empty() ? "" : ",") + p.to_string();
    out["index-for"] = pins;
  }
  if (!r.index_for_when.empty()) {
    std::string pins;
    for (const auto& p : r.index_for_when)
      pins += fmt::format("{}{}; {}", pins.empty() ? "" : " | ", p.pin.to_string(), p.marker);
    out["index-for-when"] = pins;
  }
}

core::Status read_index_for(const Rec& in, Req& r) {
  if (auto it = in.find("index-for"); it != in.end()) {
    for (std::string_view pins = it->second; !pins.empty();) {
      auto comma = pins.find(',');
      auto pin = index::IndexPin::parse(pins.substr(0, comma));
      if (!pin) return recorded_error("index-for", pin.error());
      r.index_for.push_back(std::move(*pin));
      pins = comma == std::string_view::npos ? std::string_view() : pins.substr(comma + 1);
    }
  }
  if (auto it = in.find("index-for-when"); it != in.end()) {
    std::string_view all = it->second;
    for (std::size_t pos = 0; pos <= all.size();) {
      std::size_t bar = all.find(" | ", pos);
      std::string_view one = all.substr(pos, bar == std::string_view::npos ? bar : bar - pos);
      auto semi = one.find("; ");
      auto pin = index::IndexPin::parse(one.substr(0, semi));
      if (!pin || semi == std::string_view::npos) {
        return recorded_error("index-for-when", pin ? core::make_error(core::ErrorCode::Usage,
                                                                       "expected GLOB=NAME; MARKER")
                                                    : pin.error());
      }
      r.index_for_when.push_back({std::move(*pin), std::string(one.substr(semi + 2))});
      if (bar == std::string_view::npos) break;
      pos = bar + 3;
    }
  }
  return {};
}

core::Status apply_python_version(Req& r, std::string_view value) {
  bool ok = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.';
  });
  if (!ok || value.front() == '.' || value.back() == '.' ||
      value.find('.') == std::string_view::npos) {
    return core::fail(
        core::ErrorCode::Usage,
        fmt::format("invalid --python-version {}: expected X.Y", core::quote_for_message(value)));
  }
  r.target.python_version = std::string(value);
  return {};
}

// One of the machine's three facts, checked by gpu::parse_machine (its one parser), kept as text.
core::Status apply_machine(std::string& field, gpu::MachineFlags flags, std::string_view value) {
  if (auto m = gpu::parse_machine(flags); !m) return std::unexpected(m.error().error);
  field = std::string(value);
  return {};
}

// The driver by its type's parser (DriverSpec: auto, none or a version), as the CLI checks it.
core::Status apply_driver(Req& r, std::string_view v) {
  if (auto d = gpu::DriverSpec::parse(v); !d) return std::unexpected(d.error());
  r.machine.driver = std::string(v);
  return {};
}
core::Status apply_ceiling(Req& r, std::string_view v) {
  return apply_machine(r.machine.cuda_ceiling, {"", std::string(v), ""}, v);
}
core::Status apply_archs(Req& r, std::string_view v) {
  return apply_machine(r.machine.gpu_arch, {"", "", std::string(v)}, v);
}

// The rows. Lambdas without captures: plain functions, one per field.
const std::array<RequestOption, 19> kOptions{{
    {"index-url", "--index-url", false, false,
     [](Req& r, std::string_view v) -> core::Status {
       r.index_url = std::string(v);
       return {};
     },
     [](Req& r) { r.index_url.reset(); }, nullptr, nullptr},
    {"extra-index-url", "--extra-index-url", true, false,
     [](Req& r, std::string_view v) -> core::Status {
       r.extra_index_urls.emplace_back(v);
       return {};
     },
     [](Req& r) { r.extra_index_urls.clear(); }, nullptr, nullptr},
    {"find-links", "--find-links", true, false,
     [](Req& r, std::string_view v) -> core::Status {
       r.find_links.emplace_back(v);
       return {};
     },
     [](Req& r) { r.find_links.clear(); }, nullptr, nullptr},
    {"index", "--index", true, true,
     [](Req& r, std::string_view v) -> core::Status {
       auto ix = index::NamedIndex::parse(v);
       if (!ix) return std::unexpected(ix.error());
       r.named_indexes.push_back(std::move(*ix));
       return {};
     },
     [](Req& r) { r.named_indexes.clear(); }, nullptr, nullptr},
    {"index-for", "--index-for", true, true, apply_index_for,
     [](Req& r) {
       r.index_for.clear();
       r.index_for_when.clear();
     },
     record_index_for, read_index_for},
    {"index-strategy", "--index-strategy", false, true,
     [](Req& r, std::string_view v) { return assign(parse_index_strategy(v), r.index_strategy); },
     [](Req& r) { r.index_strategy = IndexStrategy::FirstIndex; },
     [](const Req& r, Rec& out) { out["index-strategy"] = index_strategy_name(r.index_strategy); },
     [](const Rec& in, Req& r) {
       return read_one(in, "index-strategy", parse_index_strategy, r.index_strategy);
     }},
    {"torch-backend", "--torch-backend", false, true,
     [](Req& r, std::string_view v) { return assign(TorchBackend::parse(v), r.torch_backend); },
     [](Req& r) { r.torch_backend.reset(); },
     [](const Req& r, Rec& out) {
       if (r.torch_backend) out["torch-backend"] = r.torch_backend->to_string();
     },
     [](const Rec& in, Req& r) {
       return read_one(in, "torch-backend", TorchBackend::parse, r.torch_backend);
     }},
    {"torch-index-base", "--torch-index-base", false, false,
     [](Req& r, std::string_view v) -> core::Status {
       r.torch_index_base = std::string(v);
       return {};
     },
     [](Req& r) { r.torch_index_base = ResolveRequest{}.torch_index_base; }, nullptr, nullptr},
    {"nightly", "--nightly", false, true,
     [](Req& r, std::string_view v) { return assign(NightlyDate::parse(v), r.nightly); },
     [](Req& r) { r.nightly.reset(); },
     [](const Req& r, Rec& out) {
       if (r.nightly) out["nightly"] = r.nightly->to_string();
     },
     [](const Rec& in, Req& r) { return read_one(in, "nightly", NightlyDate::parse, r.nightly); }},
    {"exclude-newer", "--exclude-newer", false, true,
     [](Req& r, std::string_view v) { return assign(ExcludeNewer::parse(v), r.exclude_newer); },
     [](Req& r) { r.exclude_newer.reset(); },
     [](const Req& r, Rec& out) {
       if (r.exclude_newer) out["exclude-newer"] = r.exclude_newer->to_string();
     },
     [](const Rec& in, Req& r) {
       return read_one(in, "exclude-newer", ExcludeNewer::parse, r.exclude_newer);
     }},
    {"prerelease", "--prerelease", false, true,
     [](Req& r, std::string_view v) {
       return assign(resolver::parse_prerelease_policy(v), r.prerelease);
     },
     [](Req& r) { r.prerelease = resolver::PrereleasePolicy::IfNecessary; },
     [](const Req& r, Rec& out) {
       out["prerelease"] = resolver::prerelease_policy_name(r.prerelease);
     },
     [](const Rec& in, Req& r) {
       return read_one(in, "prerelease", resolver::parse_prerelease_policy, r.prerelease);
     }},
    {"cuda-compat", "--cuda-compat", false, true,
     [](Req& r, std::string_view v) { return assign(gpu::parse_cuda_compat(v), r.cuda_compat); },
     [](Req& r) { r.cuda_compat = gpu::CudaCompat::Strict; },
     [](const Req& r, Rec& out) { out["cuda-compat"] = gpu::cuda_compat_name(r.cuda_compat); },
     [](const Rec& in, Req& r) {
       return read_one(in, "cuda-compat", gpu::parse_cuda_compat, r.cuda_compat);
     }},
    {"python-version", "--python-version", false, true, apply_python_version,
     [](Req& r) { r.target.python_version.clear(); }, nullptr, nullptr},
    // Repeatable as pip's: the first is the target, later ones add their wheel tags.
    {"platform", "--platform", true, false,
     [](Req& r, std::string_view v) -> core::Status {
       if (r.target.platform.empty()) {
         r.target.platform = std::string(v);
       } else {
         r.target.more_platforms.emplace_back(v);
       }
       return {};
     },
     [](Req& r) {
       r.target.platform.clear();
       r.target.more_platforms.clear();
     },
     nullptr, nullptr},
    // The machine, when flags described it (issue 16): what the lock was made for, as given.
    // Detected values are [tool.gpulock.gpu]'s, not inputs (from_record reads them there when
    // no flag described the machine).
    {"driver", "--driver", false, true, apply_driver, [](Req& r) { r.machine.driver.clear(); },
     [](const Req& r, Rec& out) {
       if (auto d = driver_of(r); !d.is_auto()) out["driver"] = d.to_string();
     },
     [](const Rec& in, Req& r) { return read_through(in, "driver", r, apply_driver); }},
    {"cuda-ceiling", "--cuda-ceiling", false, true, apply_ceiling,
     [](Req& r) { r.machine.cuda_ceiling.clear(); },
     [](const Req& r, Rec& out) {
       if (!r.machine.cuda_ceiling.empty()) out["cuda-ceiling"] = r.machine.cuda_ceiling;
     },
     [](const Rec& in, Req& r) { return read_through(in, "cuda-ceiling", r, apply_ceiling); }},
    {"gpu-arch", "--gpu-arch", false, true, apply_archs, [](Req& r) { r.machine.gpu_arch.clear(); },
     [](const Req& r, Rec& out) {
       if (!r.machine.gpu_arch.empty()) out["gpu-arch"] = r.machine.gpu_arch;
     },
     [](const Rec& in, Req& r) { return read_through(in, "gpu-arch", r, apply_archs); }},
    // Recorded only when set, so a lock made without it keeps its inputs' sha256.
    {"allow-incomplete", "--allow-incomplete", false, true,
     [](Req& r, std::string_view v) { return assign(parse_switch(v), r.allow_incomplete); },
     [](Req& r) { r.allow_incomplete = false; },
     [](const Req& r, Rec& out) {
       if (r.allow_incomplete) out["allow-incomplete"] = "true";
     },
     [](const Rec& in, Req& r) {
       return read_one(in, "allow-incomplete", parse_switch, r.allow_incomplete);
     }},
    // Not recorded: an upgrade changes which pins are kept, not what the lock is for.
    {"upgrade-package", "--upgrade-package", true, false,
     [](Req& r, std::string_view v) -> core::Status {
       r.upgrade_packages.emplace_back(v);
       return {};
     },
     [](Req& r) { r.upgrade_packages.clear(); }, nullptr, nullptr},
}};

}  // namespace

gpu::DriverSpec driver_of(const ResolveRequest& request) {
  auto d = gpu::DriverSpec::parse(request.machine.driver);
  return d ? *d : gpu::DriverSpec{};
}

std::span<const RequestOption> request_options() noexcept {
  return kOptions;
}

const RequestOption* find_request_option(std::string_view key_or_flag) noexcept {
  for (const auto& o : kOptions) {
    if (o.key == key_or_flag || o.flag == key_or_flag) return &o;
  }
  return nullptr;
}

}  // namespace gpulock::app
