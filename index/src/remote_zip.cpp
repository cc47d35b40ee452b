// Inside libgpulock-net.so (net_plugin.h): METADATA of a remote wheel by HTTP range reads.
#include <zip.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "net_impl.h"

namespace gpulock::index::net {

using detail::kMinChunk;
using detail::RangeFetch;
namespace {

struct RemoteSource {
  std::uint64_t total = 0;
  std::uint64_t pos = 0;
  std::uint64_t fetched = 0;                    // bytes of range reads so far (kMaxRangeBytes)
  std::map<std::uint64_t, std::string> chunks;  // start offset -> bytes
  const RangeFetch* fetch = nullptr;
  std::optional<core::Error> error;  // a fetch failure, reported instead of libzip's message
  zip_error_t zerr{};

  // Copies what is cached at `pos` into `out`; returns the number of bytes copied.
  std::size_t copy_cached(char* out, std::size_t len) const {
    auto it = chunks.upper_bound(pos);
    if (it == chunks.begin()) return 0;
    --it;
    std::uint64_t start = it->first;
    const std::string& bytes = it->second;
    if (pos >= start + bytes.size()) return 0;
    std::size_t offset = static_cast<std::size_t>(pos - start);
    std::size_t n = std::min(len, bytes.size() - offset);
    std::memcpy(out, bytes.data() + offset, n);
    return n;
  }

  zip_int64_t read(char* out, std::uint64_t len) {
    if (pos >= total || len == 0) return 0;
    len = std::min<std::uint64_t>(len, total - pos);
    std::size_t done = 0;
    while (done < len) {
      std::size_t n = copy_cached(out + done, static_cast<std::size_t>(len - done));
      if (n == 0) {
        // Coalesce: one request for at least kMinChunk bytes (a local header, its name and the
        // compressed METADATA usually fit), never past the next cached chunk's start... or EOF.
        std::uint64_t want = std::max<std::uint64_t>(len - done, kMinChunk);
        std::uint64_t end = std::min<std::uint64_t>(total, pos + want);
        auto next = chunks.upper_bound(pos);
        if (next != chunks.end() && next->first < end && next->first >= pos + (len - done)) {
          end = next->first;
        }
        if (fetched + (end - pos) > detail::kMaxRangeBytes) {
          error = core::make_error(
              core::ErrorCode::IndexFormat,
              fmt::format(
                  "reading METADATA would take more than {} MiB of range requests (the limit); "
                  "the wheel's central directory is too large or lies about its offsets",
                  detail::kMaxRangeBytes >> 20));
          zip_error_set(&zerr, ZIP_ER_READ, EIO);
          return -1;
        }
        fetched += end - pos;
        auto bytes = (*fetch)(pos, end - 1);
        if (!bytes) {
          error = bytes.error();
          zip_error_set(&zerr, ZIP_ER_READ, EIO);
          return -1;
        }
        if (bytes->size() != end - pos) {
          error = core::make_error(core::ErrorCode::Network,
                                   fmt::format("range request returned {} bytes instead of {}",
                                               bytes->size(), end - pos));
          zip_error_set(&zerr, ZIP_ER_READ, EIO);
          return -1;
        }
        chunks[pos] = std::move(*bytes);
        continue;
      }
      done += n;
      pos += n;
    }
    return static_cast<zip_int64_t>(done);
  }
};

zip_int64_t remote_callback(void* user, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
  auto* s = static_cast<RemoteSource*>(user);
  switch (cmd) {
    case ZIP_SOURCE_OPEN:
      s->pos = 0;
      return 0;
    case ZIP_SOURCE_READ:
      return s->read(static_cast<char*>(data), len);
    case ZIP_SOURCE_CLOSE:
      return 0;
    case ZIP_SOURCE_STAT: {
      auto* st = static_cast<zip_stat_t*>(data);
      zip_stat_init(st);
      st->size = s->total;
      st->valid |= ZIP_STAT_SIZE;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_ERROR:
      return zip_error_to_data(&s->zerr, data, len);
    case ZIP_SOURCE_FREE:
      return 0;
    case ZIP_SOURCE_SEEK: {
      zip_int64_t target = zip_source_seek_compute_offset(s->pos, s->total, data, len, &s->zerr);
      if (target < 0) return -1;
      s->pos = static_cast<std::uint64_t>(target);
      return 0;
    }
    case ZIP_SOURCE_TELL:
      return static_cast<zip_int64_t>(s->pos);
    case ZIP_SOURCE_SUPPORTS:
      return zip_source_make_command_bitmap(
          ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR,
          ZIP_SOURCE_FREE, ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL, ZIP_SOURCE_SUPPORTS, -1);
    default:
      zip_error_set(&s->zerr, ZIP_ER_OPNOTSUPP, 0);
      return -1;
  }
}

core::Error located(core::Error e, std::string_view display) {
  if (e.where.empty()) e.where = std::string(display);
  return e;
}

core::Result<std::string> read_from_source(zip_source_t* source,
                                           const core::WheelFilename* expected,
                                           std::string_view display, const RemoteSource* remote) {
  zip_error_t error;
  zip_error_init(&error);
  zip_t* archive = zip_open_from_source(source, ZIP_RDONLY, &error);
  if (!archive) {
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    zip_source_free(source);
    if (remote && remote->error) return std::unexpected(located(*remote->error, display));
    return core::fail_at(core::ErrorCode::InvalidInput,
                         fmt::format("cannot read the wheel: {}", why), std::string(display));
  }
  zip_error_fini(&error);
  auto text = metadata_from_archive(archive, expected, display);
  zip_discard(archive);  // also frees the source
  if (!text && remote && remote->error) return std::unexpected(located(*remote->error, display));
  return text;
}

}  // namespace

core::Result<std::string> metadata_via_ranges(std::uint64_t total, std::uint64_t tail_start,
                                              std::string tail, const RangeFetch& fetch,
                                              const core::WheelFilename* expected,
                                              std::string_view display) {
  RemoteSource state;
  state.total = total;
  state.fetch = &fetch;
  zip_error_init(&state.zerr);
  if (!tail.empty()) state.chunks[tail_start] = std::move(tail);
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_function_create(&remote_callback, &state, &error);
  zip_error_fini(&error);
  if (!source) {
    zip_error_fini(&state.zerr);
    return core::fail_at(core::ErrorCode::Internal, "cannot create a zip source",
                         std::string(display));
  }
  auto result = read_from_source(source, expected, display, &state);
  zip_error_fini(&state.zerr);
  return result;
}

core::Result<std::string> metadata_from_buffer(std::string_view data,
                                               const core::WheelFilename* expected,
                                               std::string_view display) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(data.data(), data.size(), 0, &error);
  zip_error_fini(&error);
  if (!source) {
    return core::fail_at(core::ErrorCode::Internal, "cannot create a zip source",
                         std::string(display));
  }
  return read_from_source(source, expected, display, nullptr);
}

}  // namespace gpulock::index::net
