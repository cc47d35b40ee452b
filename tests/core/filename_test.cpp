#include "gpulock/core/filename.h"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "python_reference.h"

using namespace gpulock::core;

namespace {

// `wheel_files` of fixtures/research/pytorch-gpu-wheels.json: real torch, triton and nvidia-*
// wheel filenames from PyPI and download.pytorch.org.
const std::vector<std::string> kRealWheels = {
    "torch-2.0.0-cp39-cp39-manylinux1_x86_64.whl",
    "nvidia_cudnn_cu11-8.5.0.96-2-py3-none-manylinux1_x86_64.whl",
    "nvidia_cusolver_cu11-11.4.0.1-2-py3-none-manylinux1_x86_64.whl",
    "nvidia_cuda_nvrtc_cu11-11.7.99-2-py3-none-manylinux1_x86_64.whl",
    "nvidia_cublas_cu11-11.10.3.66-py3-none-manylinux1_x86_64.whl",
    "triton-2.0.0-1-cp39-cp39-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    "torch-2.1.2-cp39-cp39-manylinux1_x86_64.whl",
    "torch-2.1.2+cu121-cp39-cp39-linux_x86_64.whl",
    "triton-2.1.0-0-cp39-cp39-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    "nvidia_nccl_cu12-2.20.5-py3-none-manylinux2014_x86_64.whl",
    "nvidia_nvjitlink_cu12-12.5.82-py3-none-manylinux2014_x86_64.whl",
    "nvidia_cudnn_cu12-8.9.2.26-py3-none-manylinux1_x86_64.whl",
    "torch-2.3.1-cp312-cp312-manylinux1_x86_64.whl",
    "torchvision-0.18.1-cp312-cp312-manylinux1_x86_64.whl",
    "torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl",
    "triton-3.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl",
    "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl",
    "torch-2.7.0-cp313-cp313-manylinux_2_28_x86_64.whl",
    "nvidia_cudnn_cu12-9.5.1.17-py3-none-manylinux_2_28_x86_64.whl",
    "nvidia_nvjitlink_cu12-12.6.85-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl",
    "triton-3.3.0-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
    "torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl",
    "torch-2.7.1-cp310-cp310-manylinux_2_28_x86_64.whl",
    "torch-2.7.1-cp312-cp312-manylinux_2_28_aarch64.whl",
    "torch-2.7.1+cu128-cp310-cp310-manylinux_2_28_x86_64.whl",
    "nvidia_cudnn_cu12-9.7.1.26-py3-none-manylinux_2_27_x86_64.whl",
    "nvidia_cublas_cu12-12.8.3.14-py3-none-manylinux_2_27_x86_64.whl",
    "torch-2.8.0-cp310-cp310-manylinux_2_28_x86_64.whl",
    "torch-2.8.0+cpu-cp310-cp310-manylinux_2_28_x86_64.whl",
    "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl",
    "nvidia_cublas_cu12-12.8.4.1-py3-none-manylinux_2_27_x86_64.whl",
    "torch-2.8.0+cu129-cp313-cp313t-manylinux_2_28_x86_64.whl",
    "torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl",
    "nvidia_nvshmem_cu12-3.3.20-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    "nvidia_nvshmem_cu12-3.4.5-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    "torch-2.12.0-cp310-cp310-manylinux_2_28_x86_64.whl",
    "nvidia_cudnn_cu13-9.20.0.48-py3-none-manylinux_2_27_x86_64.whl",
    "torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl",
};

std::string describe(const WheelFilename& w) {
  std::vector<std::string> tags;
  for (const auto& t : w.tags)
    tags.push_back(t.to_string());
  std::sort(tags.begin(), tags.end());
  std::string joined;
  for (const auto& t : tags)
    joined += (joined.empty() ? "" : ",") + t;
  std::string number = w.build ? std::to_string(w.build->first) : "-";
  std::string rest = w.build && !w.build->second.empty() ? w.build->second : "-";
  return "OK " + w.name + " " + w.version.to_string() + " " + number + " " + rest + " " + joined;
}

std::size_t error_column(std::string_view filename) {
  auto r = WheelFilename::parse(filename);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::InvalidFilename);
  CHECK(r.error().message.size() < 400);
  return r.error().column;
}

}  // namespace

TEST_CASE("real torch, triton and nvidia wheel filenames parse", "[core][filename]") {
  for (const auto& f : kRealWheels) {
    INFO(f);
    auto w = WheelFilename::parse(f);
    REQUIRE(w.has_value());
    CHECK(!w->tags.empty());
    CHECK(is_wheel_filename(f));
  }

  auto cudnn = WheelFilename::parse("nvidia_cudnn_cu11-8.5.0.96-2-py3-none-manylinux1_x86_64.whl");
  REQUIRE(cudnn.has_value());
  CHECK(cudnn->name == "nvidia-cudnn-cu11");
  CHECK(cudnn->version.to_string() == "8.5.0.96");
  REQUIRE(cudnn->build.has_value());
  CHECK(cudnn->build->first == 2);
  CHECK(cudnn->build->second.empty());
  CHECK(cudnn->python_tag == "py3");
  CHECK(cudnn->abi_tag == "none");
  CHECK(cudnn->platform_tag == "manylinux1_x86_64");
  REQUIRE(cudnn->tags.size() == 1);
  CHECK(cudnn->tags[0] == Tag{"py3", "none", "manylinux1_x86_64"});

  auto triton = WheelFilename::parse(
      "triton-2.0.0-1-cp39-cp39-manylinux2014_x86_64.manylinux_2_17_x86_64.whl");
  REQUIRE(triton.has_value());
  CHECK(triton->name == "triton");
  CHECK(triton->build->first == 1);
  CHECK(triton->platform_tag == "manylinux2014_x86_64.manylinux_2_17_x86_64");
  REQUIRE(triton->tags.size() == 2);
  CHECK(triton->tags[0].platform == "manylinux2014_x86_64");
  CHECK(triton->tags[1].platform == "manylinux_2_17_x86_64");

  auto local = WheelFilename::parse("torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl");
  REQUIRE(local.has_value());
  CHECK(local->version.to_string() == "2.5.1+cu124");
  CHECK(local->version.local_string() == "cu124");
  CHECK_FALSE(local->build.has_value());

  auto ft = WheelFilename::parse("torch-2.8.0+cu129-cp313-cp313t-manylinux_2_28_x86_64.whl");
  REQUIRE(ft.has_value());
  CHECK(ft->abi_tag == "cp313t");
  auto target = TagTarget::from_platform_tag("3.13t", "manylinux_2_28_x86_64");
  REQUIRE(target.has_value());
  const TagRanker ranker(supported_tags(*target));
  CHECK(ranker.rank(ft->tags) == std::optional<std::size_t>(0));
}

TEST_CASE("wheel filenames agree with packaging.utils.parse_wheel_filename",
          "[core][filename][differential]") {
  std::vector<std::string> names = kRealWheels;
  for (const char* f : {
           "foo-1.0-py3-none-any.whl",
           "Foo.Bar-1.0-py2.py3-none-any.whl",
           "typing_extensions-4.12.2-py3-none-any.whl",
           "zope.interface-6.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
           "foo-1.0-1abc-py3-none-any.whl",
           "foo-1.0-007_x.y-py3-none-any.whl",
           "foo-1!2.0.post1.dev3+local.7-py3-none-any.whl",
           "foo-v1.0RC1-py3-none-any.whl",
           "foo-1.0-PY3-NONE-ANY.whl",
           "numpy-2.1.0-cp312-cp312-macosx_14_0_arm64.whl",
           "numpy-2.1.0-cp312-cp312-win_amd64.whl",
           "numpy-2.1.0-pp310-pypy310_pp73-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
           "cffi-1.17.1-cp313-cp313-musllinux_1_1_aarch64.whl",
           "foo-1.0-py3-none-any.zip",
           "foo-1.0-py3-none.whl",
           "foo-1.0-1-2-py3-none-any.whl",
           "foo-1.0-x1-py3-none-any.whl",
           "foo-1.x-py3-none-any.whl",
           "foo__bar-1.0-py3-none-any.whl",
           "foo-1.0--py3-none-any.whl",
           ".whl",
           "foo-1.0-py3-none-any.WHL",
       }) {
    names.push_back(f);
  }
  const auto expected = gpulock::test::run_python_reference("filename_reference.py", names);
  REQUIRE(expected.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    auto w = WheelFilename::parse(names[i]);
    CHECK((w ? describe(*w) : std::string("ERR")) == expected[i]);
  }
  WARN("compared " << names.size() << " wheel filenames with packaging");
}

TEST_CASE("wheel names: dots and uppercase accepted and normalized", "[core][filename]") {
  auto w = WheelFilename::parse("Foo.Bar_baz-1.0-py2.py3-none-any.whl");
  REQUIRE(w.has_value());
  CHECK(w->name == "foo-bar-baz");
  CHECK(w->python_tag == "py2.py3");
  REQUIRE(w->tags.size() == 2);
  CHECK(w->tags[0] == Tag{"py2", "none", "any"});
  CHECK(w->tags[1] == Tag{"py3", "none", "any"});
}

TEST_CASE("build tags sort as (number, string)", "[core][filename]") {
  auto build = [](std::string_view f) {
    auto w = WheelFilename::parse(f);
    REQUIRE(w.has_value());
    REQUIRE(w->build.has_value());
    return *w->build;
  };
  CHECK(build("foo-1.0-1abc-py3-none-any.whl") == std::pair<std::uint64_t, std::string>{1, "abc"});
  CHECK(build("foo-1.0-007_x-py3-none-any.whl") == std::pair<std::uint64_t, std::string>{7, "_x"});
  // Numeric, not lexicographic: 10 > 9; same number: the string decides.
  CHECK(build("foo-1.0-9-py3-none-any.whl") < build("foo-1.0-10-py3-none-any.whl"));
  CHECK(build("foo-1.0-2-py3-none-any.whl") < build("foo-1.0-2a-py3-none-any.whl"));
  CHECK(build("foo-1.0-18446744073709551615-py3-none-any.whl").first == UINT64_MAX);
}

TEST_CASE("invalid wheel filenames report the column", "[core][filename]") {
  CHECK(error_column("") == 1);
  CHECK(error_column("foo-1.0-py3-none-any.zip") == 21);      // the extension
  CHECK(error_column("foo-1.0-py3-none-any") == 21);          // no extension: the end
  CHECK(error_column("foo-1.0-py3-none.whl") == 17);          // too few parts: the end
  CHECK(error_column("foo-1.0-1-2-py3-none-any.whl") == 21);  // the sixth dash
  CHECK(error_column("foo-1.0-x1-py3-none-any.whl") == 9);    // build tag
  CHECK(error_column("foo-1.0--py3-none-any.whl") == 9);      // empty build tag
  CHECK(error_column("foo-1.0-99999999999999999999-py3-none-any.whl") == 9);
  CHECK(error_column("foo__bar-1.0-py3-none-any.whl") == 4);  // '__'
  CHECK(error_column("-1.0-py3-none-any.whl") == 1);          // empty name
  CHECK(error_column("_foo-1.0-py3-none-any.whl") == 1);
  CHECK(error_column("foo_-1.0-py3-none-any.whl") == 4);
  CHECK(error_column("fo+o-1.0-py3-none-any.whl") == 3);
  CHECK(error_column("foo--py3-none-any.whl") == 5);           // empty version
  CHECK(error_column("foo-1.0-py3-none-an$y.whl") == 20);      // tag character
  CHECK(error_column("foo-1.0-py3..py2-none-any.whl") == 13);  // empty tag in a set
  CHECK(error_column(std::string("foo-1.0-py3-n\0ne-any.whl", 24)) == 14);
  CHECK(error_column("f\xc3\xa9-1.0-py3-none-any.whl") == 2);  // non-ASCII
  CHECK(error_column("foo-1.0-py3-none-any .whl") == 21);      // space
  CHECK(error_column(".whl") == 1);
  // An invalid version: the column falls inside the version and the message keeps the
  // version parser's error.
  auto r = WheelFilename::parse("foo-1.x-py3-none-any.whl");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().column >= 5);
  CHECK(r.error().column <= 8);
  CHECK(r.error().message.find("invalid version") != std::string::npos);
}

TEST_CASE("hostile wheel filenames return errors", "[core][filename]") {
  const std::string big(10'000'000, 'a');
  CHECK(error_column(big + ".whl") == big.size() + 1);
  CHECK(error_column(std::string(10'000'000, '-') + ".whl") == 6);
  CHECK(error_column("foo-" + big + "-py3-none-any.whl") >= 5);
  CHECK(error_column(std::string(1000, '\0')) == 1);
  CHECK(error_column("\xff\xfe\xfd.whl") == 1);
  std::string dots = "foo-1.0-py3-none-";
  for (int i = 0; i < 100'000; ++i)
    dots += "a.";
  CHECK(error_column(dots + "a.whl") == 9);  // too many tags: column 1 of the tag set
  auto ok = WheelFilename::parse(big + "-1.0-py3-none-any.whl");
  REQUIRE(ok.has_value());
  CHECK(ok->name.size() == big.size());
}

TEST_CASE("sdist filenames", "[core][filename]") {
  auto parse = [](std::string_view f) {
    auto s = SdistFilename::parse(f);
    INFO(f << ": " << (s ? std::string() : s.error().message));
    REQUIRE(s.has_value());
    return *s;
  };
  auto torch = parse("torch-2.5.1.tar.gz");
  CHECK(torch.name == "torch");
  CHECK(torch.version.to_string() == "2.5.1");
  CHECK(torch.extension == ".tar.gz");
  auto dateutil = parse("python-dateutil-2.8.2.tar.gz");
  CHECK(dateutil.name == "python-dateutil");
  CHECK(dateutil.version.to_string() == "2.8.2");
  auto zip = parse("Foo_Bar-1.0.zip");
  CHECK(zip.name == "foo-bar");
  CHECK(zip.extension == ".zip");
  CHECK(parse("foo-1.0.tar.bz2").extension == ".tar.bz2");
  CHECK(parse("foo-1.0.tar.xz").extension == ".tar.xz");
  CHECK(parse("foo-1.0.tar").extension == ".tar");
  // A legacy dash in the version: packaging splits at the last dash and fails; we fall back to
  // an earlier dash.
  auto rc = parse("foo-1.0-rc1.tar.gz");
  CHECK(rc.name == "foo");
  CHECK(rc.version.to_string() == "1.0rc1");

  auto bad = [](std::string_view f) {
    auto s = SdistFilename::parse(f);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == ErrorCode::InvalidFilename);
    CHECK(s.error().message.size() < 400);
    return s.error();
  };
  CHECK(bad("").column == 1);
  CHECK(bad("foo.tar.gz").column == 4);
  CHECK(bad("foo-1.0.exe").column == 12);
  CHECK(bad("foo-bar.tar.gz").message.find("invalid version") != std::string::npos);
  CHECK(bad("-1.0.tar.gz").column == 1);
  CHECK(bad(std::string("foo-1.\0.tar.gz", 14)).column == 7);
  bad(std::string(10'000'000, '-') + ".tar.gz");
  bad(std::string(10'000'000, 'a') + ".tar.gz");
}

TEST_CASE("sdist filenames agree with packaging where packaging accepts them",
          "[core][filename][differential]") {
  const std::vector<std::string> names = {"torch-2.5.1.tar.gz",  "python-dateutil-2.8.2.tar.gz",
                                          "Foo_Bar-1.0.zip",     "zope.interface-6.0.tar.gz",
                                          "foo-1!2.0rc1.tar.gz", "foo-bar.tar.gz",
                                          "foo.tar.gz",          "foo-1.0.exe"};
  std::vector<std::string> input;
  for (const auto& n : names)
    input.push_back("sdist:" + n);
  const auto expected = gpulock::test::run_python_reference("filename_reference.py", input);
  REQUIRE(expected.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    auto s = SdistFilename::parse(names[i]);
    CHECK((s ? "OK " + s->name + " " + s->version.to_string() : std::string("ERR")) == expected[i]);
  }
}
