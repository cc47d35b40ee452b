#pragma once
// libgpulock-net.so: everything that needs libcurl, libzip or libcrypto, loaded with dlopen() on
// the first real need (an HTTP request, a wheel archive to read, a digest to compute).
//
// Why a plugin: linking libcurl pulls in ~30 shared libraries (TLS, IDN, Kerberos, LDAP, ...)
// that the dynamic loader maps and relocates at every start, and OpenSSL 3 initializes on first
// use; together several milliseconds of a warm `gpulock resolve` that needs none of them. The
// executable links only what every run uses.
//
// The boundary is one extern "C" entry point returning a table of C++ function pointers. Both
// sides are built from the same tree by the same compiler, so C++ types (std::string,
// core::Result, std::unique_ptr<Transport>) cross it; the table carries an ABI number and the
// sizes of those types so a plugin from another build is refused instead of misbehaving.
// The plugin links its own copy of gpulock::core (symbols hidden); memory crosses freely (one
// libstdc++, one malloc). It is never unloaded.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gpulock/core/error.h"
#include "gpulock/core/filename.h"
#include "gpulock/index/wheel.h"

#include "remote_zip.h"
#include "transport.h"

namespace gpulock::index::detail {

/// Bump when the table, any type crossing it or what a call promises changes (4: a request's
/// sink runs on the thread that called perform()).
inline constexpr std::uint32_t kNetPluginAbi = 4;

/// The file name searched for (see load_net_plugin()).
inline constexpr std::string_view kNetPluginFile = "libgpulock-net.so";

/// The entry point's name.
inline constexpr const char* kNetPluginEntry = "gpulock_net_plugin_v1";

struct NetPluginTable {
  std::uint32_t abi = kNetPluginAbi;
  // Sizes of what crosses the boundary, compared on load.
  std::uint32_t table_size = sizeof(NetPluginTable);
  std::uint32_t error_size = sizeof(core::Error);
  std::uint32_t wheel_size = sizeof(core::WheelFilename);
  std::uint32_t request_size = sizeof(HttpRequest);
  std::uint32_t response_size = sizeof(HttpResponse);
  std::uint32_t options_size = sizeof(TransportOptions);
  std::uint32_t unpacked_size = sizeof(UnpackedFile);

  // libcurl (curl_transport.cpp).
  std::unique_ptr<Transport> (*make_transport)(const TransportOptions& options) = nullptr;

  // libzip (zip_metadata.cpp, remote_zip.cpp): METADATA out of a wheel, with the zip-bomb and
  // size checks; the Name/Version check stays with the caller (check_metadata_matches).
  core::Result<std::string> (*metadata_from_file)(const std::string& path,
                                                  const core::WheelFilename* expected,
                                                  std::string_view display) = nullptr;
  core::Result<std::string> (*metadata_via_ranges)(std::uint64_t total, std::uint64_t tail_start,
                                                   std::string tail, const RangeFetch& fetch,
                                                   const core::WheelFilename* expected,
                                                   std::string_view display) = nullptr;
  core::Result<std::string> (*metadata_from_buffer)(std::string_view data,
                                                    const core::WheelFilename* expected,
                                                    std::string_view display) = nullptr;
  /// index::unpack_wheel's work (zip_extract.cpp).
  core::Result<std::vector<UnpackedFile>> (*unpack_archive)(const std::string& path,
                                                            const std::string& dest,
                                                            std::string_view display) = nullptr;

  // libcrypto EVP SHA-256: an opaque context.
  void* (*sha256_new)() = nullptr;
  void (*sha256_update)(void* ctx, const void* data, std::size_t size) = nullptr;
  /// Writes 32 bytes and re-initializes the context.
  void (*sha256_finish)(void* ctx, unsigned char* out32) = nullptr;
  void (*sha256_free)(void* ctx) = nullptr;
};

/// The plugin's table, loading it on the first call (thread-safe; later calls return the same
/// answer). Search order: $GPULOCK_NET_PLUGIN when set (only that file); else next to the
/// executable (dirname of /proc/self/exe), ../lib, ../lib/gpulock; else the path it was built at
/// (so test binaries anywhere in the build tree find it). Errors (Internal) name every place
/// searched and why each failed.
[[nodiscard]] core::Result<const NetPluginTable*> load_net_plugin();

/// Whether the plugin has been loaded in this process (tests check that a warm run does not).
[[nodiscard]] bool net_plugin_loaded() noexcept;

}  // namespace gpulock::index::detail
