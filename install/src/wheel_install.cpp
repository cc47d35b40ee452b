// The native wheel installer (install/wheel_install.h), following pip 26's
// operations/install/wheel.py rule by rule (tests/install compares the two environments).
#include "gpulock/install/wheel_install.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/core/name.h"
#include "gpulock/core/sha256.h"
#include "gpulock/core/text.h"
#include "gpulock/index/hash.h"
#include "gpulock/install/record.h"
#include "gpulock/install/wheel_cache.h"

#include "entry_points.h"
#include "io_error.h"
#include "path_text.h"

namespace gpulock::install {
namespace fs = std::filesystem;
namespace {

using core::ErrorCode;
using detail::below;
using detail::console_specs;
using detail::EntryPoints;
using detail::io_error;
using detail::is_entrypoint_wrapper;
using detail::launcher;
using detail::read_entry_points;
using detail::safe_script_name;

// The process umask, read without changing it (/proc/self/status), else 022.
mode_t process_umask() {
  static const mode_t mask = [] {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("Umask:"))
        return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
    }
    return static_cast<mode_t>(022);
  }();
  return mask;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Makes room for a new file at `path`: an existing one (perhaps a link into the cache) is set
// aside in the journal, else unlinked. A directory there is an error.
core::Status clear_for_file(const fs::path& path, InstallJournal* journal) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (S_ISDIR(st.st_mode))
    return std::unexpected(io_error("cannot replace a directory with a file", path, EISDIR));
  if (journal != nullptr) return journal->set_aside(path);
  ::unlink(path.c_str());
  return {};
}

// Writes a new file (an existing one is set aside or unlinked first: clear_for_file).
core::Status write_new_file(const fs::path& path, std::string_view content, mode_t mode,
                            InstallJournal* journal) {
  if (auto s = clear_for_file(path, journal); !s) return s;
  // Noted before it is made: a sync killed right after is still undone (install_journal.cpp).
  if (journal != nullptr) journal->created(path);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return std::unexpected(io_error("cannot create", path, errno));
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      int err = errno;
      ::close(fd);
      return std::unexpected(io_error("cannot write", path, err));
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  if (::fchmod(fd, mode) != 0 || ::close(fd) != 0)
    return std::unexpected(io_error("cannot write", path, errno));
  return {};
}

// "sha256=<b64>" and the size of a text, as RECORD lists a generated file.
record::Row generated_row(std::string path, std::string_view content) {
  return {std::move(path), "sha256=" + record::hex_to_urlsafe_b64(core::sha256_hex(content)),
          std::to_string(content.size())};
}

// The wheel's one `*.dist-info` directory, which must name the wheel's project and version (PEP
// 427; pip refuses a wheel with several, or one for another project: a second dist-info would
// register files under another distribution's name and shadow it).
core::Result<std::string> find_dist_info(const fs::path& root, const core::WheelFilename& wheel) {
  std::error_code ec;
  std::vector<std::string> found;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.ends_with(".dist-info")) found.push_back(std::move(name));
  }
  if (ec) return std::unexpected(io_error("cannot read the unpacked wheel", root, ec));
  std::sort(found.begin(), found.end());
  const std::string wheel_id = fmt::format("{} {}", wheel.name, wheel.version.to_string());
  if (found.empty()) {
    return std::unexpected(core::make_error(
        ErrorCode::InvalidInput, fmt::format("the wheel {} has no .dist-info directory", wheel_id),
        root.string()));
  }
  if (found.size() > 1) {
    return std::unexpected(core::make_error(
        ErrorCode::InvalidInput,
        fmt::format("the wheel {} has {} .dist-info directories ({}); a wheel has exactly one, "
                    "and another would register files under another distribution's name",
                    wheel_id, found.size(), fmt::join(found, ", ")),
        root.string()));
  }
  const std::string& info = found.front();
  const std::string stem = info.substr(0, info.size() - std::string_view(".dist-info").size());
  const auto dash = stem.find('-');
  const std::string project = stem.substr(0, dash);
  auto version = dash == std::string::npos
                     ? core::Result<core::Version>(
                           std::unexpected(core::make_error(ErrorCode::InvalidInput, "no version")))
                     : core::Version::parse(stem.substr(dash + 1));
  if (core::normalize_name(project) != wheel.name || !version || !(*version == wheel.version)) {
    return std::unexpected(core::make_error(
        ErrorCode::InvalidInput,
        fmt::format("the wheel {} has the directory {}, which is not its own project and version",
                    wheel_id, info),
        root.string()));
  }
  return info;
}

std::string record_path(const fs::path& dest, const fs::path& lib_dir) {
  return dest.lexically_relative(lib_dir).generic_string();
}

// A relative path with no empty, `.` or `..` component: joined to a normal directory it is
// normal, and relative to it it is itself (no lexically_* pass needed, 20,000 times a torch).
bool plain_relative(std::string_view p) {
  if (p.empty() || p.front() == '/') return false;
  std::size_t start = 0;
  while (start <= p.size()) {
    auto end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    const auto part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

class WheelInstaller {
 public:
  WheelInstaller(const fs::path& unpacked, const core::WheelFilename& wheel,
                 const InstallScheme& scheme, const WheelInstallOptions& options)
      : root_(unpacked), wheel_(wheel), scheme_(scheme), options_(options) {}

  core::Result<InstalledWheel> run() {
    auto info = find_dist_info(root_, wheel_);
    if (!info) return std::unexpected(info.error());
    info_dir_ = *info;
    const std::string wheel_meta = read_text(root_ / info_dir_ / "WHEEL");
    bool purelib = false;
    std::istringstream in(wheel_meta);
    for (std::string line; std::getline(in, line);) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      if (core::iequals(core::trim(std::string_view(line).substr(0, colon), " \t"),
                        "Root-Is-Purelib")) {
        purelib =
            core::iequals(core::trim(std::string_view(line).substr(colon + 1), " \t\r"), "true");
      }
    }
    lib_dir_ = purelib ? scheme_.purelib : scheme_.platlib;
    lib_normal_ = lib_dir_ == lib_dir_.lexically_normal() && !lib_dir_.native().ends_with('/');
    pyvenv_cfg_ = (scheme_.prefix / "pyvenv.cfg").lexically_normal();
    scripts_normal_ = scheme_.scripts.lexically_normal();
    // A plain path below lib_dir_ can be neither unless lib_dir_ holds them (a --prefix-like
    // scheme): check_shadowing is then skipped for the wheel's plain files.
    const auto inside_lib = [&](const fs::path& p) {
      const auto rel = p.lexically_relative(lib_dir_.lexically_normal());
      return !rel.empty() && *rel.begin() != "..";
    };
    plain_may_shadow_ = !lib_normal_ || inside_lib(pyvenv_cfg_) || inside_lib(scripts_normal_);
    eps_ = read_entry_points(read_text(root_ / info_dir_ / "entry_points.txt"));
    // A cache entry's manifest (wheel_cache.h), which the entry was checked against.
    if (auto manifest = read_entry_manifest(root_)) entry_stats_ = std::move(*manifest);
    if (auto s = install_files(); !s) return std::unexpected(s.error());
    if (auto s = write_scripts(); !s) return std::unexpected(s.error());
    if (auto s = write_metadata(); !s) return std::unexpected(s.error());
    result_.dist_info = lib_dir_ / info_dir_;
    return result_;
  }

 private:
  core::Status ensure_dir(const fs::path& dir) {
    return ensure_dir(std::string_view(dir.native()));
  }
  core::Status ensure_dir(std::string_view dir_text) {
    if (made_.contains(dir_text)) return {};
    const fs::path dir(dir_text);
    // The directories this wheel makes hold only what it puts there (fresh_).
    std::vector<std::string> missing;
    for (fs::path p = dir; !p.empty() && p != p.parent_path(); p = p.parent_path()) {
      struct stat st {};
      if (::lstat(p.c_str(), &st) == 0 || errno != ENOENT) break;
      missing.push_back(p.native());
    }
    if (options_.journal != nullptr) {
      if (auto s = options_.journal->make_dirs(dir); !s) return s;
    } else {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return std::unexpected(io_error("cannot create the directory", dir, ec));
    }
    made_.insert(dir.native());
    for (auto& m : missing)
      fresh_.insert(std::move(m));
    return {};
  }

  // Does `rel` go to lib_dir_ / rel, already normal?
  bool is_lib_plain(const std::string& rel) const {
    const auto slash = rel.find('/');
    const bool data =
        slash != std::string::npos && std::string_view(rel).substr(0, slash).ends_with(".data");
    return lib_normal_ && !data && plain_relative(rel);
  }

  // Where an archive path goes; empty: skipped (an entry point wrapper).
  core::Result<fs::path> destination(const std::string& rel, bool& script) {
    script = false;
    const auto slash = rel.find('/');
    const std::string top = rel.substr(0, slash);
    if (slash == std::string::npos || !top.ends_with(".data")) return lib_dir_ / rel;
    const auto second = rel.find('/', slash + 1);
    if (second == std::string::npos) {
      return std::unexpected(core::make_error(
          ErrorCode::InvalidInput,
          fmt::format("unexpected file in {}: '{}'; .data directory contents should be named "
                      "like '<scheme key>/<path>'",
                      wheel_.name, rel)));
    }
    const std::string key = rel.substr(slash + 1, second - slash - 1);
    const std::string sub = rel.substr(second + 1);
    if (key == "purelib") return scheme_.purelib / sub;
    if (key == "platlib") return scheme_.platlib / sub;
    if (key == "headers") return scheme_.headers / wheel_.name / sub;
    if (key == "data") return scheme_.data / sub;
    if (key == "scripts") {
      if (is_entrypoint_wrapper(fs::path(sub).filename().string(), eps_)) return fs::path();
      script = true;
      return scheme_.scripts / sub;
    }
    return std::unexpected(core::make_error(
        ErrorCode::InvalidInput,
        fmt::format("unknown scheme key used in {}: {} (for file '{}'); valid keys are data, "
                    "headers, platlib, purelib, scripts",
                    wheel_.name, key, rel)));
  }

  core::Status install_files() {
    std::error_code ec;
    std::vector<std::string> files;
    if (!entry_stats_.empty()) {
      // A cache entry holds the files of its manifest and nothing else (checked before).
      files.reserve(entry_stats_.size());
      for (const auto& [path, size_mtime] : entry_stats_)
        files.push_back(path);
    } else {
      for (fs::recursive_directory_iterator it(root_, ec), end; !ec && it != end;
           it.increment(ec)) {
        if (it->is_regular_file(ec)) files.push_back(below(it->path(), root_));
      }
      if (ec) return std::unexpected(io_error("cannot read the unpacked wheel", root_, ec));
    }
    std::sort(files.begin(), files.end());
    const std::string own_record = info_dir_ + "/RECORD";
    for (const auto& rel : files) {
      if (rel == own_record || rel == kEntryManifest) continue;  // rewritten below; the cache's
      if (auto s = check_reserved(rel); !s) return s;
      bool script = false;
      auto dest = destination(rel, script);
      if (!dest) return std::unexpected(dest.error());
      if (dest->empty()) continue;
      // Normal already when it is lib_dir_ / a plain path (nearly every file), whose parent is
      // then its text up to the last '/'.
      const bool lib_plain = is_lib_plain(rel);
      const std::string other_parent = lib_plain ? std::string() : dest->parent_path().native();
      const std::string_view parent =
          lib_plain ? std::string_view(dest->native()).substr(0, dest->native().rfind('/'))
                    : std::string_view(other_parent);
      if (auto s = ensure_dir(parent); !s) return s;
      const fs::path norm = lib_plain ? *dest : dest->lexically_normal();
      if (!lib_plain || plain_may_shadow_) {
        if (auto s = check_shadowing(norm, rel); !s) return s;
      }
      const fs::path from = root_ / rel;
      bool same = false;
      if (auto s = check_owner(from, norm, rel, same); !s) return s;
      // Another distribution's file with these very bytes (the empty nvidia/__init__.py of
      // every nvidia-* wheel) is kept as it is: its owner's record of its size and mtime stays
      // true.
      same = same && !script;
      bool changed = false;
      if (script) {
        auto s = install_script(from, *dest, changed);
        if (!s) return s;
      }
      const std::string rp = lib_plain ? rel : record_path(*dest, lib_dir_);
      if (!changed && !same) {
        // Replaced, never written through (pip unlinks too). A directory this wheel made holds
        // nothing in the way: a plain path is one of its own files, each linked once.
        // Another path of the wheel may name the same place (`.data/purelib/x` and `x`): a
        // directory that receives one is no longer known to be clear.
        if (!lib_plain) fresh_.erase(std::string(parent));
        const bool clear = !lib_plain || !fresh_.contains(parent);
        if (clear) {
          if (auto s = clear_for_file(*dest, options_.journal); !s) return s;
        }
        if (options_.journal != nullptr) options_.journal->created(*dest);
        auto mode = link_dirs_.link(from, *dest, options_.link_mode);
        if (!mode) return std::unexpected(mode.error());
        // A hard link is the entry's file: its size and mtime are the ones the entry's
        // manifest holds, checked before this install (write_metadata's record).
        if (*mode == sys::LinkMode::Hardlink) {
          if (auto e = entry_stats_.find(rel); e != entry_stats_.end()) linked_[rp] = e->second;
        }
        if (*mode == sys::LinkMode::Copy || *mode == sys::LinkMode::Clone) {
          // The cache's files are read-only; a copy is the environment's own, as pip makes it.
          struct stat st {};
          if (::stat(dest->c_str(), &st) == 0) {
            ::chmod(dest->c_str(),
                    ((st.st_mode & 0111) != 0 ? 0777 : 0666) & ~process_umask() & 07777);
          }
        }
        if (*mode == sys::LinkMode::Hardlink || *mode == sys::LinkMode::Clone ||
            *mode == sys::LinkMode::Symlink)
          ++result_.linked;
      }
      installed_[rel] = rp;
      if (changed) changed_.insert(rp);
    }
    return {};
  }

  // pip's fix_script: `#!python` becomes the interpreter (a new file, so never the cache's).
  core::Status install_script(const fs::path& from, const fs::path& dest, bool& changed) {
    std::string text = read_text(from);
    if (!text.starts_with("#!python")) return {};
    auto nl = text.find('\n');
    std::string rest = nl == std::string::npos ? std::string() : text.substr(nl + 1);
    struct stat st {};
    ::stat(from.c_str(), &st);
    changed = true;
    return write_new_file(dest, "#!" + scheme_.python + "\n" + rest,
                          (st.st_mode & 0111 ? 0777 : 0666) & ~process_umask(), options_.journal);
  }

  core::Status write_scripts() {
    auto make = [&](const std::vector<std::pair<std::string, std::string>>& specs) -> core::Status {
      for (const auto& [name, value] : specs) {
        if (!safe_script_name(name)) {
          return std::unexpected(core::make_error(
              ErrorCode::InvalidInput,
              fmt::format("invalid script entry point name '{}': the script would be installed "
                          "outside the scripts directory ({})",
                          name, scheme_.scripts.string())));
        }
        auto text = launcher(name, value, scheme_.python);
        if (!text) return std::unexpected(text.error());
        if (auto s = ensure_dir(scheme_.scripts); !s) return s;
        const fs::path path = scheme_.scripts / name;
        if (auto s = check_reserved(name); !s) return s;
        if (auto s = check_shadowing(path.lexically_normal(), "entry point " + name); !s) return s;
        bool same = false;
        if (auto s = check_owner({}, path.lexically_normal(), "entry point " + name, same); !s)
          return s;
        // distlib's set_mode: the new file's mode plus r-x for everyone.
        if (auto s = write_new_file(path, *text, ((0666 & ~process_umask()) | 0555) & 07777,
                                    options_.journal);
            !s)
          return s;
        generated_.push_back(generated_row(record_path(path, lib_dir_), *text));
        result_.scripts.push_back(name);
      }
      return {};
    };
    if (auto s = make(console_specs(eps_.console, scheme_.python_xy)); !s) return s;
    return make(eps_.gui);
  }

  core::Status write_metadata() {
    const fs::path info = lib_dir_ / info_dir_;
    if (auto s = ensure_dir(info); !s) return s;
    const mode_t mode = 0666 & ~process_umask();
    auto generate = [&](const std::string& name, std::string_view content) -> core::Status {
      if (auto s = write_new_file(info / name, content, mode, options_.journal); !s) return s;
      generated_.push_back(generated_row(info_dir_ + "/" + name, content));
      return {};
    };
    if (auto s = generate("INSTALLER", "gpulock\n"); !s) return s;
    if (options_.direct_url_json) {
      if (auto s = generate("direct_url.json", *options_.direct_url_json); !s) return s;
    }
    if (options_.requested) {
      if (auto s = generate("REQUESTED", ""); !s) return s;
    }
    // get_csv_rows_for_installed: the wheel's rows with their installed paths (rehashed when
    // changed), the generated files, then installed files the wheel's RECORD did not list.
    std::vector<record::Row> rows;
    auto old = record::read(root_ / info_dir_);
    for (auto& row : old.value_or(std::vector<record::Row>{})) {
      auto it = installed_.find(row.path);
      if (it != installed_.end()) {
        row.path = it->second;
        installed_.erase(it);
      }
      if (changed_.contains(row.path)) {
        auto d = index::sha256_file((lib_dir_ / row.path).string());
        if (!d) return std::unexpected(d.error());
        row.hash = "sha256=" + record::hex_to_urlsafe_b64(d->sha256);
        row.size = std::to_string(d->size);
      }
      rows.push_back(std::move(row));
    }
    for (auto& g : generated_)
      rows.push_back(std::move(g));
    // gpulock's own record, listed like RECORD itself (no hash) so that `pip uninstall` removes
    // it with the rest.
    const std::string stat_row = info_dir_ + "/" + std::string(record::kStatFile);
    rows.push_back({stat_row, "", ""});
    for (const auto& [from, to] : installed_)
      rows.push_back({to, "", ""});
    std::sort(rows.begin(), rows.end(), [](const record::Row& a, const record::Row& b) {
      return std::tie(a.path, a.hash, a.size) < std::tie(b.path, b.hash, b.size);
    });
    result_.files = rows.size();
    if (auto s = write_new_file(info / "RECORD", record::write(rows), mode, options_.journal); !s)
      return s;
    // Each installed file's size and mtime as they are now (record.h, kStatFile): what the
    // next sync and `check --env` compare with, without hashing.
    std::vector<record::StatRow> stats;
    for (const auto& row : rows) {
      if (row.path == stat_row) continue;
      const fs::path file = lib_normal_ && plain_relative(row.path)
                                ? lib_dir_ / row.path
                                : (lib_dir_ / row.path).lexically_normal();
      if (auto l = linked_.find(row.path); l != linked_.end()) {
        stats.push_back({row.path, l->second.first, l->second.second});
      } else {
        struct stat st {};
        if (::lstat(file.c_str(), &st) != 0) continue;
        stats.push_back({row.path, static_cast<std::uint64_t>(st.st_size), record::mtime_ns(st)});
      }
      if (options_.owners != nullptr) (*options_.owners)[file.string()] = wheel_.name;
    }
    return write_new_file(info / std::string(record::kStatFile), record::write_stats(stats), mode,
                          options_.journal);
  }

  // `.gpulock-*` names are gpulock's own (the sync's stash and journal, the stat record): a
  // wheel that ships one anywhere could plant an "interrupted sync" for the next run to replay.
  core::Status check_reserved(const std::string& rel) const {
    if (rel.starts_with(".gpulock-") || rel.find("/.gpulock-") != std::string::npos) {
      return std::unexpected(core::make_error(
          ErrorCode::InvalidInput,
          fmt::format("the wheel {} ships '{}': names starting with .gpulock- are reserved for "
                      "gpulock's own files",
                      wheel_.name, rel)));
    }
    return {};
  }

  // The environment's own files: its interpreter links and pyvenv.cfg.
  // `dest` is lexically normal.
  core::Status check_shadowing(const fs::path& dest, const std::string& what) const {
    const std::string name = dest.filename().string();
    bool own = dest == pyvenv_cfg_;
    if (dest.parent_path() == scripts_normal_) {
      std::string_view n = name;
      if (n.starts_with("python")) {
        n.remove_prefix(6);
        if (n.ends_with('t') || n.ends_with('w')) n.remove_suffix(1);
        own = own || std::all_of(n.begin(), n.end(),
                                 [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
      }
      own = own || name == "activate" || name.starts_with("activate.") || name == "Activate.ps1";
    }
    if (!own) return {};
    return std::unexpected(
        core::make_error(ErrorCode::InvalidInput,
                         fmt::format("the wheel {} would replace the environment's own {} ({})",
                                     wheel_.name, dest.string(), what)));
  }

  // A file another installed distribution owns is not overwritten with other bytes (pip
  // overwrites silently; a wheel could replace another package's module). `same`: it is
  // another's, with the bytes of `from`.
  core::Status check_owner(const fs::path& from, const fs::path& dest, const std::string& what,
                           bool& same) {
    same = false;
    if (options_.owners == nullptr) return {};
    auto it = options_.owners->find(dest.native());  // `dest` is lexically normal
    if (it == options_.owners->end() || it->second == wheel_.name) return {};
    if (!from.empty() && same_bytes(from, dest)) {
      same = true;
      return {};
    }
    return std::unexpected(core::make_error(
        ErrorCode::InvalidInput,
        fmt::format("the wheel {} would overwrite {} ({}), a file of {}, with other bytes",
                    wheel_.name, dest.string(), what, it->second)));
  }

  static bool same_bytes(const fs::path& a, const fs::path& b) {
    struct stat sa {
    }, sb{};
    if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
    if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) || sa.st_size != sb.st_size) return false;
    if (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino) return true;
    auto da = index::sha256_file(a.string());
    auto db = index::sha256_file(b.string());
    return da && db && da->sha256 == db->sha256;
  }

  fs::path root_;
  const core::WheelFilename& wheel_;
  const InstallScheme& scheme_;
  const WheelInstallOptions& options_;
  std::string info_dir_;
  fs::path lib_dir_;
  EntryPoints eps_;
  sys::LinkDirs link_dirs_;
  std::set<std::string, std::less<>> made_;
  std::set<std::string, std::less<>> fresh_;  // directories this wheel made
  bool plain_may_shadow_ = true;  // lib_dir_ holds pyvenv.cfg or the scripts (check_shadowing)
  EntryManifest entry_stats_;     // the entry's manifest, by archive path
  EntryManifest linked_;          // hard-linked files' size and mtime, by RECORD path
  bool lib_normal_ = false;       // lib_dir_ is lexically normal (no trailing '/')
  fs::path pyvenv_cfg_, scripts_normal_;          // lexically normal
  std::map<std::string, std::string> installed_;  // archive path -> RECORD path
  std::set<std::string> changed_;
  std::vector<record::Row> generated_;
  InstalledWheel result_;
};

}  // namespace

core::Result<InstalledWheel> install_unpacked_wheel(const fs::path& unpacked,
                                                    const core::WheelFilename& wheel,
                                                    const InstallScheme& scheme,
                                                    const WheelInstallOptions& options) {
  return WheelInstaller(unpacked, wheel, scheme, options).run();
}

}  // namespace gpulock::install
