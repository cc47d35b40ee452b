// The mirror's store paths and URLs, and its manifest (DIR/manifest.toml): one [[entries]]
// table per (lock, file), written atomically, read back with the lock module's TOML reader.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <sys/file.h>

#include "gpulock/app/mirror.h"
#include "gpulock/index/url.h"
#include "gpulock/lock/lockfile.h"
#include "gpulock/lock/toml_document.h"
#include "gpulock/lock/toml_value.h"
#include "gpulock/sys/atomic_file.h"

#include "mirror_internal.h"

namespace gpulock::app {
namespace fs = std::filesystem;

std::string mirror_store_path(std::string_view sha256, std::string_view filename) {
  return fmt::format("files/sha256/{}/{}/{}", sha256.substr(0, 2), sha256, filename);
}

std::string mirror_file_url(std::string_view location, std::string_view sha256,
                            std::string_view filename) {
  std::string base(location);
  if (base.find("://") == std::string::npos) {
    std::error_code ec;
    fs::path abs = fs::absolute(fs::path(base), ec);
    base = index::path_to_file_url(ec ? base : abs.lexically_normal().string());
  }
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  return fmt::format("{}/files/sha256/{}/{}/{}", base, sha256.substr(0, 2), sha256,
                     index::percent_encode_path(filename));
}

namespace mirror_detail {

std::string manifest_path(const std::string& dir) {
  return (fs::path(dir) / "manifest.toml").string();
}

bool is_sha256(std::string_view text) noexcept {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool safe_component(std::string_view text) noexcept {
  if (text.empty() || text == "." || text == ".." || text.size() > 255) return false;
  return std::none_of(text.begin(), text.end(), [](char c) {
    return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

bool safe_tree(std::string_view tree) noexcept {
  if (tree == "simple" || tree == "whl" || tree == "whl/nightly") return true;
  if (!tree.starts_with("whl/")) return false;
  tree.remove_prefix(4);
  if (tree.starts_with("nightly/")) tree.remove_prefix(8);
  return safe_component(tree) && tree != "nightly";
}

std::string tree_for_index(std::string_view index_url) {
  std::string u(index_url);
  while (!u.empty() && u.back() == '/')
    u.pop_back();
  u += '/';
  auto at = u.rfind("/whl/");
  if (at == std::string::npos) return "simple";
  std::string tree = "whl/" + u.substr(at + 5);
  tree.pop_back();  // the '/' added above
  if (tree == "whl/") tree = "whl";
  return safe_tree(tree) ? tree : std::string("simple");
}

std::string now_rfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

MirrorLock::~MirrorLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

MirrorLock::MirrorLock(MirrorLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

core::Status MirrorLock::acquire(const std::string& dir,
                                 const std::function<void(const std::string&)>& on_wait) {
  constexpr auto kMaxWait = std::chrono::minutes(10);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return std::unexpected(core::make_error(core::ErrorCode::Io, ec.message(), dir));
  const std::string path = (fs::path(dir) / ".gpulock-mirror.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) {
    return std::unexpected(
        core::make_error(core::ErrorCode::Io,
                         fmt::format("cannot open the lock file: {}", std::strerror(errno)), path));
  }
  const auto deadline = std::chrono::steady_clock::now() + kMaxWait;
  bool told = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return std::unexpected(
          core::make_error(core::ErrorCode::Io,
                           fmt::format("cannot lock the mirror: {}", std::strerror(errno)), path));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::unexpected(
          core::make_error(core::ErrorCode::Io,
                           "another gpulock has held the mirror for ten minutes; gave up", path));
    }
    if (!told && on_wait) on_wait(path);
    told = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return {};
}

bool is_leftover(std::string_view name) noexcept {
  return name.ends_with(".part") ||
         (name.starts_with(".") && name.find(".tmp-") != std::string_view::npos);
}

std::vector<fs::path> store_leftovers(const std::string& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path store = fs::path(dir) / "files" / "sha256";
  for (fs::recursive_directory_iterator it(store, ec), end; !ec && it != end; it.increment(ec)) {
    if (it.depth() == 2 && is_leftover(it->path().filename().string())) out.push_back(it->path());
  }
  return out;
}

core::Result<std::vector<MirrorEntry>> lock_entries(const std::string& lock_path,
                                                    std::vector<std::string>& skipped) {
  auto file = lock::read_lock_file(lock_path);
  if (!file) return std::unexpected(file.error());
  std::vector<MirrorEntry> out;
  for (const auto& p : file->lock.packages) {
    for (const lock::FileEntry* f : p.files()) {
      auto sha = f->hashes.find("sha256");
      MirrorEntry e;
      e.lock = lock_path;
      e.project = p.name;
      e.version = p.version.value_or("");
      e.filename = f->filename();
      if (!f->url || sha == f->hashes.end() || !is_sha256(sha->second) ||
          !safe_component(e.filename) || !safe_component(e.project)) {
        skipped.push_back(
            fmt::format("{} {} ({}): no URL with a sha256", p.name, e.version, lock_path));
        continue;
      }
      e.sha256 = sha->second;
      e.url = *f->url;
      e.tree = tree_for_index(p.index.value_or(""));
      e.size = f->size.value_or(0);
      if (f->upload_time) e.upload_time = lock::to_toml_text(f->upload_time->to_utc());
      e.requires_python = p.requires_python.value_or("");
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace mirror_detail

namespace {

constexpr std::uint64_t kMaxManifestBytes = 256ull << 20;

std::string text_field(const lock::TomlTable& t, std::string_view key) {
  auto it = t.find(key);
  if (it == t.end()) return {};
  const auto* s = it->second.get_if<std::string>();
  return s ? *s : std::string();
}

core::Result<MirrorEntry> entry_from(const lock::TomlTable& t, const std::string& where,
                                     std::size_t i) {
  MirrorEntry e;
  e.lock = text_field(t, "lock");
  e.project = text_field(t, "project");
  e.version = text_field(t, "version");
  e.filename = text_field(t, "file");
  e.sha256 = text_field(t, "sha256");
  e.url = text_field(t, "url");
  e.tree = text_field(t, "tree");
  e.upload_time = text_field(t, "upload-time");
  e.requires_python = text_field(t, "requires-python");
  e.metadata_sha256 = text_field(t, "metadata-sha256");
  e.mirrored = text_field(t, "mirrored");
  if (auto it = t.find("size"); it != t.end()) {
    if (const auto* n = it->second.get_if<std::int64_t>(); n && *n >= 0)
      e.size = static_cast<std::uint64_t>(*n);
  }
  // Names that become paths are checked: the manifest is a file anyone could edit.
  if (!mirror_detail::is_sha256(e.sha256) || !mirror_detail::safe_component(e.filename) ||
      !mirror_detail::safe_component(e.project) || !mirror_detail::safe_tree(e.tree) ||
      (!e.metadata_sha256.empty() && !mirror_detail::is_sha256(e.metadata_sha256))) {
    return std::unexpected(core::make_error(
        core::ErrorCode::InvalidInput,
        fmt::format("entries[{}]: a missing or unsafe sha256, file, project or tree", i), where));
  }
  return e;
}

}  // namespace

core::Result<MirrorManifest> read_mirror_manifest(const std::string& dir) {
  const std::string path = mirror_detail::manifest_path(dir);
  std::error_code ec;
  if (!fs::exists(path, ec)) return MirrorManifest{};
  auto size = fs::file_size(path, ec);
  if (ec || size > kMaxManifestBytes) {
    return std::unexpected(core::make_error(
        core::ErrorCode::Io, ec ? ec.message() : std::string("the manifest is too large"), path));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    return std::unexpected(core::make_error(core::ErrorCode::Io, "cannot read", path));
  }
  auto doc = lock::parse_toml_document(text.str(), path);
  if (!doc) return std::unexpected(doc.error());
  MirrorManifest m;
  auto it = doc->find("entries");
  if (it == doc->end()) return m;
  const auto* arr = it->second.get_if<lock::TomlArray>();
  if (arr == nullptr) {
    return std::unexpected(
        core::make_error(core::ErrorCode::InvalidInput, "`entries` is not an array", path));
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const auto* t = (*arr)[i].get_if<lock::TomlTable>();
    if (t == nullptr) {
      return std::unexpected(core::make_error(core::ErrorCode::InvalidInput,
                                              fmt::format("entries[{}] is not a table", i), path));
    }
    auto e = entry_from(*t, path, i);
    if (!e) return std::unexpected(e.error());
    m.entries.push_back(std::move(*e));
  }
  return m;
}

core::Status write_mirror_manifest(const std::string& dir, const MirrorManifest& manifest) {
  std::vector<const MirrorEntry*> sorted;
  for (const auto& e : manifest.entries)
    sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](const MirrorEntry* a, const MirrorEntry* b) {
    return std::tie(a->lock, a->project, a->filename, a->tree) <
           std::tie(b->lock, b->project, b->filename, b->tree);
  });
  std::string out =
      "# gpulock mirror manifest: one entry per (lock, file). Written by `gpulock mirror`;\n"
      "# the pages under simple/ and whl/ are generated from it.\nschema = 1\n";
  using lock::toml_string;
  for (const MirrorEntry* e : sorted) {
    out += "\n[[entries]]\n";
    out += fmt::format("lock = {}\nproject = {}\nversion = {}\nfile = {}\nsha256 = {}\n",
                       toml_string(e->lock), toml_string(e->project), toml_string(e->version),
                       toml_string(e->filename), toml_string(e->sha256));
    out += fmt::format("size = {}\nurl = {}\ntree = {}\n", e->size, toml_string(e->url),
                       toml_string(e->tree));
    if (!e->upload_time.empty())
      out += fmt::format("upload-time = {}\n", toml_string(e->upload_time));
    if (!e->requires_python.empty())
      out += fmt::format("requires-python = {}\n", toml_string(e->requires_python));
    if (!e->metadata_sha256.empty())
      out += fmt::format("metadata-sha256 = {}\n", toml_string(e->metadata_sha256));
    out += fmt::format("mirrored = {}\n", toml_string(e->mirrored));
  }
  return mirror_detail::write_if_changed(mirror_detail::manifest_path(dir), out);
}

}  // namespace gpulock::app
