// Exit codes other than drift (DESIGN.md §Commands), and locks gpulock did not write.
#include "check_support.h"

using namespace check_test;

TEST_CASE("check: a lock that breaks PEP 751 is exit 3, a missing one 74, a bad flag 2",
          "[check][errors]") {
  Workdir w("errors");
  write_file(w / "bad.toml",
             "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"A\"\n");
  auto bad = w.gpulock("check --lock bad.toml");
  CHECK(bad.status == 3);
  CHECK(bad.err.starts_with("error: bad.toml:"));
  CHECK(bad.out.empty());

  auto missing = w.gpulock("check --lock nothing-here.toml");
  CHECK(missing.status == 74);
  CHECK(missing.err.starts_with("error: "));
  CHECK(missing.err.find("nothing-here.toml") != std::string::npos);

  auto flag = w.gpulock("check --format yaml");
  CHECK(flag.status == 2);

  auto driver = w.gpulock("check --lock bad.toml", "GPULOCK_DRIVER=not-a-driver");
  CHECK(driver.status == 3);  // the lock is read first
}

TEST_CASE("check: a lock without [tool.gpulock] warns that its inputs are not recorded",
          "[check][errors]") {
  Workdir w("foreign");
  fs::copy_file(gpulock::test::source_dir() / "fixtures/locks/foreign/uv-export.toml",
                w / "pylock.toml");
  auto r = w.gpulock("check", "GPULOCK_DRIVER=550.54.14 GPULOCK_GPU_ARCH=sm_90");
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  auto out = lines_of(r.out);
  REQUIRE(out.size() >= 3);
  CHECK(out[0] == "inputs: 1 warning");
  CHECK(out[2] ==
        "  warning: the lock records no inputs ([tool.gpulock.inputs]), so they cannot be checked");
  CHECK(out.back() == "pylock.toml: no drift, 1 warning");
  // --strict: warnings fail.
  auto strict = w.gpulock("check --strict", "GPULOCK_DRIVER=550.54.14 GPULOCK_GPU_ARCH=sm_90");
  CHECK(strict.status == 1);
  CHECK(lines_of(strict.out).at(2) ==
        "  error: the lock records no inputs ([tool.gpulock.inputs]), so they cannot be checked");
}
