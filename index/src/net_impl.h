#pragma once
// Inside libgpulock-net.so only (see net_plugin.h): the implementations behind the plugin's
// table. The index library reaches them through load_net_plugin(), never by linking.

#include <zip.h>

#include <memory>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"
#include "gpulock/core/filename.h"
#include "gpulock/index/wheel.h"

#include "remote_zip.h"
#include "transport.h"

namespace gpulock::index::net {

/// libcurl multi on one background thread (curl_transport.cpp).
std::unique_ptr<detail::Transport> make_curl_transport(const detail::TransportOptions& options);

/// Finds `*.dist-info/METADATA` (the one matching the wheel's name when there are several),
/// refuses over 10 MB and zip bombs, and reads it. `display` names the wheel in errors.
core::Result<std::string> metadata_from_archive(zip_t* archive, const core::WheelFilename* expected,
                                                std::string_view display);

/// A local wheel: open, then metadata_from_archive (no Name/Version check).
core::Result<std::string> metadata_from_file(const std::string& path,
                                             const core::WheelFilename* expected,
                                             std::string_view display);

/// See detail::metadata_via_ranges / metadata_from_buffer in remote_zip.h.
core::Result<std::string> metadata_via_ranges(std::uint64_t total, std::uint64_t tail_start,
                                              std::string tail, const detail::RangeFetch& fetch,
                                              const core::WheelFilename* expected,
                                              std::string_view display);
core::Result<std::string> metadata_from_buffer(std::string_view data,
                                               const core::WheelFilename* expected,
                                               std::string_view display);

/// index::unpack_wheel (zip_extract.cpp).
core::Result<std::vector<UnpackedFile>> unpack_archive(const std::string& path,
                                                       const std::string& dest,
                                                       std::string_view display);

/// A readable message for a libzip error code.
std::string zip_error_text(int code);

}  // namespace gpulock::index::net
