// The sync's journal (issue 25): what a sync set aside and wrote, kept in memory for a rollback
// in process and on disk (`<stash>/journal`) for one after the process was killed. Each entry
// is written before the change it describes and each undo after it is done, so replaying the
// journal newest first, skipping what was undone, puts the environment back whenever the sync
// stopped.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "gpulock/core/sha256.h"
#include "gpulock/install/wheel_install.h"
#include "gpulock/sys/atomic_file.h"
#include "gpulock/sys/env.h"

#include "io_error.h"

namespace gpulock::install {
namespace fs = std::filesystem;
namespace {

using detail::io_error;

constexpr std::string_view kJournal = "journal";
constexpr std::string_view kStashPrefix = ".gpulock-stash-";
constexpr std::string_view kHeader = "gpulock-install-journal 2 ";

// A random token (32 hex digits) that ties a journal to its record in the registry.
std::string random_token() {
  thread_local std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i)
    out += fmt::format("{:08x}", static_cast<std::uint32_t>(rd()));
  return out;
}

// The registry file of a stash: named by the sha256 of its real path.
fs::path registry_file(const fs::path& registry, const fs::path& stash) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(stash, ec);
  if (ec) real = stash.lexically_normal();
  return registry / core::sha256_hex(real.string());
}

std::string read_small(const fs::path& p, std::size_t max) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::string out(max, '\0');
  in.read(out.data(), static_cast<std::streamsize>(max));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

// A path on one journal line: tab, newline and backslash escaped.
std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
  }
  return out;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t w = ::write(fd, text.data(), text.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(w));
  }
}

void note_undone(int fd, std::size_t index) {
  if (fd >= 0) write_all(fd, fmt::format("U\t{}\n", index));
}

bool path_exists(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

// Undoes one entry; false when a set-aside file could not be put back.
bool undo(const InstallJournal::Entry& e) {
  using Kind = InstallJournal::Kind;
  switch (e.kind) {
    case Kind::File:
      ::unlink(e.path.c_str());
      return true;
    case Kind::Dir:
      ::rmdir(e.path.c_str());
      return true;
    case Kind::Aside:
      break;
  }
  // Noted before the rename: a file that never reached the stash is still in place.
  if (!path_exists(e.stashed)) return true;
  std::error_code ec;
  fs::create_directories(e.path.parent_path(), ec);
  if (::rename(e.stashed.c_str(), e.path.c_str()) == 0) return true;
  if (errno != EXDEV) return false;
  ::unlink(e.path.c_str());
  return static_cast<bool>(sys::copy_file(e.stashed, e.path));
}

// "file 2" -> (File, 2).
std::pair<InstallJournal::Kind, std::size_t> kill_point() {
  auto v = sys::env_value("GPULOCK_TEST_INSTALL_KILL");
  if (!v) return {InstallJournal::Kind::File, 0};
  std::string_view text = *v;
  auto space = text.find(' ');
  if (space == std::string_view::npos) return {InstallJournal::Kind::File, 0};
  std::string_view kind = text.substr(0, space);
  std::size_t n = 0;
  for (char c : text.substr(space + 1)) {
    if (c < '0' || c > '9') return {InstallJournal::Kind::File, 0};
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  if (kind == "dir") return {InstallJournal::Kind::Dir, n};
  if (kind == "aside") return {InstallJournal::Kind::Aside, n};
  return {InstallJournal::Kind::File, n};
}

}  // namespace

InstallJournal::InstallJournal(std::vector<fs::path> roots, fs::path registry)
    : roots_(std::move(roots)), registry_(std::move(registry)) {
  std::tie(kill_kind_, kill_at_) = kill_point();
}

InstallJournal::~InstallJournal() {
  if (!done_) rollback();
  if (journal_fd_ >= 0) ::close(journal_fd_);
}

core::Status InstallJournal::make_stash() {
  if (!stash_.empty()) return {};
  // In the first root that takes it (the prefix, else site-packages for a --system scheme
  // whose prefix is not writable).
  int err = ENOENT;
  for (const auto& root : roots_) {
    std::string name = (root / (std::string(kStashPrefix) + "XXXXXX")).string();
    if (::mkdtemp(name.data()) != nullptr) {
      stash_ = name;
      break;
    }
    err = errno;
  }
  if (stash_.empty()) {
    return std::unexpected(io_error("cannot make the stash directory",
                                    roots_.empty() ? fs::path() : roots_.front(), err));
  }
  const fs::path journal = stash_ / kJournal;
  journal_fd_ = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (journal_fd_ < 0) return std::unexpected(io_error("cannot create", journal, errno));
  // Held until this process ends: a journal whose lock can be taken is a dead run's.
  ::flock(journal_fd_, LOCK_EX);
  const std::string token = random_token();
  // The record first (outside the environment, where no wheel writes): a journal without one
  // is never replayed.
  if (!registry_.empty()) {
    std::error_code ec;
    fs::create_directories(registry_, ec);
    record_ = registry_file(registry_, stash_);
    sys::AtomicWriteOptions options;
    auto written =
        sys::write_file_atomically(record_, token + "\n" + stash_.string() + "\n", options);
    if (!written) return std::unexpected(written.error());
  }
  write_all(journal_fd_, std::string(kHeader) + token + "\n");
  return {};
}

core::Status InstallJournal::note(Kind kind, const fs::path& path, const fs::path& stashed) {
  auto s = make_stash();
  if (s) {
    if (kill_at_ != 0 && kind == kill_kind_ && ++kill_count_ == kill_at_) {
      ::kill(::getpid(), SIGKILL);
    }
    write_all(journal_fd_, fmt::format("{}\t{}\t{}\n", static_cast<char>(kind),
                                       escape(path.native()), escape(stashed.native())));
  }
  // Kept in memory even when the journal cannot be written: the rollback in process undoes it.
  // As text: a path object copied splits into a list of components (a torch's 12,000 files).
  log_.push_back({kind, path.native(), stashed.native()});
  return s;
}

core::Status InstallJournal::set_aside(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (auto s = make_stash(); !s) return s;
  const fs::path stashed = stash_ / std::to_string(next_++);
  if (auto s = note(Kind::Aside, path, stashed); !s) return s;
  if (::rename(path.c_str(), stashed.c_str()) != 0) {
    const int err = errno;
    // Another file system (a --system scheme): a regular file is copied (under another name
    // until complete, so the stash never holds half a file), then unlinked.
    if (err != EXDEV || !S_ISREG(st.st_mode))
      return std::unexpected(io_error("cannot set aside", path, err));
    const fs::path part = stashed.string() + ".part";
    if (auto s = sys::copy_file(path, part); !s) return s;
    if (::rename(part.c_str(), stashed.c_str()) != 0)
      return std::unexpected(io_error("cannot set aside", path, errno));
    if (::unlink(path.c_str()) != 0)
      return std::unexpected(io_error("cannot set aside", path, errno));
  }
  return {};
}

void InstallJournal::created(const fs::path& path) {
  // A journal that cannot be written fails the set_aside or make_dirs before it.
  (void)note(Kind::File, path);
}

core::Status InstallJournal::make_dirs(const fs::path& dir) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (auto s = note(Kind::Dir, *it); !s) return s;
  }
  fs::create_directories(dir, ec);
  if (ec) return std::unexpected(io_error("cannot create the directory", dir, ec.value()));
  return {};
}

std::vector<std::string> InstallJournal::rollback() {
  std::vector<std::string> lost;
  for (std::size_t i = log_.size(); i-- > 0;) {
    if (undo({log_[i].kind, log_[i].path, log_[i].stashed})) {
      note_undone(journal_fd_, i);
    } else {
      lost.push_back(log_[i].path);
    }
  }
  log_.clear();
  if (!stash_.empty() && lost.empty()) {
    std::error_code ec;
    fs::remove_all(stash_, ec);
    if (!record_.empty()) ::unlink(record_.c_str());
  }
  done_ = true;
  return lost;
}

void InstallJournal::commit() {
  // The journal first: a stash without one is a finished sync's, deleted by the next.
  if (!stash_.empty()) ::unlink((stash_ / kJournal).c_str());
  std::error_code ec;
  if (!stash_.empty()) fs::remove_all(stash_, ec);
  if (!record_.empty()) ::unlink(record_.c_str());
  log_.clear();
  done_ = true;
}

std::vector<fs::path> find_interrupted_syncs(const std::vector<fs::path>& roots) {
  std::vector<fs::path> out;
  for (const auto& root : roots) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->path().filename().string().starts_with(kStashPrefix)) continue;
      if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
      if (std::find(out.begin(), out.end(), it->path()) == out.end()) out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// An open directory, closed with the object.
struct Dir {
  int fd = -1;
  Dir() = default;
  explicit Dir(int f) : fd(f) {}
  Dir(Dir&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Dir& operator=(Dir&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  ~Dir() {
    if (fd >= 0) ::close(fd);
  }
};

// The directory that holds `path`, opened from the one of `roots` it lies under by walking one
// component at a time with O_NOFOLLOW (a symbolic link anywhere on the way, planted before or
// during the walk, fails it), and the leaf name. `path` must be absolute and normal. `create`:
// missing directories on the way are made. An fd of -1: not under any root, or not reachable.
Dir open_parent_beneath(const fs::path& path, const std::vector<fs::path>& roots, bool create,
                        std::string& leaf) {
  if (!path.is_absolute() || path.lexically_normal() != path || !path.has_filename()) return {};
  for (const auto& root : roots) {
    const fs::path rel = path.lexically_relative(root.lexically_normal());
    if (rel.empty() || rel == "." || *rel.begin() == "..") continue;
    Dir dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.fd < 0) return {};
    const auto last = std::prev(rel.end());
    for (auto it = rel.begin(); it != last; ++it) {
      const std::string part = it->string();
      if (part.empty() || part == "." || part == "..") return {};
      int next = ::openat(dir.fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0 && errno == ENOENT && create) {
        if (::mkdirat(dir.fd, part.c_str(), 0777) != 0 && errno != EEXIST) return {};
        next = ::openat(dir.fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (next < 0) return {};
      dir = Dir(next);
    }
    leaf = last->string();
    if (leaf == "." || leaf == "..") return {};
    return dir;
  }
  return {};
}

enum class Undo { Done, Outside, Failed };

// undo(), for a journal read back from disk: every path resolved beneath `roots` (the set-aside
// copy beneath the stash) without following a symbolic link.
Undo undo_beneath(const InstallJournal::Entry& e, const std::vector<fs::path>& roots,
                  const fs::path& stash, bool& was_there) {
  using Kind = InstallJournal::Kind;
  std::string leaf;
  was_there = false;
  if (e.kind == Kind::File || e.kind == Kind::Dir) {
    Dir parent = open_parent_beneath(e.path, roots, false, leaf);
    if (parent.fd < 0) {
      // A parent that is missing is fine (nothing to undo); one that is a link or outside is not.
      if (e.path.is_absolute() && e.path.lexically_normal() == e.path) {
        for (const auto& root : roots) {
          const fs::path rel = e.path.lexically_relative(root.lexically_normal());
          if (rel.empty() || *rel.begin() == "..") continue;
          struct stat st {};
          if (::lstat(e.path.parent_path().c_str(), &st) != 0 && errno == ENOENT) return Undo::Done;
        }
      }
      return Undo::Outside;
    }
    struct stat st {};
    was_there = ::fstatat(parent.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    ::unlinkat(parent.fd, leaf.c_str(), e.kind == Kind::Dir ? AT_REMOVEDIR : 0);
    return Undo::Done;
  }
  // Aside: the stash's own entry, renamed back into place.
  if (e.stashed.parent_path() != stash) return Undo::Outside;
  std::string from_leaf;
  Dir from = open_parent_beneath(e.stashed, {stash}, false, from_leaf);
  if (from.fd < 0) return Undo::Outside;
  struct stat st {};
  if (::fstatat(from.fd, from_leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    // Noted before the rename: a file that never reached the stash is still in place.
    return Undo::Done;
  }
  was_there = true;
  Dir to = open_parent_beneath(e.path, roots, true, leaf);
  if (to.fd < 0) return Undo::Outside;
  if (::renameat(from.fd, from_leaf.c_str(), to.fd, leaf.c_str()) == 0) return Undo::Done;
  if (errno != EXDEV || !S_ISREG(st.st_mode)) return Undo::Failed;
  // Another file system (a --system scheme's stash): copied back, then unlinked.
  ::unlinkat(to.fd, leaf.c_str(), 0);
  const int in = ::openat(from.fd, from_leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  const int out =
      ::openat(to.fd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
               st.st_mode & 07777);
  bool ok = in >= 0 && out >= 0;
  char buf[1 << 16];
  while (ok) {
    const ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    std::string_view chunk(buf, static_cast<std::size_t>(n));
    while (ok && !chunk.empty()) {
      const ssize_t w = ::write(out, chunk.data(), chunk.size());
      if (w < 0 && errno == EINTR) continue;
      ok = w > 0;
      if (ok) chunk.remove_prefix(static_cast<std::size_t>(w));
    }
  }
  if (in >= 0) ::close(in);
  if (out >= 0 && ::close(out) != 0) ok = false;
  if (ok) ::unlinkat(from.fd, from_leaf.c_str(), 0);
  return ok ? Undo::Done : Undo::Failed;
}

}  // namespace

InterruptedSync roll_back_interrupted(const fs::path& stash, const fs::path& registry,
                                      const std::vector<fs::path>& roots) {
  InterruptedSync result;
  result.stash = stash;
  std::error_code ec;
  const fs::path journal = stash / kJournal;
  const int fd = ::open(journal.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    // No journal: a finished sync's stash (its commit deletes the journal first), when the
    // registry still names it; anything else is not ours to delete.
    const fs::path record = registry_file(registry, stash);
    if (read_small(record, 4096).find(stash.string()) != std::string::npos) {
      result.journal = false;
      fs::remove_all(stash, ec);
      ::unlink(record.c_str());
    } else {
      result.foreign = true;
    }
    return result;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat jst {};
  if (::fstat(fd, &jst) != 0 || !S_ISREG(jst.st_mode) || jst.st_size > (64 << 20)) {
    result.foreign = true;
    return result;
  }
  // Written by gpulock: its token is in the registry, outside the environment.
  std::string all = read_small(journal, static_cast<std::size_t>(jst.st_size));
  const auto first_nl = all.find('\n');
  const std::string header = all.substr(0, first_nl);
  const fs::path record = registry_file(registry, stash);
  const std::string recorded = read_small(record, 4096);
  if (!header.starts_with(kHeader) || header.size() <= kHeader.size() ||
      recorded.substr(0, recorded.find('\n')) != header.substr(kHeader.size())) {
    result.foreign = true;
    return result;
  }
  // The run that writes it holds its lock: a live sync's journal is not touched.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    result.live = true;
    return result;
  }
  // A last line with no newline was cut short by the kill: the change it announced never began.
  all.erase(all.rfind('\n') == std::string::npos ? 0 : all.rfind('\n') + 1);
  std::istringstream lines(all);
  std::vector<InstallJournal::Entry> entries;
  std::vector<bool> undone;
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string_view> fields;
    for (std::string_view rest = line;;) {
      auto tab = rest.find('\t');
      fields.push_back(rest.substr(0, tab));
      if (tab == std::string_view::npos) break;
      rest.remove_prefix(tab + 1);
    }
    if (fields.size() == 2 && fields[0] == "U") {
      std::size_t i = 0;
      for (char c : fields[1])
        i = i * 10 + static_cast<std::size_t>(c - '0');
      if (i < undone.size()) undone[i] = true;
      continue;
    }
    if (fields.size() != 3 || fields[0].size() != 1) continue;
    char k = fields[0][0];
    if (k != 'F' && k != 'D' && k != 'A') continue;
    entries.push_back({static_cast<InstallJournal::Kind>(k), fs::path(unescape(fields[1])),
                       fs::path(unescape(fields[2]))});
    undone.push_back(false);
  }
  for (std::size_t i = entries.size(); i-- > 0;) {
    if (undone[i]) continue;
    const auto& e = entries[i];
    // Every path must be the environment's (and a set-aside file the stash's own).
    // Every path must be the environment's (and a set-aside file the stash's own), reached
    // without following a link.
    bool was_there = false;
    const Undo undone_now = undo_beneath(e, roots, stash, was_there);
    if (undone_now == Undo::Outside) {
      result.skipped.push_back(e.path.string());
      note_undone(fd, i);
      continue;
    }
    if (undone_now == Undo::Failed) {
      result.lost.push_back(e.path.string());
      continue;
    }
    note_undone(fd, i);
    if (was_there && e.kind == InstallJournal::Kind::Aside) ++result.restored;
    if (was_there && e.kind == InstallJournal::Kind::File) ++result.removed;
  }
  if (result.lost.empty()) {
    fs::remove_all(stash, ec);
    ::unlink(record.c_str());
  }
  return result;
}

}  // namespace gpulock::install
