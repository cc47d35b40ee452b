// Inside libgpulock-net.so (net_plugin.h): a whole wheel unpacked with libzip, for the native
// installer's cache of unpacked wheels (index::unpack_wheel).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

#include "net_impl.h"

namespace gpulock::index::net {
namespace {

core::Error bad(std::string message, std::string_view display) {
  return core::make_error(core::ErrorCode::InvalidInput, std::move(message), std::string(display));
}

core::Error io(std::string message, const std::string& path, int err) {
  return core::make_error(core::ErrorCode::Io, fmt::format("{}: {}", message, std::strerror(err)),
                          path);
}

// A safe relative name: no absolute path, no `..` or `.` component, no backslash, no NUL.
bool safe_name(std::string_view name) {
  if (name.empty() || name.front() == '/') return false;
  if (name.find('\\') != std::string_view::npos || name.find('\0') != std::string_view::npos)
    return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part == ".." || part == ".") return false;
    if (part.empty() && end != name.size()) return false;  // "a//b"
    start = end + 1;
  }
  return true;
}

core::Status make_dirs(const std::string& dir, std::set<std::string>& made) {
  if (made.contains(dir)) return {};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return std::unexpected(core::make_error(
        core::ErrorCode::Io, fmt::format("cannot create the directory: {}", ec.message()), dir));
  }
  made.insert(dir);
  return {};
}

// Writes one entry to `target`, bounded by its declared size; `written` is what it wrote (a
// stream may end before the size the central directory declares: the file is what it holds).
core::Status extract_entry(zip_t* archive, zip_uint64_t index, const zip_stat_t& st,
                           const std::string& target, mode_t mode, std::string_view display,
                           std::vector<char>& buffer, std::uint64_t& written) {
  ::unlink(target.c_str());  // a name twice in the archive: the last wins, with its mode
  int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return std::unexpected(io("cannot create the file", target, errno));
  zip_file_t* file = zip_fopen_index(archive, index, 0);
  if (!file) {
    ::close(fd);
    return std::unexpected(bad(
        fmt::format("cannot open {} in the wheel: {}", st.name, zip_strerror(archive)), display));
  }
  written = 0;
  core::Status status;
  while (true) {
    zip_int64_t n = zip_fread(file, buffer.data(), buffer.size());
    if (n < 0) {
      status = std::unexpected(
          bad(fmt::format("cannot read {} from the wheel: {}", st.name, zip_file_strerror(file)),
              display));
      break;
    }
    if (n == 0) break;
    written += static_cast<std::uint64_t>(n);
    if ((st.valid & ZIP_STAT_SIZE) && written > st.size) {
      status = std::unexpected(
          bad(fmt::format("refusing {}: it inflates beyond its declared size of {} bytes "
                          "(a zip bomb?)",
                          st.name, st.size),
              display));
      break;
    }
    const char* p = buffer.data();
    auto left = static_cast<std::size_t>(n);
    while (left > 0) {
      ssize_t w = ::write(fd, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        status = std::unexpected(io("cannot write", target, errno));
        break;
      }
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    if (!status) break;
  }
  zip_fclose(file);
  if (::close(fd) != 0 && status) status = std::unexpected(io("cannot write", target, errno));
  return status;
}

}  // namespace

core::Result<std::vector<UnpackedFile>> unpack_archive(const std::string& path,
                                                       const std::string& dest,
                                                       std::string_view display) {
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &code);
  if (!archive) {
    if (code == ZIP_ER_OPEN || code == ZIP_ER_READ) {
      return std::unexpected(core::make_error(
          core::ErrorCode::Io, fmt::format("cannot open the wheel: {}", zip_error_text(code)),
          std::string(display)));
    }
    return std::unexpected(
        bad(fmt::format("not a wheel (zip) file: {}", zip_error_text(code)), display));
  }
  std::vector<UnpackedFile> out;
  std::set<std::string> made;
  std::vector<char> buffer(std::size_t{1} << 20);
  core::Status status = make_dirs(dest, made);
  const zip_int64_t count = zip_get_num_entries(archive, 0);
  for (zip_int64_t i = 0; status && i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive, index, ZIP_FL_ENC_RAW, &st) != 0 || !(st.valid & ZIP_STAT_NAME)) {
      status = std::unexpected(bad(
          fmt::format("cannot read entry {} of the wheel: {}", i, zip_strerror(archive)), display));
      break;
    }
    std::string_view name = st.name;
    const bool is_dir = name.ends_with('/');
    std::string_view rel = is_dir ? name.substr(0, name.size() - 1) : name;
    if (!safe_name(rel)) {
      status = std::unexpected(
          bad(fmt::format("refusing the wheel: its entry '{}' would be written outside the target "
                          "directory",
                          name),
              display));
      break;
    }
    const std::string target = dest + "/" + std::string(rel);
    if (is_dir) {
      status = make_dirs(target, made);
      continue;
    }
    if ((st.valid & ZIP_STAT_SIZE) && (st.valid & ZIP_STAT_COMP_SIZE) &&
        (st.valid & ZIP_STAT_COMP_METHOD)) {
      const bool stored = st.comp_method == ZIP_CM_STORE;
      const bool impossible =
          stored ? st.size != st.comp_size : st.size > st.comp_size * 1032 + 1024;
      if (impossible) {
        status = std::unexpected(bad(
            fmt::format("refusing {}: it declares {} bytes from {} compressed bytes (a zip bomb?)",
                        name, st.size, st.comp_size),
            display));
        break;
      }
    }
    const auto slash = target.rfind('/');
    status = make_dirs(target.substr(0, slash), made);
    if (!status) break;
    zip_uint8_t opsys = 0;
    zip_uint32_t attributes = 0;
    bool executable = false;
    if (zip_file_get_external_attributes(archive, index, 0, &opsys, &attributes) == 0) {
      // pip's zip_item_is_executable: a regular file's Unix mode with any execute bit.
      const mode_t mode = static_cast<mode_t>(attributes >> 16);
      executable = mode != 0 && S_ISREG(mode) && (mode & 0111) != 0;
    }
    std::uint64_t written = 0;
    status = extract_entry(archive, index, st, target, executable ? 0777 : 0666, display, buffer,
                           written);
    if (!status) break;
    out.push_back({std::string(name), written, executable});
  }
  zip_discard(archive);
  if (!status) return std::unexpected(status.error());
  return out;
}

}  // namespace gpulock::index::net
