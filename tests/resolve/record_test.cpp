// Issue 43 item 4: a request and the lock's record of it are one pair (app/resolve_record.h).
// A lock made by the real binary with the recorded options is read back by from_record into the
// request that made it (each field checked against the flags given, written here by hand), and
// to_record of that request writes the same [tool.gpulock.inputs], its sha256 included.
#include "gpulock/app/resolve_record.h"

#include "resolve_support.h"

using namespace resolve_test;

namespace {

// The record's files without their source lines.
std::vector<std::string> files_of(const gpulock::lock::GpulockInputs& in) {
  std::vector<std::string> out;
  for (const auto& f : in.files)
    out.push_back(f.path + " " + f.kind + " " + f.sha256);
  return out;
}

// from_record(lock), checked by `expect`, then to_record of it against the lock's own record.
template <class Expect>
void round_trip(const fs::path& dir, Expect expect) {
  auto lock = read_lock(dir / "pylock.toml");
  REQUIRE(lock.gpulock);
  REQUIRE(lock.gpulock->inputs);
  auto request = gpulock::app::from_record(lock, dir);
  REQUIRE(request);
  expect(*request);
  auto again = gpulock::app::to_record(*request, dir);
  REQUIRE(again);
  const auto& recorded = *lock.gpulock->inputs;
  CHECK(again->requirements == recorded.requirements);
  CHECK(files_of(*again) == files_of(recorded));
  CHECK(again->extras == recorded.extras);
  CHECK(again->groups == recorded.groups);
  CHECK(again->options == recorded.options);
  CHECK(again->sha256 == recorded.sha256);
}

}  // namespace

TEST_CASE("from_record reads back the request a lock records, and to_record writes its record",
          "[resolve][record]") {
  SECTION("a machine described by flags, an index pin, every typed option") {
    fs::path dir = fresh_dir("record-machine");
    write_file(dir / "requirements.txt", "jinja2\n");
    Options o;
    o.cwd = dir;
    const std::string cu124 = servers().torch_index_base() + "/cu124/";
    Run r = resolve({"markupsafe",
                     "-r",
                     "requirements.txt",
                     "--index",
                     "mirror=" + cu124,
                     "--index-for",
                     "markupsafe=mirror",
                     "--prerelease",
                     "allow",
                     "--index-strategy",
                     "first-index",
                     "--driver",
                     "550.54.14",
                     "--cuda-ceiling",
                     "12.4",
                     "--gpu-arch",
                     "sm_86,sm_80",
                     "--cuda-compat",
                     "minor",
                     "-o",
                     "pylock.toml"},
                    o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    round_trip(dir, [&](const gpulock::app::ResolveRequest& q) {
      CHECK(q.requirements == std::vector<std::string>{"markupsafe"});
      CHECK(q.requirement_files == std::vector<std::string>{(dir / "requirements.txt").string()});
      CHECK(q.index_url == servers().pypi_url());
      REQUIRE(q.named_indexes.size() == 1);
      CHECK(q.named_indexes[0].name == "mirror");
      CHECK(q.named_indexes[0].url == cu124);
      REQUIRE(q.index_for.size() == 1);
      CHECK(q.index_for[0].to_string() == "markupsafe=mirror");
      CHECK(q.prerelease == gpulock::resolver::PrereleasePolicy::Allow);
      CHECK(q.index_strategy == gpulock::app::IndexStrategy::FirstIndex);
      CHECK_FALSE(q.exclude_newer);
      CHECK(q.machine.driver == "550.54.14");
      CHECK(q.machine.cuda_ceiling == "12.4");
      CHECK(q.machine.gpu_arch == "sm_86,sm_80");  // the text as given
      CHECK(q.cuda_compat == gpulock::gpu::CudaCompat::Minor);
      CHECK(q.target.python_version == "3.11");
      CHECK(q.target.platform == "manylinux_2_28_x86_64");
      CHECK_FALSE(q.torch_backend);
    });
  }
  SECTION("the torch family's index, CPU builds, no GPU") {
    fs::path dir = fresh_dir("record-torch");
    write_file(dir / "requirements.txt", "torch\n");
    Options o;
    o.cwd = dir;
    o.setuptools_from_pypi = true;
    Run r = resolve(
        {"torchvision", "-r", "requirements.txt", "--torch-backend", "cpu", "--driver", "none",
         "--exclude-newer", "2025-07-01", "--index-for", "pillow=pypi", "-o", "pylock.toml"},
        o);
    INFO(describe(r));
    REQUIRE(r.status == 0);
    round_trip(dir, [&](const gpulock::app::ResolveRequest& q) {
      CHECK(q.requirements == std::vector<std::string>{"torchvision"});
      REQUIRE(q.torch_backend);
      CHECK(q.torch_backend->to_string() == "cpu");
      CHECK(q.torch_index_base == servers().torch_index_base());
      REQUIRE(q.named_indexes.size() == 1);
      CHECK(q.named_indexes[0].name == "pypi");
      REQUIRE(q.index_for.size() == 2);
      CHECK(q.index_for[0].to_string() == "pillow=pypi");
      CHECK(q.index_for[1].to_string() == "setuptools=pypi");
      REQUIRE(q.exclude_newer);
      CHECK(q.exclude_newer->to_string() == "2025-07-01");
      CHECK(q.machine.driver == "none");
      CHECK(q.machine.cuda_ceiling.empty());
      CHECK(q.machine.gpu_arch.empty());
    });
  }
}
