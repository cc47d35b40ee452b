// The one translation unit that holds Catch2's main(); every test binary links it.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

// Test binaries live outside bin/: they name the build's network plugin (index/src/net_plugin.cpp
// reads this weak symbol; gpulock itself finds its plugin at ../lib/gpulock/, issue 42 item 3).
extern "C" {
extern const char* const gpulock_net_plugin_fallback;
const char* const gpulock_net_plugin_fallback = GPULOCK_BINARY_DIR "/lib/gpulock/libgpulock-net.so";
}
