#include "gpulock/install/record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/index/hash.h"
#include "gpulock/index/wheel_members.h"
#include "gpulock/lock/wheel_files.h"

namespace gpulock::install::record {

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

std::vector<Row> parse(std::string_view text) {
  std::vector<Row> rows;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto f = csv_fields(line);
    Row r;
    r.path = f[0];
    if (f.size() > 1) r.hash = f[1];
    if (f.size() > 2) r.size = f[2];
    rows.push_back(std::move(r));
  }
  return rows;
}

std::optional<std::vector<Row>> read(const std::filesystem::path& dist_info) {
  std::ifstream in(dist_info / "RECORD", std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}
}  // namespace

std::string write(const std::vector<Row>& rows) {
  std::string out;
  for (const auto& r : rows)
    out += fmt::format("{},{},{}\r\n", csv_field(r.path), csv_field(r.hash), csv_field(r.size));
  return out;
}

std::string hex_to_urlsafe_b64(std::string_view hex) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::vector<unsigned char> bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    auto nibble = [](char c) -> unsigned {
      if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
      if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
      if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
      return 0;
    };
    bytes.push_back(static_cast<unsigned char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned n = (unsigned{bytes[i]} << 16) | (unsigned{bytes[i + 1]} << 8) | bytes[i + 2];
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (bytes.size() - i == 1) {
    unsigned n = unsigned{bytes[i]} << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
  } else if (bytes.size() - i == 2) {
    unsigned n = (unsigned{bytes[i]} << 16) | (unsigned{bytes[i + 1]} << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
  }
  return out;
}

namespace {

// The file a row names, when it is inside the environment; else empty.
std::filesystem::path inside_file(const std::filesystem::path& prefix,
                                  const std::filesystem::path& site, const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string::npos) return {};
  const auto file = (site / path).lexically_normal();
  const auto rel = file.lexically_relative(prefix.lexically_normal());
  if (rel.empty() || *rel.begin() == "..") return {};
  return file;
}

// A relative path without empty, `.` or `..` components (nor a NUL): below the directory it
// is joined to.
bool plain_relative(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos)
    return false;
  for (std::size_t start = 0; start <= path.size();) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

// A file's stat against the size and mtime recorded at install; empty: unchanged.
std::string compare_stat(const struct ::stat& st, const StatRow& row) {
  if (static_cast<std::uint64_t>(st.st_size) != row.size)
    return fmt::format("modified (size {}, {} when installed)", st.st_size, row.size);
  if (mtime_ns(st) != row.mtime_ns)
    return "modified (its mtime is not the one recorded at install)";
  return {};
}

}  // namespace

std::filesystem::path prefix_of_site(const std::filesystem::path& site) {
  // <prefix>/lib/pythonX.Y/site-packages
  return site.lexically_normal().parent_path().parent_path().parent_path();
}

namespace {

// The shared libraries of one wheel's record that are not in `site`, as site-relative paths.
std::vector<std::string> missing_libraries(const lock::WheelFiles& rec,
                                           const std::filesystem::path& site) {
  std::vector<std::string> missing;
  for (const auto& lib : rec.shared_libraries) {
    std::string rel = index::site_path_of_member(lib);
    if (rel.empty()) continue;
    // The lock's paths are checked relative (wheel_files), so this stays inside `site`.
    struct stat st {};
    if (::stat((site / rel).c_str(), &st) != 0) missing.push_back(std::move(rel));
  }
  return missing;
}

}  // namespace

LockedLibraries check_locked_libraries(const lock::Package& package,
                                       const std::filesystem::path& site) {
  LockedLibraries best;
  auto records = lock::wheel_files(package);
  if (!records) return best;
  for (const auto& [name, rec] : *records) {
    auto missing = missing_libraries(rec, site);
    if (best.file.empty() || missing.size() < best.missing.size()) {
      best.file = name;
      best.total = rec.shared_libraries.size();
      best.missing = std::move(missing);
    }
  }
  return best;
}

bool is_installer_written(std::string_view member) noexcept {
  const auto slash = member.find('/');
  if (slash == std::string_view::npos || member.find('/', slash + 1) != std::string_view::npos)
    return false;
  if (!member.substr(0, slash).ends_with(".dist-info")) return false;
  const std::string_view name = member.substr(slash + 1);
  return name == "RECORD" || name == "INSTALLER" || name == "REQUESTED" ||
         name == "direct_url.json";
}

MemberCheck check_members(std::span<const index::WheelMember> members,
                          const std::filesystem::path& site) {
  MemberCheck out;
  for (const auto& m : members) {
    if (is_installer_written(m.path)) continue;
    std::string rel = index::site_path_of_member(m.path);
    if (rel.empty() || !plain_relative(rel)) continue;
    ++out.compared;
    std::string file = site.native();
    file += '/';
    file += rel;
    // Followed: an environment installed with `--link-mode symlink` links its files.
    struct stat st {};
    std::string problem;
    if (::stat(file.c_str(), &st) != 0) {
      problem = "missing";
    } else if (!S_ISREG(st.st_mode)) {
      problem = "not a regular file";
    } else if (static_cast<std::uint64_t>(st.st_size) != m.size) {
      problem = fmt::format("modified (size {}, {} in the wheel)", st.st_size, m.size);
    }
    if (!problem.empty()) out.problems.push_back({std::move(rel), std::move(problem)});
  }
  return out;
}

std::vector<std::string> missing_locked_libraries(const lock::Package& package,
                                                  std::string_view filename,
                                                  const std::filesystem::path& site) {
  auto records = lock::wheel_files(package);
  if (!records) return {};
  auto rec = records->find(filename);
  if (rec == records->end()) return {};
  return missing_libraries(rec->second, site);
}

std::string verify_file(const std::filesystem::path& prefix, const std::filesystem::path& site,
                        const Row& row) {
  auto eq = row.hash.find('=');
  if (eq == std::string::npos || row.hash.substr(0, eq) != "sha256") return {};
  const auto file = inside_file(prefix, site, row.path);
  if (file.empty()) return "outside the environment (not read)";
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return "missing";
  if (!S_ISREG(st.st_mode)) return "not a regular file (not read)";
  // Another size than RECORD's is another content than the one RECORD hashed: not read (the
  // hash is only ever computed over a regular file of the recorded size).
  if (!row.size.empty() && row.size != std::to_string(st.st_size))
    return "modified (its sha256 is not the one RECORD lists)";
  auto digest = index::sha256_file(file.string());
  if (!digest) return "missing";
  if (hex_to_urlsafe_b64(digest->sha256) != row.hash.substr(eq + 1))
    return "modified (its sha256 is not the one RECORD lists)";
  if (!row.size.empty() && row.size != std::to_string(digest->size))
    return fmt::format("size {} is not RECORD's {}", digest->size, row.size);
  return {};
}

std::string write_stats(const std::vector<StatRow>& rows) {
  std::string out;
  for (const auto& r : rows) {
    if (r.path.find_first_of("\t\n") != std::string::npos) continue;
    out += fmt::format("{}\t{}\t{}\n", r.path, r.size, r.mtime_ns);
  }
  return out;
}

std::int64_t mtime_ns(const struct ::stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::optional<std::vector<StatRow>> read_stats(const std::filesystem::path& dist_info) {
  return read_stat_file(dist_info / std::string(kStatFile));
}

std::optional<std::vector<StatRow>> read_stat_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<StatRow> rows;
  for (std::string line; std::getline(in, line);) {
    const auto t1 = line.find('\t');
    const auto t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string::npos) continue;
    StatRow r;
    r.path = line.substr(0, t1);
    const std::string size = line.substr(t1 + 1, t2 - t1 - 1);
    const std::string mtime = line.substr(t2 + 1);
    auto [p1, e1] = std::from_chars(size.data(), size.data() + size.size(), r.size);
    auto [p2, e2] = std::from_chars(mtime.data(), mtime.data() + mtime.size(), r.mtime_ns);
    if (e1 != std::errc() || e2 != std::errc()) continue;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string check_stat(const std::filesystem::path& prefix, const std::filesystem::path& site,
                       const StatRow& row) {
  // Most rows are plain paths below site-packages: joined as text, without the lexical
  // normalization inside_file needs for `..` (a no-op sync checks every installed file).
  std::string file;
  if (plain_relative(row.path)) {
    file = site.native();
    file += '/';
    file += row.path;
  } else {
    file = inside_file(prefix, site, row.path).native();
    if (file.empty()) return "outside the environment (not read)";
  }
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return "missing";
  return compare_stat(st, row);
}

StatChecker::StatChecker(std::filesystem::path prefix, std::filesystem::path site)
    : prefix_(std::move(prefix)), site_(std::move(site)) {}

StatChecker::~StatChecker() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::string StatChecker::check(const StatRow& row) {
  if (!plain_relative(row.path)) return check_stat(prefix_, site_, row);
  const auto slash = row.path.rfind('/');
  const std::string_view dir =
      slash == std::string::npos ? std::string_view() : std::string_view(row.path).substr(0, slash);
  if (!opened_ || dir != dir_) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    std::string path = site_.native();
    if (!dir.empty()) {
      path += '/';
      path += dir;
    }
    // Followed as lstat follows a path's directories; only the last component is not.
    dir_fd_ = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    dir_ = dir;
    opened_ = true;
  }
  if (dir_fd_ < 0) return "missing";
  const char* name = row.path.c_str() + (slash == std::string::npos ? 0 : slash + 1);
  struct stat st {};
  if (::fstatat(dir_fd_, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return "missing";
  return compare_stat(st, row);
}

}  // namespace gpulock::install::record
