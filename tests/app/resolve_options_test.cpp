// app::resolve's option values, checked before any I/O (issue 21's bugs on the resolve path).
#include <catch2/catch.hpp>

#include "gpulock/app/resolve.h"

using gpulock::app::torch_backend_error;

TEST_CASE("torch_backend_error accepts auto, cpu and cuXYZ only", "[app][options]") {
  for (const char* ok : {"", "auto", "cpu", "cu118", "cu124", "cu130", "cu132"}) {
    INFO(ok);
    CHECK(torch_backend_error(ok).empty());
  }
  for (const char* bad : {"cu!", "cu", "cu1", "cuda124", "CU124", "cu12a", "rocm6.2", "cu1240000", "cpu "}) {
    INFO(bad);
    CHECK(torch_backend_error(bad).starts_with("invalid --torch-backend "));
  }
}

TEST_CASE("resolve refuses a malformed --torch-backend before it parses it", "[app][options]") {
  // 'cu!' used to be parsed as a version label and the failed parse dereferenced (undefined
  // behaviour; the asan preset runs this test). It is a usage error, before any index is asked.
  gpulock::app::ResolveRequest request;
  request.requirements = {"torch"};
  request.torch_backend = "cu!";
  request.driver = "550.54.14";
  request.target.python_version = "3.11";
  request.target.platform = "manylinux_2_28_x86_64";
  request.index_url = "http://127.0.0.1:9/simple/";  // never asked
  request.output = "-";
  auto result = gpulock::app::resolve(request);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == gpulock::core::ErrorCode::Usage);
  CHECK(result.error().message == "invalid --torch-backend 'cu!': expected auto, cpu or cuXYZ (e.g. cu124)");
}
