// Hashed requirements export (index form and direct-URL form).
#include "gpulock/lock/export.h"

#include "gpulock/core/tags.h"
#include "gpulock/lock/lockfile.h"

#include "lock_test_support.h"

using namespace gpulock::lock;
using gpulock::core::ErrorCode;
using lock_test::fixtures;
using lock_test::read_file;

namespace {

using lock_test::read_lock;

std::vector<gpulock::core::Tag> tags_for(const char* python, const char* platform) {
  auto target = gpulock::core::TagTarget::from_platform_tag(python, platform);
  REQUIRE(target.has_value());
  return gpulock::core::supported_tags(*target);
}

Package simple(std::string name, std::string version) {
  return lock_test::wheel_package(std::move(name), std::move(version), '1');
}

}  // namespace

TEST_CASE("index form: name==version, its marker, and every hash of the package",
          "[lock][export]") {
  const Lock lock = read_lock(fixtures() / "gpulock-cu124.toml");
  ExportOptions options;
  options.source_name = "gpulock-cu124.toml";
  auto text = export_requirements(lock, options);
  REQUIRE(text.has_value());
  CHECK(*text == read_file(fixtures() / "expected" / "export-cu124.txt"));
}

TEST_CASE("a package's hashes cover its sdist and all wheels, sorted and unique",
          "[lock][export]") {
  Lock lock;
  lock.created_by = "t";
  Package p = simple("a", "1.0");
  FileEntry w2 = p.wheels->at(0);
  w2.name = "a-1.0-py2-none-any.whl";
  w2.hashes = {{"sha256", std::string(64, '0')},
               {"sha512", std::string(128, '2')},
               {"md5", std::string(32, '3')}};
  p.wheels->push_back(w2);
  FileEntry sd;
  sd.name = "a-1.0.tar.gz";
  sd.url = "https://example.org/a-1.0.tar.gz";
  sd.hashes = {{"sha256", std::string(64, '1')}};  // the same digest as a wheel: listed once
  p.sdist = sd;
  p.marker = "python_version >= \"3.9\"";
  lock.packages = {p};
  ExportOptions options;
  options.source_name.clear();
  auto text = export_requirements(lock, options);
  REQUIRE(text.has_value());
  CHECK(*text ==
        "a==1.0 ; python_version >= \"3.9\" \\\n"
        "    --hash=sha256:" +
            std::string(64, '0') +
            " \\\n"
            "    --hash=sha256:" +
            std::string(64, '1') +
            " \\\n"
            "    --hash=sha512:" +
            std::string(128, '2') + "\n");
}

TEST_CASE("direct-URL form picks the target's wheel", "[lock][export]") {
  const Lock lock = read_lock(fixtures() / "foreign" / "pep751-example.toml");
  ExportOptions options;
  options.direct_urls = true;
  options.source_name.clear();

  SECTION("without a target a package with several wheels cannot be exported") {
    auto text = export_requirements(lock, options);
    REQUIRE_FALSE(text.has_value());
    CHECK(text.error().code == ErrorCode::Usage);
    CHECK(text.error().message ==
          "package 'numpy' has 2 wheels; a direct URL needs the target to choose one");
    CHECK_FALSE(text.error().hints.empty());
  }
  SECTION("manylinux target") {
    options.target_tags = tags_for("3.12", "manylinux_2_28_x86_64");
    auto text = export_requirements(lock, options);
    REQUIRE(text.has_value());
    CHECK(text->find("numpy @ https://files.pythonhosted.org/packages/39/04/"
                     "78d2e7402fb479d893953fb78fa7045f7deb635ec095b6b4f0260223091a/"
                     "numpy-2.2.3-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl \\\n"
                     "    --hash=sha256:") != std::string::npos);
    CHECK(text->find("win_amd64") == std::string::npos);
    CHECK(text->find("attrs @ https://") != std::string::npos);
  }
  SECTION("windows target") {
    options.target_tags = tags_for("3.12", "win_amd64");
    auto text = export_requirements(lock, options);
    REQUIRE(text.has_value());
    CHECK(text->find("numpy-2.2.3-cp312-cp312-win_amd64.whl") != std::string::npos);
    CHECK(text->find("manylinux") == std::string::npos);
  }
  SECTION("a target no wheel fits") {
    options.target_tags = tags_for("3.12", "macosx_14_0_arm64");
    auto text = export_requirements(lock, options);
    REQUIRE_FALSE(text.has_value());
    CHECK(text.error().message ==
          "no wheel of package 'numpy' fits the target, and it has no sdist");
  }
}

TEST_CASE("direct URLs for chosen packages only, archives, and local paths", "[lock][export]") {
  Lock lock;
  lock.created_by = "t";
  Package nightly = simple("torch", "2.6.0.dev20250101+cu124");
  nightly.wheels->at(0).url =
      "https://download.pytorch.org/whl/nightly/cu124/"
      "torch-2.6.0.dev20250101%2Bcu124-cp311-cp311-linux_x86_64.whl";
  nightly.wheels->at(0).name.reset();
  Package local = simple("local", "1.0");
  local.wheels->at(0).url.reset();
  local.wheels->at(0).path = "wheels/local 1.0-py3-none-any.whl";
  local.wheels->at(0).name = "local-1.0-py3-none-any.whl";
  Package archive;
  archive.name = "tarball";
  archive.version = "1.0";
  FileEntry a;
  a.url = "https://example.org/tarball-1.0.zip";
  a.hashes.emplace("sha384", std::string(96, '4'));
  archive.archive = a;
  lock.packages = {nightly, local, archive, simple("other", "3.0")};
  ExportOptions options;
  options.source_name.clear();
  options.direct_url_packages = {"torch", "local"};
  options.lock_dir = "/srv/locks";
  auto text = export_requirements(lock, options);
  REQUIRE(text.has_value());
  const std::string h1 = std::string(64, '1');
  CHECK(*text ==
        "local @ file:///srv/locks/wheels/local%201.0-py3-none-any.whl \\\n"
        "    --hash=sha256:" +
            h1 +
            "\n"
            "other==3.0 \\\n    --hash=sha256:" +
            h1 +
            "\n"
            "tarball @ https://example.org/tarball-1.0.zip \\\n"
            "    --hash=sha384:" +
            std::string(96, '4') +
            "\n"
            "torch @ https://download.pytorch.org/whl/nightly/cu124/"
            "torch-2.6.0.dev20250101%2Bcu124-cp311-cp311-linux_x86_64.whl \\\n"
            "    --hash=sha256:" +
            h1 + "\n");
}

TEST_CASE("what pip cannot install with hashes is refused with a reason", "[lock][export]") {
  ExportOptions options;
  SECTION("a marker using PEP 751's extras variable") {
    auto lock = read_lock(fixtures() / "gpulock-features.toml");
    auto text = export_requirements(lock, options);
    REQUIRE_FALSE(text.has_value());
    CHECK(text.error().code == ErrorCode::InvalidLockfile);
    CHECK(text.error().message ==
          "the marker of package 'cattrs' uses PEP 751's 'extras' or 'dependency_groups', which "
          "a requirements file cannot express: 'cli' in extras");
  }
  SECTION("a vcs source") {
    Lock lock;
    Package v;
    v.name = "mylib";
    v.vcs = VcsSource{"git", "https://x/mylib.git", std::nullopt, std::nullopt,
                      "abc", std::nullopt,          {},           {}};
    lock.packages = {v};
    auto text = export_requirements(lock, options);
    REQUIRE_FALSE(text.has_value());
    CHECK(text.error().message ==
          "package 'mylib' is a vcs source tree, which pip cannot install in hash-checking mode");
  }
  SECTION("a directory source") {
    Lock lock;
    Package d;
    d.name = "project";
    d.directory = DirectorySource{".", true, std::nullopt, {}, {}};
    lock.packages = {d};
    auto text = export_requirements(lock, options);
    REQUIRE_FALSE(text.has_value());
    CHECK(text.error().message ==
          "package 'project' is a directory source tree, which pip cannot install in "
          "hash-checking mode");
  }
  SECTION("a file with only an md5 hash") {
    Lock lock;
    Package p = simple("a", "1.0");
    p.wheels->at(0).hashes = {{"md5", std::string(32, '0')}};
    lock.packages = {p};
    auto text = export_requirements(lock, options);
    REQUIRE_FALSE(text.has_value());
    CHECK(text.error().message ==
          "file 'a-1.0-py3-none-any.whl' of package 'a' has no sha256, sha384 or sha512 hash, "
          "which pip needs in hash-checking mode");
  }
  SECTION("a string that merely contains 'extras' is not the variable") {
    Lock lock;
    Package p = simple("a", "1.0");
    p.marker = "platform_release == 'extras'";
    lock.packages = {p};
    CHECK(export_requirements(lock, options).has_value());
  }
}
