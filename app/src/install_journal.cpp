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
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/app/wheel_install.h"
#include "gpulock/sys/env.h"

namespace gpulock::app {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kJournal = "journal";
constexpr std::string_view kStashPrefix = ".gpulock-stash-";

core::Error io_error(std::string_view what, const fs::path& path, int err) {
  return core::make_error(core::ErrorCode::Io, fmt::format("{}: {}", what, std::strerror(err)),
                          path.string());
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

InstallJournal::InstallJournal(std::vector<fs::path> roots) : roots_(std::move(roots)) {
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
  write_all(journal_fd_, "gpulock-install-journal 1\n");
  return {};
}

core::Status InstallJournal::note(Entry entry) {
  auto s = make_stash();
  if (s) {
    if (kill_at_ != 0 && entry.kind == kill_kind_ && ++kill_count_ == kill_at_) {
      ::kill(::getpid(), SIGKILL);
    }
    write_all(journal_fd_,
              fmt::format("{}\t{}\t{}\n", static_cast<char>(entry.kind),
                          escape(entry.path.string()), escape(entry.stashed.string())));
  }
  // Kept in memory even when the journal cannot be written: the rollback in process undoes it.
  log_.push_back(std::move(entry));
  return s;
}

core::Status InstallJournal::set_aside(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (auto s = make_stash(); !s) return s;
  const fs::path stashed = stash_ / std::to_string(next_++);
  if (auto s = note({Kind::Aside, path, stashed}); !s) return s;
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
  (void)note({Kind::File, path, {}});
}

core::Status InstallJournal::make_dirs(const fs::path& dir) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (auto s = note({Kind::Dir, *it, {}}); !s) return s;
  }
  fs::create_directories(dir, ec);
  if (ec) return std::unexpected(io_error("cannot create the directory", dir, ec.value()));
  return {};
}

std::vector<std::string> InstallJournal::rollback() {
  std::vector<std::string> lost;
  for (std::size_t i = log_.size(); i-- > 0;) {
    if (undo(log_[i])) {
      note_undone(journal_fd_, i);
    } else {
      lost.push_back(log_[i].path.string());
    }
  }
  log_.clear();
  if (!stash_.empty() && lost.empty()) {
    std::error_code ec;
    fs::remove_all(stash_, ec);
  }
  done_ = true;
  return lost;
}

void InstallJournal::commit() {
  // The journal first: a stash without one is a finished sync's, deleted by the next.
  if (!stash_.empty()) ::unlink((stash_ / kJournal).c_str());
  std::error_code ec;
  if (!stash_.empty()) fs::remove_all(stash_, ec);
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

InterruptedSync roll_back_interrupted(const fs::path& stash) {
  InterruptedSync result;
  result.stash = stash;
  std::error_code ec;
  const fs::path journal = stash / kJournal;
  std::ifstream in(journal, std::ios::binary);
  if (!in) {
    result.journal = false;
    fs::remove_all(stash, ec);
    return result;
  }
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::string all = text.str();
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
  const int fd = ::open(journal.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  for (std::size_t i = entries.size(); i-- > 0;) {
    if (undone[i]) continue;
    const auto& e = entries[i];
    const bool was_there =
        e.kind == InstallJournal::Kind::Aside ? path_exists(e.stashed) : path_exists(e.path);
    if (!undo(e)) {
      result.lost.push_back(e.path.string());
      continue;
    }
    note_undone(fd, i);
    if (was_there && e.kind == InstallJournal::Kind::Aside) ++result.restored;
    if (was_there && e.kind == InstallJournal::Kind::File) ++result.removed;
  }
  if (fd >= 0) ::close(fd);
  if (result.lost.empty()) fs::remove_all(stash, ec);
  return result;
}

}  // namespace gpulock::app
