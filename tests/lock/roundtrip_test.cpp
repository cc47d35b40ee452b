// Writer/reader round trips: models built in memory, gpulock's own golden locks (byte for byte),
// and foreign locks shaped like PEP 751's example, pip's and uv's output.
#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "gpulock/lock/lockfile.h"
#include "gpulock/lock/wheel_files.h"

#include "lock_test_support.h"

using namespace gpulock::lock;
using lock_test::fixtures;
using lock_test::read_file;

namespace {

std::string sha(char c) {
  return std::string(64, c);
}

gpulock::gpu::DriverVersion driver(std::string_view text) {
  return gpulock::gpu::DriverVersion::parse(text).value();
}

FileEntry wheel(std::string name, std::string url, char hash) {
  FileEntry f;
  f.name = std::move(name);
  f.url = std::move(url);
  f.hashes.emplace("sha256", sha(hash));
  return f;
}

// A lock that uses every field of the model.
Lock sample_lock() {
  Lock lock;
  lock.created_by = "gpulock 0.1.0";
  lock.command = "gpulock resolve torch -o pylock.toml";
  lock.environments = std::vector<std::string>{"sys_platform == \"linux\""};
  lock.requires_python = ">=3.11";
  lock.extras = std::vector<std::string>{};
  lock.dependency_groups = std::vector<std::string>{"dev"};
  lock.default_groups = std::vector<std::string>{};

  Package torch;
  torch.name = "torch";
  torch.version = "2.5.1+cu124";
  torch.marker = "platform_machine == \"x86_64\"";
  torch.requires_python = ">=3.9";
  torch.index = "https://download.pytorch.org/whl/cu124";
  torch.dependencies = std::vector<TomlTable>{TomlTable{{"name", TomlValue("filelock")}}};
  FileEntry w = wheel("torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl",
                      "https://download.pytorch.org/whl/cu124/"
                      "torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl",
                      'a');
  w.size = 908215347;
  w.upload_time = TomlDatetime{{2024, 10, 29}, {17, 0, 1, 123456000}, 0};
  w.hashes.emplace("sha512", std::string(128, 'b'));
  torch.wheels = std::vector<FileEntry>{w};
  torch.attestation_identities = std::vector<TomlTable>{
      TomlTable{{"kind", TomlValue("GitHub")}, {"repository", TomlValue("pytorch/pytorch")}}};
  torch.tool = TomlTable{{"gpulock", TomlValue(TomlTable{{"cuda", TomlValue("12.4")}})}};

  Package filelock;
  filelock.name = "filelock";
  filelock.version = "3.16.1";
  FileEntry sd;
  sd.name = "filelock-3.16.1.tar.gz";
  sd.path = "dist/filelock-3.16.1.tar.gz";
  sd.hashes.emplace("sha256", sha('c'));
  filelock.sdist = sd;
  filelock.wheels = std::vector<FileEntry>{};

  Package vcs;
  vcs.name = "mylib";
  vcs.vcs = VcsSource{"git",
                      "https://example.org/mylib.git",
                      std::nullopt,
                      "main",
                      "0123456789abcdef0123456789abcdef01234567",
                      "sub",
                      {},
                      {}};
  Package dir;
  dir.name = "project";
  dir.directory = DirectorySource{".", false, std::nullopt, {}, {}};
  Package archive;
  archive.name = "tarball";
  archive.version = "1.0";
  FileEntry a;
  a.url = "https://example.org/tarball-1.0.zip";
  a.size = 0;
  a.hashes.emplace("sha256", sha('d'));
  a.subdirectory = "pkg";
  archive.archive = a;
  lock.packages = {torch, filelock, vcs, dir, archive};

  GpulockTool g;
  g.indexes = {
      IndexRecord{"pypi", "https://pypi.org/simple/", "default", "env PIP_INDEX_URL", {}},
      IndexRecord{"torch-cu124", "https://download.pytorch.org/whl/cu124", "torch", {}, {}}};
  GpulockInputs in;
  in.requirements = {"torch==2.5.1", "numpy ; python_version >= \"3.11\""};
  in.files = {InputFile{"requirements.txt", "requirements", sha('e'), {}}};
  in.extras = {};
  in.groups = {"dev"};
  in.options = {{"index-strategy", "first-index"}, {"torch-backend", "auto"}};
  in.sha256 = sha('f');
  g.inputs = in;
  g.target = GpulockTarget{"3.11", "manylinux_2_28_x86_64", {}, {}, {}, {}, {}};
  GpulockGpu gpu;
  gpu.driver = gpulock::gpu::DriverSpec::of(driver("550.54.14"));
  gpu.cuda_ceiling = gpulock::gpu::CudaVersion{12, 4};
  gpu.method = "override";
  gpu.compat = gpulock::gpu::CudaCompat::Strict;
  gpu.archs = {{8, 0}, {9, 0}};
  gpu.variant = "cu124";
  gpu.cuda = gpulock::gpu::CudaVersion{12, 4};
  gpu.cudnn = "9.1.0.70";
  gpu.min_driver = driver("550.54.14");
  g.gpu = gpu;
  GpulockSnapshot snap;
  snap.exclude_newer = TomlDatetime{{2025, 1, 1}, {0, 0, 0, 0}, 0};
  snap.nightly = "2025-01-01";
  g.snapshot = snap;
  lock.gpulock = g;
  lock.tool.emplace("other", TomlValue(TomlTable{{"x", TomlValue(1)}}));
  canonicalize(lock);
  return lock;
}

std::vector<std::size_t> lines_starting_with(const std::string& text, std::string_view prefix) {
  std::vector<std::size_t> out;
  std::size_t line = 1;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (std::string_view(text).substr(pos, end - pos).starts_with(prefix)) out.push_back(line);
    pos = end + 1;
    ++line;
  }
  return out;
}

}  // namespace

TEST_CASE("read(write(x)) == x for a model using every field", "[lock][roundtrip]") {
  const Lock lock = sample_lock();
  const std::string text = to_toml(lock);
  INFO(text);
  auto back = parse_lock(text, "pylock.toml");
  REQUIRE(back.has_value());
  CHECK(back->warnings.empty());
  CHECK(back->lock == lock);
  CHECK(to_toml(back->lock) == text);
  CHECK(text.back() == '\n');
  CHECK(text.starts_with(
      "# Generated by gpulock. Do not edit by hand; change the inputs and run again:\n"
      "#   gpulock resolve torch -o pylock.toml\nlock-version = \"1.0\"\n"));
  lock_test::check_text_with_tomllib(text);
  CHECK(validate_lock(lock).has_value());
}

TEST_CASE("the same model gives the same bytes whatever its package order", "[lock][writer]") {
  Lock lock = sample_lock();
  const std::string text = to_toml(lock);
  std::mt19937 rng(42);
  for (int i = 0; i < 5; ++i) {
    std::shuffle(lock.packages.begin(), lock.packages.end(), rng);
    CHECK(to_toml(lock) == text);
  }
}

TEST_CASE("packages sort by name, then PEP 440 version, then marker", "[lock][writer]") {
  Lock lock;
  lock.created_by = "t";
  auto pkg = [](std::string name, std::string version, std::optional<std::string> marker) {
    Package p;
    p.name = std::move(name);
    p.version = version;
    p.marker = std::move(marker);
    p.wheels = std::vector<FileEntry>{
        wheel(p.name + "-" + version + "-py3-none-any.whl", "https://x/w.whl", 'a')};
    return p;
  };
  lock.packages = {pkg("zeta", "1.0", std::nullopt),
                   pkg("alpha", "1.10", std::nullopt),
                   pkg("alpha", "1.9", "sys_platform == \"win32\""),
                   pkg("alpha", "1.9", "sys_platform == \"linux\""),
                   pkg("alpha", "1.10rc1", "sys_platform == \"darwin\""),
                   pkg("mid", "2.0", std::nullopt)};
  canonicalize(lock);
  std::vector<std::string> order;
  for (const auto& p : lock.packages)
    order.push_back(p.name + " " + *p.version);
  CHECK(order == std::vector<std::string>{"alpha 1.9", "alpha 1.9", "alpha 1.10rc1", "alpha 1.10",
                                          "mid 2.0", "zeta 1.0"});
  CHECK(lock.packages[0].marker == "sys_platform == \"linux\"");
  const std::string text = to_toml(lock);
  auto back = parse_lock(text, "p.toml");
  REQUIRE(back.has_value());
  CHECK(back->lock == lock);
  lock_test::check_text_with_tomllib(text);
}

TEST_CASE("gpulock's own golden locks: write(read(file)) == file byte for byte", "[lock][golden]") {
  for (const char* name : {"gpulock-cu124.toml", "gpulock-features.toml"}) {
    INFO(name);
    const auto path = fixtures() / name;
    const std::string original = read_file(path);
    auto file = read_lock_file(path);
    REQUIRE(file.has_value());
    CHECK(file->warnings.empty());
    const std::string written = to_toml(file->lock);
    CHECK(written == original);
    auto again = parse_lock(written, name);
    REQUIRE(again.has_value());
    CHECK(again->lock == file->lock);
    lock_test::check_with_tomllib(path);
  }
}

TEST_CASE("the golden GPU lock carries its [tool.gpulock] facts", "[lock][golden]") {
  auto file = read_lock_file(fixtures() / "gpulock-cu124.toml");
  REQUIRE(file.has_value());
  const Lock& lock = file->lock;
  CHECK(lock.command.starts_with("gpulock resolve torch==2.5.1"));
  REQUIRE(lock.gpulock.has_value());
  REQUIRE(lock.gpulock->gpu.has_value());
  CHECK(lock.gpulock->gpu->variant == "cu124");
  CHECK(lock.gpulock->gpu->cudnn == "9.1.0.70");
  CHECK(lock.gpulock->gpu->min_driver == driver("550.54.14"));
  CHECK(lock.gpulock->gpu->archs == std::vector<gpulock::gpu::ComputeCapability>{{9, 0}});
  REQUIRE(lock.gpulock->inputs.has_value());
  CHECK(lock.gpulock->inputs->files.size() == 1);
  CHECK(lock.gpulock->inputs->options.at("torch-backend") == "auto");
  CHECK(lock.gpulock->target->platform == "manylinux_2_28_x86_64");
  CHECK(lock.gpulock->indexes.size() == 2);
  REQUIRE(lock.gpulock->snapshot.has_value());
  CHECK(to_toml_text(*lock.gpulock->snapshot->exclude_newer) == "2025-01-01T00:00:00Z");
  auto torch = find_packages(lock, "Torch");
  REQUIRE(torch.size() == 1);
  CHECK(torch[0]->wheels->at(0).filename() == "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl");
}

TEST_CASE("the reader records the line of every package and wheel", "[lock][reader]") {
  SECTION("gpulock's layout: one wheel per line") {
    const auto path = fixtures() / "gpulock-features.toml";
    const std::string text = read_file(path);
    auto file = read_lock_file(path);
    REQUIRE(file.has_value());
    const auto headers = lines_starting_with(text, "[[packages]]");
    REQUIRE(headers.size() == file->lock.packages.size());
    for (std::size_t i = 0; i < headers.size(); ++i) {
      CHECK(file->lock.packages[i].line.line == headers[i]);
    }
    // The linux numpy entry has two wheels on the two lines after `wheels = [`.
    const Package& numpy = file->lock.packages[5];
    REQUIRE(numpy.name == "numpy");
    REQUIRE(numpy.wheels->size() == 2);
    const auto wheel_lines = lines_starting_with(text, "  { name = \"numpy-2.2.3-cp312-cp312-many");
    REQUIRE(wheel_lines.size() == 2);
    CHECK(numpy.wheels->at(0).line.line == wheel_lines[0]);
    CHECK(numpy.wheels->at(1).line.line == wheel_lines[1]);
    CHECK(file->lock.gpulock->line.line == lines_starting_with(text, "[tool.gpulock]")[0]);
    CHECK(file->lock.gpulock->inputs->line.line ==
          lines_starting_with(text, "[tool.gpulock.inputs]")[0]);
  }
  SECTION("pip's layout: [[packages.wheels]] tables") {
    const auto path = fixtures() / "foreign" / "pip-lock.toml";
    const std::string text = read_file(path);
    auto file = read_lock_file(path);
    REQUIRE(file.has_value());
    const auto headers = lines_starting_with(text, "[[packages]]");
    const auto wheels = lines_starting_with(text, "[[packages.wheels]]");
    REQUIRE(headers.size() == 3);
    REQUIRE(wheels.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(file->lock.packages[i].line.line == headers[i]);
      CHECK(file->lock.packages[i].wheels->at(0).line.line == wheels[i]);
    }
  }
}

TEST_CASE("foreign locks are read without loss and canonicalized once", "[lock][foreign]") {
  for (const char* stem : {"pep751-example", "pip-lock", "uv-export"}) {
    INFO(stem);
    const auto foreign = fixtures() / "foreign" / (std::string(stem) + ".toml");
    const auto canonical_path = fixtures() / "foreign" / (std::string(stem) + ".canonical.toml");
    auto file = read_lock_file(foreign);
    REQUIRE(file.has_value());
    const std::string canonical = to_toml(file->lock);
    // GPULOCK_UPDATE_GOLDEN=1 rewrites the golden (review the diff).
    if (std::getenv("GPULOCK_UPDATE_GOLDEN") != nullptr)
      lock_test::write_file(canonical_path, canonical);
    // Re-writing gives gpulock's canonical form (golden) ...
    CHECK(canonical == read_file(canonical_path));
    // ... which holds exactly the same data ...
    auto reread = parse_lock(canonical, canonical_path.string());
    REQUIRE(reread.has_value());
    Lock original = file->lock;
    canonicalize(original);
    CHECK(reread->lock == original);
    // ... and a second round trip changes nothing.
    CHECK(to_toml(reread->lock) == canonical);
    lock_test::check_with_tomllib(canonical_path);
    lock_test::check_with_tomllib(foreign);
  }
}

TEST_CASE("foreign details survive: offsets, local date-times, attestations, tool tables",
          "[lock][foreign]") {
  auto file = read_lock_file(fixtures() / "foreign" / "pep751-example.toml");
  REQUIRE(file.has_value());
  const Lock& lock = file->lock;
  CHECK(lock.created_by == "mousebender");
  CHECK(lock.requires_python == "==3.12");
  CHECK(!lock.extras.has_value());
  REQUIRE(lock.packages.size() == 3);
  const Package& attrs = lock.packages[0];
  REQUIRE(attrs.attestation_identities.has_value());
  CHECK(attrs.attestation_identities->at(0).at("workflow") == TomlValue("pypi-package.yml"));
  CHECK(to_toml_text(*attrs.wheels->at(0).upload_time) == "2025-01-25T11:30:10.164985Z");
  CHECK(lock.packages[1].dependencies->at(0).at("name") == TomlValue("attrs"));
  const auto& mb = *lock.tool.at("mousebender").get_if<TomlTable>();
  const auto* run_on = mb.at("run-on").get_if<TomlDatetime>();
  REQUIRE(run_on != nullptr);
  CHECK_FALSE(run_on->offset_minutes.has_value());
  CHECK(mb.at("command").get_if<TomlArray>()->size() == 8);
  CHECK(file->warnings.empty());

  auto uv = read_lock_file(fixtures() / "foreign" / "uv-export.toml");
  REQUIRE(uv.has_value());
  CHECK(uv->lock.command.empty());  // uv's header comment is not gpulock's
  const auto torch = find_packages(uv->lock, "torch");
  REQUIRE(torch.size() == 2);
  // In file order; the URL's %2B is decoded in the file name.
  CHECK(torch[0]->wheels->at(0).filename() == "torch-2.6.0+cpu-cp311-cp311-linux_x86_64.whl");
  CHECK(torch[1]->wheels->at(0).filename() == "torch-2.6.0-cp311-none-macosx_11_0_arm64.whl");
}

TEST_CASE("a newer minor lock-version is read with warnings and keeps unknown keys",
          "[lock][reader]") {
  const std::string text =
      "lock-version = \"1.1\"\n"
      "created-by = \"future-tool\"\n"
      "new-top = { a = 1 }\n"
      "\n"
      "[[packages]]\n"
      "name = \"a\"\n"
      "version = \"1.0\"\n"
      "new-key = [\"x\"]\n"
      "wheels = [{ name = \"a-1.0-py3-none-any.whl\", url = \"https://x/a.whl\", "
      "upload-time = 2025-01-01T02:00:00+02:00, hashes = { sha256 = \"" +
      sha('a') + "\" }, mirror = \"https://m/a.whl\" }]\n";
  auto file = parse_lock(text, "future.toml");
  REQUIRE(file.has_value());
  std::vector<std::string> warnings;
  for (const auto& w : file->warnings)
    warnings.push_back(w.to_string());
  CAPTURE(warnings);
  REQUIRE(warnings.size() == 5);
  CHECK(warnings[0] ==
        "future.toml:1: lock-version '1.1' is newer than 1.0; keys this gpulock "
        "does not know are kept but not checked");
  CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
          return w.find("unknown key 'mirror' in wheel 1 of package 'a'") != std::string::npos &&
                 w.starts_with("future.toml:9:");
        }) == 1);
  CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
          return w.find("not in UTC") != std::string::npos;
        }) == 1);
  const Package& a = file->lock.packages[0];
  CHECK(a.unknown.at("new-key") == TomlValue(TomlArray{TomlValue("x")}));
  CHECK(a.wheels->at(0).unknown.at("mirror") == TomlValue("https://m/a.whl"));
  CHECK(to_toml_text(*a.wheels->at(0).upload_time) == "2025-01-01T00:00:00Z");
  const std::string written = to_toml(file->lock);
  INFO(written);
  CHECK(written.find("lock-version = \"1.1\"\n") != std::string::npos);
  CHECK(written.find("new-top = { a = 1 }\n") != std::string::npos);
  CHECK(written.find("mirror = \"https://m/a.whl\" }") != std::string::npos);
  auto back = parse_lock(written, "again.toml");
  REQUIRE(back.has_value());
  CHECK(back->lock == file->lock);
}

TEST_CASE("an unknown [tool.gpulock] schema is kept as an opaque table with a warning",
          "[lock][reader]") {
  const std::string text =
      "lock-version = \"1.0\"\ncreated-by = \"gpulock 9\"\npackages = []\n\n"
      "[tool.gpulock]\nschema = 2\nsomething = \"new\"\n";
  auto file = parse_lock(text, "p.toml");
  REQUIRE(file.has_value());
  CHECK_FALSE(file->lock.gpulock.has_value());
  REQUIRE(file->warnings.size() == 1);
  CHECK(file->warnings[0].line == 6);
  CHECK(file->lock.tool.at("gpulock").get_if<TomlTable>()->at("schema") == TomlValue(2));
  const std::string written = to_toml(file->lock);
  CHECK(written.find("[tool.gpulock]\nschema = 2\nsomething = \"new\"\n") != std::string::npos);
}

TEST_CASE("credentials in URLs are never written", "[lock][writer]") {
  Lock lock;
  lock.created_by = "t";
  Package p;
  p.name = "a";
  p.version = "1.0";
  p.index = "https://user:secret@private.example/simple/";
  p.wheels = std::vector<FileEntry>{
      wheel("a-1.0-py3-none-any.whl", "https://token@files.example/a-1.0-py3-none-any.whl", 'a')};
  Package v;
  v.name = "b";
  v.vcs = VcsSource{"git",        "git+ssh://git:pw@github.com/x/b.git",
                    std::nullopt, std::nullopt,
                    "abc",        std::nullopt,
                    {},           {}};
  lock.packages = {p, v};
  GpulockTool g;
  g.indexes = {
      IndexRecord{"private", "https://user:secret@private.example/simple/", "default", {}, {}}};
  lock.gpulock = g;
  const std::string text = to_toml(lock);
  INFO(text);
  CHECK(text.find("secret") == std::string::npos);
  CHECK(text.find("token") == std::string::npos);
  CHECK(text.find("index = \"https://private.example/simple/\"") != std::string::npos);
  CHECK(text.find("url = \"https://files.example/a-1.0-py3-none-any.whl\"") != std::string::npos);
  CHECK(text.find("git+ssh://git@github.com/x/b.git") != std::string::npos);
  lock_test::check_text_with_tomllib(text);
}

// Found by fuzz/pylock.cpp (fuzz/corpus/pylock/crash-header-command-tab): the reader kept the
// header command as written, tab included, while the writer writes a tab as a space, so
// read(write(x)) != x.
TEST_CASE("a header command is read as the writer writes it", "[lock][reader]") {
  const std::string head =
      "# Generated by gpulock. Do not edit by hand; change the inputs and run again:\n#   ";
  const std::string body = "lock-version = \"1.0\"\ncreated-by = \"t\"\npackages = []\n";
  for (const auto& [line, command] : std::vector<std::pair<std::string, std::string>>{
           {"gpulock resolve -o p\tylock.toml\n", "gpulock resolve -o p ylock.toml"},
           {"gpulock resolve torch\r\n", "gpulock resolve torch"},
       }) {
    auto file = parse_lock(head + line + body, "p.toml");
    REQUIRE(file.has_value());
    CHECK(file->lock.command == command);
    auto back = parse_lock(to_toml(file->lock), "p.toml");
    REQUIRE(back.has_value());
    CHECK(back->lock == file->lock);
  }
}

TEST_CASE("a header command is kept on one line", "[lock][writer]") {
  Lock lock;
  lock.created_by = "t";
  WriteOptions options;
  options.command = "gpulock resolve 'a\nb' \x1b[31m";
  const std::string text = to_toml(lock, options);
  CHECK(
      text.starts_with("# Generated by gpulock. Do not edit by hand; change the inputs and run "
                       "again:\n#   gpulock resolve 'a b'  [31m\nlock-version"));
  auto back = parse_lock(text, "p.toml");
  REQUIRE(back.has_value());
  CHECK(back->lock.command == "gpulock resolve 'a b'  [31m");
  Lock plain;
  plain.created_by = "t";
  CHECK(to_toml(plain) ==
        "# Generated by gpulock. Do not edit by hand.\nlock-version = \"1.0\"\ncreated-by = "
        "\"t\"\npackages = []\n");
}

TEST_CASE("validate_lock applies the reader's rules to a model", "[lock][writer]") {
  Lock lock = sample_lock();
  REQUIRE(validate_lock(lock).has_value());
  lock.packages[0].wheels.reset();
  lock.packages[0].sdist.reset();
  auto s = validate_lock(lock);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().message.find("has no source") != std::string::npos);
}

TEST_CASE("values directly under [tool] and a typed [tool.gpulock] round trip", "[lock][writer]") {
  Lock lock;
  lock.created_by = "t";
  lock.tool.emplace("flag", TomlValue(true));
  lock.tool.emplace("x",
                    TomlValue(TomlTable{{"nested", TomlValue(TomlTable{{"k", TomlValue(1)}})}}));
  lock.gpulock = GpulockTool{};
  const std::string text = to_toml(lock);
  INFO(text);
  CHECK(text.find("\n[tool.x.nested]\nk = 1\n") != std::string::npos);
  CHECK(text.find("\n[tool.x]\n") == std::string::npos);  // implicit: it holds only a table
  CHECK(text.find("\n[tool]\nflag = true\n") != std::string::npos);
  auto back = parse_lock(text, "p.toml");
  REQUIRE(back.has_value());
  CHECK(back->lock == lock);
  lock_test::check_text_with_tomllib(text);

  // A raw [tool.gpulock] next to the typed one is not written twice.
  lock.tool.emplace("gpulock", TomlValue(TomlTable{{"schema", TomlValue(7)}}));
  auto again = parse_lock(to_toml(lock), "p.toml");
  REQUIRE(again.has_value());
  CHECK(again->lock.gpulock.has_value());
}

// [tool.gpulock.gpu] holds typed values; each is written as the text gpulock wrote before
// (the type's canonical print), so a lock gpulock wrote reads and writes back byte for byte.
TEST_CASE("[tool.gpulock.gpu]'s typed values write back as the text they were read from",
          "[lock][roundtrip]") {
  const std::string head =
      "# Generated by gpulock. Do not edit by hand; change the inputs and run again:\n"
      "#   gpulock resolve torch -o pylock.toml\n"
      "lock-version = \"1.0\"\ncreated-by = \"gpulock 0.1.0\"\npackages = []\n\n"
      "[tool.gpulock]\nschema = 1\nindexes = []\n\n[tool.gpulock.gpu]\n";
  const std::string tables[] = {
      // A driver keeps its text: leading zeros and one part are not rewritten.
      "driver = \"535.54.03\"\ncuda-ceiling = \"12.2\"\nmethod = \"nvml\"\ncompat = \"minor\"\n"
      "archs = [\"sm_120\", \"sm_61\", \"sm_90\"]\nvariant = \"cu118\"\ncuda = \"11.8\"\n"
      "cudnn = \"9.1.0.70\"\nmin-driver = \"450.80.02\"\n",
      "driver = \"580\"\ncuda-ceiling = \"13.0\"\nmethod = \"override\"\ncompat = \"strict\"\n"
      "archs = []\nvariant = \"cu130\"\ncuda = \"13.0\"\nmin-driver = \"580\"\n",
      "driver = \"none\"\ncompat = \"strict\"\narchs = []\nvariant = \"cpu\"\n",
  };
  for (const auto& table : tables) {
    const std::string text = head + table;
    INFO(text);
    auto file = parse_lock(text, "p.toml");
    REQUIRE(file.has_value());
    CHECK(file->warnings.empty());
    CHECK(to_toml(file->lock) == text);
  }
  auto file = parse_lock(head + tables[0], "p.toml");
  REQUIRE(file.has_value());
  const GpulockGpu& g = *file->lock.gpulock->gpu;
  CHECK(g.driver->version()->parts() == std::vector<std::uint32_t>{535, 54, 3});
  CHECK(g.cuda_ceiling == gpulock::gpu::CudaVersion{12, 2});
  CHECK(g.compat == gpulock::gpu::CudaCompat::Minor);
  CHECK(g.archs == std::vector<gpulock::gpu::ComputeCapability>{{12, 0}, {6, 1}, {9, 0}});
  CHECK(g.cuda == gpulock::gpu::CudaVersion{11, 8});
  CHECK(g.min_driver == driver("450.80.02"));
  auto none = parse_lock(head + tables[2], "p.toml");
  REQUIRE(none.has_value());
  CHECK(none->lock.gpulock->gpu->driver->is_none());
}

TEST_CASE("a wheel's file record is written, read back and typed", "[lock][roundtrip][files]") {
  Lock lock;
  lock.created_by = "gpulock test";
  Package p;
  p.name = "nvidia-cudnn-cu13";
  p.version = "9.20.0.48";
  const std::string file = "nvidia_cudnn_cu13-9.20.0.48-py3-none-manylinux_2_27_x86_64.whl";
  p.wheels = std::vector<FileEntry>{wheel(file, "https://example.org/" + file, 'a')};
  WheelFiles rec;
  rec.members = 31;
  rec.members_sha256 = sha('b');
  for (const char* lib : {"libcudnn.so.9", "libcudnn_adv.so.9", "libcudnn_cnn.so.9",
                          "libcudnn_engines_precompiled.so.9", "libcudnn_graph.so.9"})
    rec.shared_libraries.push_back(std::string("nvidia/cu13/lib/") + lib);
  set_wheel_files(p, file, rec);
  // Setting it again replaces the record, and other keys of [packages.tool.gpulock] stay.
  std::get<TomlTable>((*p.tool)["gpulock"].data)["variant"] = "x";
  set_wheel_files(p, file, rec);
  lock.packages.push_back(p);

  const std::string text = to_toml(lock);
  INFO(text);
  CHECK(text.find("[packages.tool.gpulock.files.\"" + file + "\"]\nmembers = 31\n") !=
        std::string::npos);
  // A long list gets one library per line.
  CHECK(text.find("shared-libraries = [\n  \"nvidia/cu13/lib/libcudnn.so.9\",\n") !=
        std::string::npos);
  auto back = parse_lock(text, "pylock.toml");
  REQUIRE(back.has_value());
  CHECK(back->lock == lock);
  auto files = wheel_files(back->lock.packages.at(0));
  REQUIRE(files.has_value());
  REQUIRE(files->size() == 1);
  CHECK(files->at(file) == rec);
  CHECK(back->lock.packages.at(0).tool->at("gpulock").get_if<TomlTable>()->contains("variant"));
  lock_test::check_text_with_tomllib(text);

  // A package without a record has none.
  Package plain;
  plain.name = "a";
  CHECK(wheel_files(plain).value().empty());
}
