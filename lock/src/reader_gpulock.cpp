// The [tool.gpulock] table of a pylock.toml (schema 1) as the Reader reads it, one step per
// sub-table; other tools' tables are kept as they are.

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "gpulock/gpu/cuda_versions.h"

#include "reader_impl.h"
#include "toml_convert.h"

namespace gpulock::lock::reading {

namespace {

// `driver`: what gpulock writes, a driver version (as written) or "none"; "auto" is read too.
std::optional<gpu::DriverSpec> parse_locked_driver(std::string_view text) {
  if (text == "none") return gpu::DriverSpec::none();
  if (text == "auto") return gpu::DriverSpec();
  auto v = gpu::DriverVersion::parse(text);
  if (!v) return std::nullopt;
  return gpu::DriverSpec::of(std::move(*v));
}

// A free-text value, taken as it is.
std::optional<std::string> opt_text(std::string_view text) {
  return std::string(text);
}

}  // namespace

core::Result<GpulockTool> Reader::read_gpulock(const toml::table& t) {
  GpulockTool g;
  g.line.line = line_of(t);
  constexpr std::string_view in = "in [tool.gpulock]";
  g.schema = t.get("schema")->as_integer()->get();
  GPULOCK_TRY(read_gpulock_indexes(t, in, g));
  GPULOCK_TRY(read_gpulock_inputs(t, in, g));
  GPULOCK_TRY(read_gpulock_target(t, in, g));
  GPULOCK_TRY(read_gpulock_gpu(t, in, g));
  GPULOCK_TRY(read_gpulock_snapshot(t, in, g));
  g.unknown = unknown_keys(t, {"schema", "indexes", "inputs", "target", "gpu", "snapshot"}, in);
  return g;
}

// [[tool.gpulock.indexes]]
core::Status Reader::read_gpulock_indexes(const toml::table& t, std::string_view in,
                                          GpulockTool& g) {
  if (auto arr = opt_table_array(t, "indexes", in); !arr) {
    return std::unexpected(arr.error());
  } else if (*arr) {
    for (const auto& e : **arr) {
      const toml::table& et = *e.as_table();
      constexpr std::string_view iin = "in [[tool.gpulock.indexes]]";
      IndexRecord r;
      auto name = req_string(et, "name", iin);
      if (!name) return std::unexpected(name.error());
      auto url = req_string(et, "url", iin);
      if (!url) return std::unexpected(url.error());
      auto role = req_string(et, "role", iin);
      if (!role) return std::unexpected(role.error());
      r.name = std::move(*name);
      r.url = std::move(*url);
      r.role = std::move(*role);
      auto origin = opt_string(et, "origin", iin);
      if (!origin) return std::unexpected(origin.error());
      r.origin = std::move(*origin);
      r.unknown = unknown_keys(et, {"name", "url", "role", "origin"}, iin);
      g.indexes.push_back(std::move(r));
    }
  }
  return {};
}

// [tool.gpulock.inputs]
core::Status Reader::read_gpulock_inputs(const toml::table& t, std::string_view in,
                                         GpulockTool& g) {
  auto inputs = opt_table(t, "inputs", in);
  if (!inputs) return std::unexpected(inputs.error());
  if (*inputs) {
    const toml::table& it = **inputs;
    constexpr std::string_view iin = "in [tool.gpulock.inputs]";
    GpulockInputs x;
    x.line.line = line_of(it);
    auto reqs = strings_or_empty(it, "requirements", iin);
    if (!reqs) return std::unexpected(reqs.error());
    x.requirements = std::move(*reqs);
    auto files = opt_table_array(it, "files", iin);
    if (!files) return std::unexpected(files.error());
    if (*files) {
      for (const auto& e : **files) {
        const toml::table& ft = *e.as_table();
        constexpr std::string_view fin = "in [tool.gpulock.inputs] files";
        InputFile f;
        auto path = req_string(ft, "path", fin);
        if (!path) return std::unexpected(path.error());
        auto kind = req_string(ft, "kind", fin);
        if (!kind) return std::unexpected(kind.error());
        auto sha = req_string(ft, "sha256", fin);
        if (!sha) return std::unexpected(sha.error());
        f.path = std::move(*path);
        f.kind = std::move(*kind);
        f.sha256 = std::move(*sha);
        f.unknown = unknown_keys(ft, {"path", "kind", "sha256"}, fin);
        x.files.push_back(std::move(f));
      }
    }
    auto extras = strings_or_empty(it, "extras", iin);
    if (!extras) return std::unexpected(extras.error());
    x.extras = std::move(*extras);
    auto groups = strings_or_empty(it, "groups", iin);
    if (!groups) return std::unexpected(groups.error());
    x.groups = std::move(*groups);
    auto options = opt_table(it, "options", iin);
    if (!options) return std::unexpected(options.error());
    if (*options) {
      for (const auto& [k, v] : **options) {
        if (!v.is_string()) {
          return fail(line_of(v), fmt::format("option '{}' in [tool.gpulock.inputs.options] "
                                              "must be a string, not {}",
                                              k.str(), node_type_name(v)));
        }
        x.options.emplace(std::string(k.str()), std::string(v.as_string()->get()));
      }
    }
    auto sha = opt_string(it, "sha256", iin);
    if (!sha) return std::unexpected(sha.error());
    x.sha256 = sha->value_or("");
    x.unknown =
        unknown_keys(it, {"requirements", "files", "extras", "groups", "options", "sha256"}, iin);
    g.inputs = std::move(x);
  }

  return {};
}

// [tool.gpulock.target]
core::Status Reader::read_gpulock_target(const toml::table& t, std::string_view in,
                                         GpulockTool& g) {
  auto target = opt_table(t, "target", in);
  if (!target) return std::unexpected(target.error());
  if (*target) {
    constexpr std::string_view tin = "in [tool.gpulock.target]";
    GpulockTarget x;
    x.line.line = line_of(**target);
    auto python = opt_string(**target, "python", tin);
    if (!python) return std::unexpected(python.error());
    auto platform = opt_string(**target, "platform", tin);
    if (!platform) return std::unexpected(platform.error());
    auto name = opt_string(**target, "name", tin);
    if (!name) return std::unexpected(name.error());
    x.python = python->value_or("");
    x.platform = platform->value_or("");
    x.name = std::move(*name);
    auto pythons = opt_string_array(**target, "pythons", tin);
    if (!pythons) return std::unexpected(pythons.error());
    auto platforms = opt_string_array(**target, "platforms", tin);
    if (!platforms) return std::unexpected(platforms.error());
    x.pythons = pythons->value_or(std::vector<std::string>{});
    x.platforms = platforms->value_or(std::vector<std::string>{});
    x.unknown = unknown_keys(**target, {"name", "python", "platform", "pythons", "platforms"}, tin);
    g.target = std::move(x);
  }

  return {};
}

// [tool.gpulock.gpu]: each value parsed once, into the gpu module's types. A lock is input: a
// value that does not parse is refused, naming the file, the line and the key.
core::Status Reader::read_gpulock_gpu(const toml::table& t, std::string_view in, GpulockTool& g) {
  auto gpu = opt_table(t, "gpu", in);
  if (!gpu) return std::unexpected(gpu.error());
  if (!*gpu) return {};
  const toml::table& gt = **gpu;
  constexpr std::string_view gin = "in [tool.gpulock.gpu]";
  GpulockGpu x;
  x.line.line = line_of(gt);
  // `parse` gives an optional or a Result; `problem` says what the value is not.
  auto typed = [&]<class T>(std::string_view key, std::optional<T>& field, auto parse,
                            std::string_view problem) -> core::Status {
    auto text = opt_string(gt, key, gin);
    if (!text) return std::unexpected(text.error());
    if (!*text) return {};
    auto v = parse(**text);
    if (!v) return check_field(gt, key, gin, std::string(problem));
    field = std::move(*v);
    return {};
  };
  constexpr auto cuda = &gpu::CudaVersion::parse;
  constexpr std::string_view not_cuda = "is not a CUDA version (major.minor, like 12.4)";
  GPULOCK_TRY(typed("driver", x.driver, parse_locked_driver,
                    "is not a driver version (like 550.54.14) or none"));
  GPULOCK_TRY(typed("cuda-ceiling", x.cuda_ceiling, cuda, not_cuda));
  GPULOCK_TRY(typed("method", x.method, opt_text, ""));
  GPULOCK_TRY(typed("compat", x.compat, gpu::parse_cuda_compat, "is not strict or minor"));
  GPULOCK_TRY(typed("variant", x.variant, opt_text, ""));
  GPULOCK_TRY(typed("cuda", x.cuda, cuda, not_cuda));
  GPULOCK_TRY(typed("cudnn", x.cudnn, opt_text, ""));
  GPULOCK_TRY(typed("min-driver", x.min_driver, gpu::DriverVersion::parse,
                    "is not a driver version (like 550.54.14)"));
  auto archs = strings_or_empty(gt, "archs", gin);
  if (!archs) return std::unexpected(archs.error());
  for (std::size_t i = 0; i < archs->size(); ++i) {
    const std::string& text = (*archs)[i];
    auto arch = gpu::ComputeCapability::parse(text);
    if (!arch) {
      return fail(line_of(*gt.get("archs")->as_array()->get(i)),
                  fmt::format("'archs' {} has an entry that is not a GPU architecture (sm_XY, "
                              "like sm_90): {}",
                              gin, core::quote_for_message(text)));
    }
    x.archs.push_back(*arch);
  }
  x.unknown = unknown_keys(gt,
                           {"driver", "cuda-ceiling", "method", "compat", "archs", "variant",
                            "cuda", "cudnn", "min-driver"},
                           gin);
  g.gpu = std::move(x);
  return {};
}

// [tool.gpulock.snapshot]
core::Status Reader::read_gpulock_snapshot(const toml::table& t, std::string_view in,
                                           GpulockTool& g) {
  auto snapshot = opt_table(t, "snapshot", in);
  if (!snapshot) return std::unexpected(snapshot.error());
  if (*snapshot) {
    constexpr std::string_view sin = "in [tool.gpulock.snapshot]";
    GpulockSnapshot x;
    x.line.line = line_of(**snapshot);
    auto en = read_datetime(**snapshot, "exclude-newer", sin);
    if (!en) return std::unexpected(en.error());
    x.exclude_newer = *en;
    auto nightly = opt_string(**snapshot, "nightly", sin);
    if (!nightly) return std::unexpected(nightly.error());
    x.nightly = std::move(*nightly);
    x.unknown = unknown_keys(**snapshot, {"exclude-newer", "nightly"}, sin);
    g.snapshot = std::move(x);
  }
  return {};
}

core::Status Reader::read_tool(const toml::table& tool, Lock& lock) {
  for (const auto& [k, v] : tool) {
    if (k.str() == "gpulock" && v.is_table()) {
      const toml::table& gt = *v.as_table();
      const toml::node* schema = gt.get("schema");
      if (!schema || !schema->is_integer()) {
        return fail(schema ? line_of(*schema) : line_of(gt),
                    "[tool.gpulock] needs 'schema' = an integer (1)");
      }
      if (schema->as_integer()->get() == GpulockTool::kSchema) {
        auto g = read_gpulock(gt);
        if (!g) return std::unexpected(g.error());
        lock.gpulock = std::move(*g);
        continue;
      }
      warn(line_of(*schema),
           fmt::format("[tool.gpulock] has schema {}, which this gpulock does not know; kept as "
                       "is but not used",
                       schema->as_integer()->get()));
    }
    lock.tool.emplace(std::string(k.str()), to_value(v));
  }
  return {};
}

}  // namespace gpulock::lock::reading
