// A wheel's member list (wheel_members.h): its digest, its shared libraries, and a local wheel
// read from its tail with pread (zip_directory.h parses; nothing here loads the plugin).
#include "gpulock/index/wheel_members.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "gpulock/core/sha256.h"

#include "local_file.h"
#include "zip_directory.h"

namespace gpulock::index {

std::string members_digest(std::span<const WheelMember> members) {
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return members[a].path < members[b].path; });
  core::Sha256 hash;
  std::string line;
  for (std::size_t i : order) {
    const WheelMember& m = members[i];
    line.assign(m.path);
    line += fmt::format("{}{}{}{:08x}\n", '\0', m.size, '\0', m.crc32);
    hash.update(line);
  }
  return hash.finish_hex();
}

std::string site_path_of_member(std::string_view member) {
  auto slash = member.find('/');
  if (slash == std::string_view::npos || !member.substr(0, slash).ends_with(".data"))
    return std::string(member);
  auto rest = member.substr(slash + 1);
  for (std::string_view scheme : {"purelib/", "platlib/"}) {
    if (rest.starts_with(scheme)) return std::string(rest.substr(scheme.size()));
  }
  return {};
}

bool is_shared_library(std::string_view path) noexcept {
  std::string_view name = path.substr(path.rfind('/') + 1);
  if (!name.starts_with("lib")) return false;
  std::string_view rest = name.substr(3);
  return rest.ends_with(".so") || rest.find(".so.") != std::string_view::npos;
}

WheelMembers make_wheel_members(std::vector<WheelMember> members) {
  std::string digest = members_digest(members);
  return detail::wheel_members_with_digest(std::move(members), std::move(digest));
}

WheelMembers detail::wheel_members_with_digest(std::vector<WheelMember> members,
                                               std::string digest) {
  WheelMembers out;
  out.digest = std::move(digest);
  for (const auto& m : members) {
    if (is_shared_library(m.path)) out.shared_libraries.push_back(m.path);
  }
  std::sort(out.shared_libraries.begin(), out.shared_libraries.end());
  out.members = std::move(members);
  return out;
}

namespace {

// Bytes [start, end] of an open file, all of them or an Io error.
core::Result<std::string> read_range(int fd, std::uint64_t start, std::uint64_t end,
                                     const std::string& where) {
  std::string out(static_cast<std::size_t>(end - start + 1), '\0');
  std::size_t filled = 0;
  while (filled < out.size()) {
    ssize_t n =
        ::pread(fd, out.data() + filled, out.size() - filled, static_cast<off_t>(start + filled));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return core::fail_at(core::ErrorCode::Io,
                           fmt::format("cannot read the wheel: {}", std::strerror(errno)), where);
    }
    if (n == 0) {
      return core::fail_at(core::ErrorCode::Io, "the wheel ended early (changed while read?)",
                           where);
    }
    filled += static_cast<std::size_t>(n);
  }
  return out;
}

}  // namespace

core::Result<WheelMembers> read_wheel_members(const std::string& path, std::string_view display) {
  const std::string where = display.empty() ? path : std::string(display);
  detail::LocalFile file;
  if (auto opened = file.open(path); !opened) return std::unexpected(opened.error());
  const std::uint64_t total = file.size();
  if (total == 0) {
    return core::fail_at(core::ErrorCode::InvalidInput,
                         "cannot read the wheel's file list: the file is empty", where);
  }
  const std::uint64_t tail_size = detail::member_tail_bytes(total);
  auto tail = read_range(file.fd(), total - tail_size, total - 1, where);
  if (!tail) return std::unexpected(tail.error());
  detail::RangeFetch fetch = [&](std::uint64_t a, std::uint64_t b) {
    return read_range(file.fd(), a, b, where);
  };
  auto members = detail::members_via_ranges(total, std::move(*tail), fetch, where);
  if (!members) return std::unexpected(members.error());
  return make_wheel_members(std::move(*members));
}

}  // namespace gpulock::index
