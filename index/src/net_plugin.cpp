// Loading libgpulock-net.so (net_plugin.h) and the index library's side of what it provides.
#include "net_plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

// Weak: defined only by the test binaries (tests/support/catch_main.cpp), which live in the
// build tree away from lib/gpulock/, as the path of the build's plugin. Undefined in gpulock,
// which finds its plugin relative to /proc/self/exe.
extern "C" {
extern const char* const gpulock_net_plugin_fallback __attribute__((weak));
}

namespace gpulock::index::detail {
namespace {

std::atomic<bool> g_loaded{false};

std::string executable_dir() {
  char buffer[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return {};
  std::string path(buffer, static_cast<std::size_t>(n));
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::vector<std::string> candidate_paths(bool& from_env) {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("GPULOCK_NET_PLUGIN"); env && *env) {
    from_env = true;
    paths.emplace_back(env);
    return paths;
  }
  std::string file(kNetPluginFile);
  if (std::string dir = executable_dir(); !dir.empty()) {
    // The directory above bin/, spelled without "..", so the places tried read as paths.
    std::string up = dir.substr(0, dir.rfind('/'));
    paths.push_back(dir + "/" + file);
    paths.push_back(up + "/lib/" + file);
    paths.push_back(up + "/lib/gpulock/" + file);
  }
  // A test binary defines where the build's plugin is; gpulock itself has no build-tree path
  // compiled in (issue 42 item 3).
  // An undefined weak object has address null: test the address before reading it.
  if (&gpulock_net_plugin_fallback != nullptr && gpulock_net_plugin_fallback != nullptr &&
      *gpulock_net_plugin_fallback != '\0') {
    paths.emplace_back(gpulock_net_plugin_fallback);
  }
  return paths;
}

// Checks the table a plugin returned against this build's; "" when it fits.
std::string mismatch(const NetPluginTable& t) {
  const NetPluginTable here;
  if (t.abi != here.abi)
    return fmt::format("plugin ABI {}, this gpulock needs {}", t.abi, here.abi);
  if (t.table_size != here.table_size || t.error_size != here.error_size ||
      t.wheel_size != here.wheel_size || t.request_size != here.request_size ||
      t.response_size != here.response_size || t.options_size != here.options_size ||
      t.unpacked_size != here.unpacked_size) {
    return "built from another version of gpulock (type layouts differ)";
  }
  if (!t.make_transport || !t.metadata_from_file || !t.metadata_via_ranges ||
      !t.metadata_from_buffer || !t.unpack_archive || !t.sha256_new || !t.sha256_update ||
      !t.sha256_finish || !t.sha256_free) {
    return "incomplete function table";
  }
  return {};
}

core::Result<const NetPluginTable*> load() {
  bool from_env = false;
  std::vector<std::string> paths = candidate_paths(from_env);
  std::vector<std::string> tried;
  for (const auto& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      tried.push_back(fmt::format("{} (not found)", path));
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      tried.push_back(fmt::format("{} ({})", path, why ? why : "dlopen failed"));
      continue;
    }
    using Entry = const NetPluginTable* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, kNetPluginEntry));
    const NetPluginTable* table = entry ? entry() : nullptr;
    std::string why = !entry   ? fmt::format("no {} entry point", kNetPluginEntry)
                      : !table ? std::string("the entry point returned no table")
                               : mismatch(*table);
    if (!why.empty()) {
      tried.push_back(fmt::format("{} ({})", path, why));
      ::dlclose(handle);
      continue;
    }
    g_loaded = true;
    return table;  // never unloaded: transports and contexts it created may outlive any caller
  }
  // Io (exit 74): an installation missing a file, not a bug (issue 42 item 3).
  core::Error e = core::make_error(
      core::ErrorCode::Io,
      fmt::format(
          "cannot load gpulock's network plugin {} (needed for HTTP, wheel archives and digests); "
          "tried: {}",
          kNetPluginFile, fmt::join(tried, "; ")));
  return std::unexpected(e.with_hint(
      from_env ? std::string("GPULOCK_NET_PLUGIN names the plugin file; unset it to use the one "
                             "installed with gpulock")
               : fmt::format("reinstall gpulock: {} belongs next to the gpulock executable or "
                             "in ../lib/gpulock/ (GPULOCK_NET_PLUGIN=PATH names it)",
                             kNetPluginFile)));
}

}  // namespace

core::Result<const NetPluginTable*> load_net_plugin() {
  static std::once_flag once;
  static core::Result<const NetPluginTable*> result = nullptr;
  std::call_once(once, [] { result = load(); });
  return result;
}

bool net_plugin_loaded() noexcept {
  return g_loaded.load();
}

core::Result<std::unique_ptr<Transport>> make_transport(const TransportOptions& options) {
  auto plugin = load_net_plugin();
  if (!plugin) return std::unexpected(plugin.error());
  return (*plugin)->make_transport(options);
}

core::Result<std::string> metadata_via_ranges(std::uint64_t total, std::uint64_t tail_start,
                                              std::string tail, const RangeFetch& fetch,
                                              const core::WheelFilename* expected,
                                              std::string_view display) {
  auto plugin = load_net_plugin();
  if (!plugin) return std::unexpected(plugin.error());
  return (*plugin)->metadata_via_ranges(total, tail_start, std::move(tail), fetch, expected,
                                        display);
}

core::Result<std::string> metadata_from_buffer(std::string_view data,
                                               const core::WheelFilename* expected,
                                               std::string_view display) {
  auto plugin = load_net_plugin();
  if (!plugin) return std::unexpected(plugin.error());
  return (*plugin)->metadata_from_buffer(data, expected, display);
}

}  // namespace gpulock::index::detail
