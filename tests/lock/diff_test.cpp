// Lock diff: one pair of locks per kind of change.
#include "gpulock/lock/diff.h"

#include "gpulock/lock/lockfile.h"

#include "lock_test_support.h"

using namespace gpulock::lock;
using lock_test::fixtures;

namespace {

Lock base() {
  return lock_test::read_lock(fixtures() / "gpulock-cu124.toml");
}

Package& pkg(Lock& lock, std::string_view name) {
  for (auto& p : lock.packages) {
    if (p.name == name) return p;
  }
  FAIL("no package " << name);
  throw 0;
}

Package wheel_package(std::string name, std::string version) {
  return lock_test::wheel_package(std::move(name), std::move(version), '9');
}

PackageChange only_change(const LockDiff& d) {
  REQUIRE(d.packages.size() == 1);
  CHECK(d.facts.empty());
  return d.packages[0];
}

}  // namespace

TEST_CASE("identical locks have no changes", "[lock][diff]") {
  const Lock a = base();
  Lock b = a;
  b.command = "another command";   // not a fact
  b.created_by = "gpulock 0.2.0";  // not a fact either
  std::reverse(b.packages.begin(), b.packages.end());
  CHECK(diff_locks(a, b).identical());
}

TEST_CASE("added and removed packages", "[lock][diff]") {
  const Lock a = base();
  Lock b = a;
  b.packages.push_back(wheel_package("numpy", "2.2.3"));
  const auto added = only_change(diff_locks(a, b));
  CHECK(added.kind == PackageChangeKind::Added);
  CHECK(added.name == "numpy");
  CHECK_FALSE(added.old_version.has_value());
  CHECK(added.new_version == "2.2.3");

  const auto removed = only_change(diff_locks(b, a));
  CHECK(removed.kind == PackageChangeKind::Removed);
  CHECK(removed.old_version == "2.2.3");
  CHECK_FALSE(removed.new_version.has_value());
}

TEST_CASE("upgraded and downgraded by PEP 440 order, not text order", "[lock][diff]") {
  Lock a = base();
  pkg(a, "jinja2").version = "3.1.9";
  Lock b = base();
  pkg(b, "jinja2").version = "3.1.10";
  const auto up = only_change(diff_locks(a, b));
  CHECK(up.kind == PackageChangeKind::Upgraded);
  CHECK(up.old_version == "3.1.9");
  CHECK(up.new_version == "3.1.10");
  const auto down = only_change(diff_locks(b, a));
  CHECK(down.kind == PackageChangeKind::Downgraded);
}

TEST_CASE("a new hash for the same file at the same version is flagged as rehashed",
          "[lock][diff]") {
  const Lock a = base();
  Lock b = a;
  auto& wheel = pkg(b, "torch").wheels->at(0);
  const Hashes old_hashes = wheel.hashes;
  wheel.hashes["sha256"] = std::string(64, '0');
  const auto c = only_change(diff_locks(a, b));
  CHECK(c.kind == PackageChangeKind::Rehashed);
  CHECK(c.name == "torch");
  CHECK(c.old_version == c.new_version);
  REQUIRE(c.rehashed.size() == 1);
  CHECK(c.rehashed[0].filename == "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl");
  CHECK(c.rehashed[0].old_hashes == old_hashes);
  CHECK(c.rehashed[0].new_hashes.at("sha256") == std::string(64, '0'));

  // An extra algorithm next to an unchanged sha256 is not a rehash.
  Lock d = a;
  pkg(d, "torch").wheels->at(0).hashes["sha512"] = std::string(128, '1');
  CHECK(diff_locks(a, d).identical());
}

TEST_CASE("other changes at the same version", "[lock][diff]") {
  const Lock a = base();
  SECTION("index") {
    Lock b = a;
    pkg(b, "filelock").index = "https://mirror.example/simple/";
    const auto c = only_change(diff_locks(a, b));
    CHECK(c.kind == PackageChangeKind::Changed);
    CHECK(c.fields == std::vector<std::string>{"index"});
  }
  SECTION("a wheel added, a size changed") {
    Lock b = a;
    auto& p = pkg(b, "markupsafe");
    FileEntry w = p.wheels->at(0);
    w.name = "MarkupSafe-2.1.5-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
    p.wheels->push_back(w);
    p.wheels->at(0).size = 1;
    const auto c = only_change(diff_locks(a, b));
    CHECK(c.kind == PackageChangeKind::Changed);
    CHECK(c.files_added == std::vector<std::string>{*w.name});
    CHECK(c.fields == std::vector<std::string>{"file-details"});
  }
  SECTION("a marker") {
    Lock b = a;
    pkg(b, "triton").marker = "sys_platform == \"linux\"";
    const auto c = only_change(diff_locks(a, b));
    CHECK(c.kind == PackageChangeKind::Changed);
    CHECK(c.fields == std::vector<std::string>{"marker"});
    CHECK(c.old_marker == "platform_system == \"Linux\" and platform_machine == \"x86_64\"");
    CHECK(c.new_marker == "sys_platform == \"linux\"");
  }
}

TEST_CASE("entries of one name are matched by marker", "[lock][diff]") {
  Lock a;
  a.created_by = "t";
  Package linux = wheel_package("numpy", "2.2.3");
  linux.marker = "sys_platform == \"linux\"";
  Package mac = wheel_package("numpy", "2.2.2");
  mac.marker = "sys_platform == \"darwin\"";
  a.packages = {linux, mac};
  Lock b = a;
  b.packages[1].version = "2.2.3";  // mac upgraded
  Package win = wheel_package("numpy", "2.2.3");
  win.marker = "sys_platform == \"win32\"";
  b.packages.push_back(win);
  const LockDiff d = diff_locks(a, b);
  REQUIRE(d.packages.size() == 2);
  CHECK(d.packages[0].kind == PackageChangeKind::Upgraded);
  CHECK(d.packages[0].new_marker == "sys_platform == \"darwin\"");
  CHECK(d.packages[1].kind == PackageChangeKind::Added);
  CHECK(d.packages[1].new_marker == "sys_platform == \"win32\"");
}

TEST_CASE("changed GPU facts and snapshot", "[lock][diff]") {
  const Lock a = base();
  Lock b = a;
  auto& gpu = *b.gpulock->gpu;
  gpu.variant = "cu126";
  gpu.cuda = gpulock::gpu::CudaVersion{12, 6};
  gpu.cudnn = "9.5.1.17";
  gpu.min_driver = gpulock::gpu::DriverVersion::parse("560.28.03").value();
  gpu.archs = {{8, 0}, {9, 0}};
  b.gpulock->snapshot->nightly = "2025-02-01";
  b.gpulock->snapshot->exclude_newer = TomlDatetime{{2025, 2, 1}, {12, 0, 0, 0}, 0};
  const LockDiff d = diff_locks(a, b);
  CHECK(d.packages.empty());
  std::vector<std::string> keys;
  for (const auto& f : d.facts)
    keys.push_back(f.key);
  CHECK(keys == std::vector<std::string>{"gpu.archs", "gpu.variant", "gpu.cuda", "gpu.cudnn",
                                         "gpu.min-driver", "snapshot.exclude-newer",
                                         "snapshot.nightly"});
  CHECK(d.facts[0].old_value == "sm_90");
  CHECK(d.facts[0].new_value == "sm_80, sm_90");
  CHECK(d.facts[1].old_value == "cu124");
  CHECK(d.facts[1].new_value == "cu126");
  CHECK(d.facts[5].old_value == "2025-01-01T00:00:00Z");
  CHECK(d.facts[5].new_value == "2025-02-01T12:00:00Z");
  CHECK_FALSE(d.facts[6].old_value.has_value());

  // A CPU lock against a GPU lock: every GPU fact goes from absent to set.
  Lock cpu = a;
  cpu.gpulock->gpu.reset();
  const LockDiff c = diff_locks(cpu, a);
  CHECK(c.facts.size() == 9);
  for (const auto& f : c.facts) {
    CHECK(f.key.starts_with("gpu."));
    CHECK_FALSE(f.old_value.has_value());
  }
}

TEST_CASE("changed inputs, target and top-level facts", "[lock][diff]") {
  const Lock a = base();
  Lock b = a;
  b.requires_python = ">=3.12";
  b.gpulock->target->python = "3.12";
  b.gpulock->inputs->requirements.push_back("numpy");
  b.gpulock->inputs->options["prerelease"] = "allow";
  b.gpulock->inputs->sha256 = std::string(64, '0');
  const LockDiff d = diff_locks(a, b);
  std::vector<std::string> keys;
  for (const auto& f : d.facts)
    keys.push_back(f.key);
  CHECK(keys == std::vector<std::string>{"requires-python", "target.python", "inputs.requirements",
                                         "inputs.options", "inputs.sha256"});
  CHECK(d.facts[2].new_value == "torch==2.5.1, numpy");
}
