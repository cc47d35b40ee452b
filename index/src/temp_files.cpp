#include "temp_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "gpulock/index/interrupt.h"

namespace gpulock::index::detail {
namespace {

constexpr std::time_t kOrphanAge = 24 * 60 * 60;

struct Registry {
  std::mutex mu;
  std::set<std::string> paths;       // temporary files open now
  std::set<std::string> lock_files;  // <dir>/<owner>.lock per directory used
  std::vector<int> lock_fds;
  std::set<std::string> cleaned_dirs;  // stale files removed once per directory

  ~Registry() {
    // Normal exit: the lock files go (the temporary files went with their TempFile).
    for (const auto& p : lock_files)
      ::unlink(p.c_str());
    for (int fd : lock_fds)
      ::close(fd);
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

// "<digits>-<hex>" at the start of `name`, up to the first '.'; empty if `name` is not ours.
std::string_view owner_of(std::string_view name) {
  auto dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  std::string_view owner = name.substr(0, dot);
  auto dash = owner.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == owner.size()) return {};
  for (std::size_t i = 0; i < owner.size(); ++i) {
    char c = owner[i];
    bool ok = i < dash    ? (c >= '0' && c <= '9')
              : i == dash ? true
                          : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    if (!ok) return {};
  }
  return owner;
}

// Holds <dir>/<owner>.lock for this process: created under another name, locked, then renamed,
// so no cleaner ever sees it unlocked.
bool hold_lock(const std::string& dir) {
  Registry& r = registry();
  std::string lock = fmt::format("{}/{}.lock", dir, temp_owner());
  if (r.lock_files.count(lock)) return true;
  std::string making = fmt::format("{}/{}.locking", dir, temp_owner());
  int fd = ::open(making.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::rename(making.c_str(), lock.c_str()) != 0) {
    ::unlink(making.c_str());
    ::close(fd);
    return false;
  }
  r.lock_files.insert(lock);
  r.lock_fds.push_back(fd);
  return true;
}

}  // namespace

const std::string& temp_owner() {
  static const std::string owner = [] {
    std::random_device rd;
    return fmt::format("{}-{:08x}", static_cast<long>(::getpid()), rd());
  }();
  return owner;
}

int remove_stale_temp_files(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  std::vector<std::string> names;
  while (dirent* ent = ::readdir(d)) {
    std::string_view n = ent->d_name;
    if (!owner_of(n).empty()) names.emplace_back(n);
  }
  ::closedir(d);
  std::set<std::string> owners_with_lock;
  std::set<std::string> gone;
  for (const auto& n : names) {
    std::string_view owner = owner_of(n);
    if (n.size() != owner.size() + 5 || !std::string_view(n).ends_with(".lock")) continue;
    owners_with_lock.emplace(owner);
    if (owner == temp_owner()) continue;
    std::string path = dir + "/" + n;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      gone.emplace(owner);  // nobody holds it: its owner is gone
    }
    ::close(fd);
  }
  int removed = 0;
  const std::time_t now = std::time(nullptr);
  for (const auto& n : names) {
    std::string owner(owner_of(n));
    if (owner == temp_owner()) continue;
    std::string path = dir + "/" + n;
    bool remove = gone.count(owner) > 0;
    if (!remove && !owners_with_lock.count(owner)) {
      struct stat st {};
      remove = ::lstat(path.c_str(), &st) == 0 && now - st.st_mtime > kOrphanAge;
    }
    if (remove && !std::string_view(n).ends_with(".lock") && ::unlink(path.c_str()) == 0) ++removed;
  }
  // The lock files last, so a crash midway leaves the files findable.
  for (const auto& owner : gone) {
    if (::unlink(fmt::format("{}/{}.lock", dir, owner).c_str()) == 0) ++removed;
  }
  return removed;
}

int remove_stale_legacy_temp_files(const std::string& dir) {
  int removed = remove_stale_temp_files(dir);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return removed;
  std::vector<std::string> names;
  while (dirent* ent = ::readdir(d)) {
    std::string_view n = ent->d_name;
    if (n != "." && n != ".." && owner_of(n).empty()) names.emplace_back(n);
  }
  ::closedir(d);
  const std::time_t now = std::time(nullptr);
  for (const auto& n : names) {
    std::string path = dir + "/" + n;
    struct stat st {};
    // Files and links only (never followed); a directory someone put there is left alone.
    if (::lstat(path.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) continue;
    if (now - st.st_mtime > kOrphanAge && ::unlink(path.c_str()) == 0) ++removed;
  }
  ::rmdir(dir.c_str());  // only when empty
  return removed;
}

core::Result<TempFile> make_temp_file(const std::string& dir, std::string_view tag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.cleaned_dirs.insert(dir).second) remove_stale_temp_files(dir);
  if (!hold_lock(dir)) {
    return core::fail_at(
        core::ErrorCode::Io,
        fmt::format("cannot create a lock file for temporary files: {}", std::strerror(errno)),
        dir);
  }
  std::string templ = fmt::format("{}/{}.{}-XXXXXX", dir, temp_owner(), tag);
  int fd = ::mkostemp(templ.data(), O_CLOEXEC);
  if (fd < 0) {
    return core::fail_at(core::ErrorCode::Io,
                         fmt::format("cannot create a temporary file: {}", std::strerror(errno)),
                         dir);
  }
  r.paths.insert(templ);
  return TempFile(fd, templ);
}

TempFile::TempFile(TempFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {
  other.path_.clear();
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
  if (path_.empty()) return;
  ::unlink(path_.c_str());
  unregister_temp_path(path_);
}

void register_temp_path(const std::string& path) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.paths.insert(path);
}

void unregister_temp_path(const std::string& path) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.paths.erase(path);
}

}  // namespace gpulock::index::detail

namespace gpulock::index {

void remove_temporary_files() noexcept {
  auto& r = detail::registry();
  // A forced exit may find the registry locked by a thread it interrupts: try briefly, then go on
  // without the lock (the process is about to _exit; nothing else frees these sets then).
  bool locked = false;
  for (int i = 0; i < 50 && !(locked = r.mu.try_lock()); ++i)
    ::usleep(2000);
  for (const auto& p : r.paths)
    ::unlink(p.c_str());
  for (const auto& p : r.lock_files)
    ::unlink(p.c_str());
  if (locked) r.mu.unlock();
}

}  // namespace gpulock::index
