#include "gpulock/probe/environment.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "gpulock/core/metadata.h"
#include "gpulock/core/name.h"
#include "gpulock/core/text.h"

namespace gpulock::probe {
namespace fs = std::filesystem;
namespace {

constexpr std::uintmax_t kMaxMetadataBytes = 16u << 20;

std::optional<std::string> slurp(const fs::path& path, std::uintmax_t limit = kMaxMetadataBytes) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec || size > limit) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string canonical_string(const fs::path& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

// Name and Version header values when the strict parser refuses the file.
std::pair<std::string, std::string> loose_name_version(std::string_view text) {
  std::string name, version;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    auto take = [&](std::string_view key, std::string& into) {
      if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && into.empty()) {
        std::string v = line.substr(key.size());
        auto b = v.find_first_not_of(" \t");
        into = b == std::string::npos ? "" : v.substr(b);
      }
    };
    take("Name:", name);
    take("Version:", version);
  }
  return {name, version};
}

// The first field of a RECORD line (CSV: a path with a comma or quote is quoted, "" escapes).
std::string record_path(std::string_view line) {
  if (line.empty() || line[0] != '"') return std::string(line.substr(0, line.find(',')));
  std::string out;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '"') {
      if (i + 1 < line.size() && line[i + 1] == '"') {
        out += '"';
        ++i;
        continue;
      }
      break;
    }
    out += line[i];
  }
  return out;
}

// "libcudnn.so.9", "libfoo.so", "libfoo-1a2b.so.1.2" (not "foo.so.py" or "x.sock").
bool is_shared_library(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto at = file.find(".so");
  while (at != std::string_view::npos) {
    std::string_view rest = file.substr(at + 3);
    if (rest.empty()) return true;
    if (rest[0] == '.' && rest.find_first_not_of(".0123456789") == std::string_view::npos) {
      return true;
    }
    at = file.find(".so", at + 1);
  }
  return false;
}

// The `*.dist-info` directories of a site-packages directory, sorted.
core::Result<std::vector<fs::path>> list_dist_infos(const fs::path& site) {
  std::error_code ec;
  std::vector<fs::path> dist_infos;
  for (fs::directory_iterator it(site, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.size() > 10 && name.ends_with(".dist-info") && it->is_directory(ec)) {
      dist_infos.push_back(it->path());
    }
  }
  if (ec) {
    return std::unexpected(core::make_error(
        core::ErrorCode::Io, fmt::format("cannot list it: {}", ec.message()), site.string()));
  }
  std::sort(dist_infos.begin(), dist_infos.end());
  return dist_infos;
}

// One distribution from its dist-info directory (METADATA, the shared libraries its RECORD
// lists), or nullopt when it is ignored (the reason goes to `warnings`).
std::optional<InstalledDistribution> read_distribution(const fs::path& di, const fs::path& site,
                                                       std::vector<std::string>& warnings) {
  InstalledDistribution d;
  d.dist_info = di;
  d.site_packages = site;
  auto text = slurp(di / "METADATA");
  if (!text) {
    warnings.push_back(fmt::format("{}: no readable METADATA; ignored", di.string()));
    return std::nullopt;
  }
  auto meta = core::CoreMetadata::parse(*text);
  if (meta) {
    d.display_name = meta->name;
    d.version = meta->version.to_string();
    // Keep the version as written when it is already canonical-equivalent.
    auto [_, written] = loose_name_version(*text);
    if (!written.empty()) d.version = written;
    d.requires_dist = meta->requires_dist;
  } else {
    auto [n, v] = loose_name_version(*text);
    if (n.empty() || v.empty()) {
      warnings.push_back(
          fmt::format("{}: METADATA without Name or Version; ignored", (di / "METADATA").string()));
      return std::nullopt;
    }
    d.display_name = n;
    d.version = v;
    warnings.push_back(fmt::format("{}: {}", (di / "METADATA").string(), meta.error().to_string()));
  }
  d.name = core::normalize_name(d.display_name);
  if (auto record = slurp(di / "RECORD", 256u << 20)) {
    d.has_record = true;
    std::istringstream in(*record);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::string path = record_path(line);
      if (!path.empty() && is_shared_library(path)) d.libraries.push_back(path);
    }
  }
  return d;
}

// nvidia/<folder>/lib, sorted by folder.
std::vector<LibraryDir> nvidia_library_dirs(const fs::path& site) {
  std::error_code ec;
  std::vector<LibraryDir> dirs;
  for (fs::directory_iterator it(site / "nvidia", ec), end; !ec && it != end; it.increment(ec)) {
    fs::path lib = it->path() / "lib";
    std::error_code ec2;
    if (fs::is_directory(lib, ec2)) dirs.push_back({lib, it->path().filename().string()});
  }
  std::sort(dirs.begin(), dirs.end(),
            [](const LibraryDir& a, const LibraryDir& b) { return a.folder < b.folder; });
  return dirs;
}

// What the installed torch was built with: its cuDNN pin and version.py's CUDA.
TorchBuild torch_build(const InstalledDistribution& torch) {
  TorchBuild t;
  t.version = torch.version;
  for (const auto& r : torch.requires_dist) {
    std::string n = r.normalized_name();
    if (!n.starts_with("nvidia-cudnn-") || r.specifier.size() != 1) continue;
    const auto& spec = *r.specifier.begin();
    if (spec.op() != core::Operator::Equal || spec.wildcard()) continue;
    t.cudnn_package = n;
    t.cudnn_pin = spec.operand();
    break;
  }
  if (auto text = slurp(torch.site_packages / "torch" / "version.py", 1u << 20)) {
    t.cuda = parse_torch_version_py_cuda(*text, &t.version_py_read);
  }
  return t;
}

}  // namespace

std::optional<std::string> parse_torch_version_py_cuda(std::string_view text, bool* found) {
  if (found != nullptr) *found = false;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    std::string_view l(line);
    if (!l.starts_with("cuda")) continue;
    l.remove_prefix(4);
    // `cuda = ...` or `cuda: Optional[str] = ...`
    if (!l.empty() && l[0] != ' ' && l[0] != ':' && l[0] != '=') continue;
    auto eq = l.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view v = l.substr(eq + 1);
    v = core::trim_right(core::trim_left(v, " \t"), " \t\r");
    if (found != nullptr) *found = true;
    if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
      return std::string(v.substr(1, v.size() - 2));
    }
    return std::nullopt;  // None
  }
  return std::nullopt;
}

const InstalledDistribution* PythonEnvironment::find(std::string_view normalized_name) const {
  for (const auto& d : distributions) {
    if (d.name == normalized_name) return &d;
  }
  return nullptr;
}

const InstalledDistribution* PythonEnvironment::owner_of(const fs::path& file) const {
  auto it = library_owners.find(canonical_string(file));
  return it == library_owners.end() ? nullptr : &distributions[it->second];
}

bool PythonEnvironment::contains(const fs::path& file) const {
  const std::string c = canonical_string(file);
  if (library_owners.contains(c)) return true;
  return std::any_of(canonical_roots.begin(), canonical_roots.end(),
                     [&](const std::string& root) { return c.starts_with(root); });
}

core::Result<PythonEnvironment> scan_environment(const std::vector<fs::path>& site_packages) {
  PythonEnvironment env;
  std::set<std::string> seen_roots;
  auto add_root = [&](const fs::path& p) {
    std::string c = canonical_string(p);
    if (c.empty() || c.back() != '/') c += '/';
    if (seen_roots.insert(c).second) env.canonical_roots.push_back(c);
  };
  for (const auto& site : site_packages) {
    std::error_code ec;
    if (!fs::is_directory(site, ec)) {
      return std::unexpected(
          core::make_error(core::ErrorCode::Io, "not a directory", site.string()));
    }
    env.site_packages.push_back(site);
    add_root(site);

    auto dist_infos = list_dist_infos(site);
    if (!dist_infos) return std::unexpected(std::move(dist_infos.error()));
    for (const auto& di : *dist_infos) {
      auto d = read_distribution(di, site, env.warnings);
      if (!d) continue;
      if (env.find(d->name) != nullptr) {
        env.warnings.push_back(
            fmt::format("{} is installed twice; {} {} in {} comes first and is the one used",
                        d->display_name, env.find(d->name)->display_name,
                        env.find(d->name)->version, env.find(d->name)->site_packages.string()));
        continue;
      }
      env.distributions.push_back(std::move(*d));
    }

    for (auto& d : nvidia_library_dirs(site)) {
      add_root(d.path);
      env.library_dirs.push_back(std::move(d));
    }
  }
  std::stable_sort(env.distributions.begin(), env.distributions.end(),
                   [](const auto& a, const auto& b) { return a.name < b.name; });

  for (std::size_t i = 0; i < env.distributions.size(); ++i) {
    const auto& d = env.distributions[i];
    for (const auto& lib : d.libraries) {
      env.library_owners.emplace(canonical_string(d.site_packages / lib), i);
    }
  }

  if (const auto* torch = env.find("torch")) env.torch = torch_build(*torch);
  return env;
}

}  // namespace gpulock::probe
