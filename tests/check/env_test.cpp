// The env layer: a real venv (`python3 -m venv`) filled with `pip install --no-deps` from the
// fixture index over nginx, then changed with pip the way environments drift. One venv for the
// whole binary: the steps run in order in one test case.
#include "check_support.h"

using namespace check_test;

namespace {

struct Venv {
  Workdir w;
  std::string url = gpulock::test::shared_servers().http_url();
  std::string python;
  explicit Venv(const std::string& name) : w(name) {
    python = (w / "venv/bin/python").string();
    auto v = w.shell("python3 -m venv venv");
    INFO(v.out << v.err);
    REQUIRE(v.status == 0);
  }
  // pip with the fixture index (PyPI-like first, then the given PyTorch-like variant).
  Run pip(const std::string& args, const std::string& variant = "cpu") const {
    return w.shell(
        "PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_NO_CACHE_DIR=1 "
        "PIP_CONFIG_FILE=/dev/null " +
        shell_quote(python) + " -m pip -q " + args + " --index-url " + url +
        "/simple/ --extra-index-url " + url + "/whl/" + variant + "/");
  }
  std::string version_of(const std::string& dist) const {
    auto r =
        w.shell(shell_quote(python) +
                " -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' " + dist);
    REQUIRE(r.status == 0);
    return lines_of(r.out).at(0);
  }
};

// Every line of `out` that starts with `prefix`.
std::vector<std::string> starting_with(const std::string& out, const std::string& prefix) {
  std::vector<std::string> found;
  for (const auto& l : lines_of(out)) {
    if (l.starts_with(prefix)) found.push_back(l);
  }
  return found;
}

// cuDNN 9.1.0.70 (and the cuBLAS it pins) locked for driver 550 and installed by pip from the
// lock's export into `v`: an environment another tool made from the lock.
// The venv's site-packages (its interpreter's sysconfig purelib).
std::string purelib(Workdir& w, const std::string& python) {
  return lines_of(w.shell(shell_quote(python) +
                          " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'")
                      .out)
      .at(0);
}

LockScan lock_and_pip_install_cudnn(Venv& v) {
  auto& w = v.w;
  auto r = w.gpulock("resolve nvidia-cudnn-cu12==9.1.0.70 " + fixture_indexes(v.url) + " " +
                     kTarget + " --driver 550.54.14 -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  check_lock_independently(w / "pylock.toml");
  REQUIRE(w.gpulock("export -o locked.txt").status == 0);
  auto installed = v.pip("install --no-deps --require-hashes -r locked.txt");
  INFO(installed.out << installed.err);
  REQUIRE(installed.status == 0);
  return scan_lock(w / "pylock.toml");
}

}  // namespace

TEST_CASE("check env: versions, variants, extras, missing packages and RECORD, in one venv",
          "[check][env]") {
  Venv v("env");
  auto& w = v.w;
  write_file(w / "requirements.txt", "torch==2.7.1\n");
  // filelock from the PyPI-like index (its newest; the torch index's copy is 3.13.1, the version
  // installed below as drift).
  auto r = w.gpulock("resolve -r requirements.txt --torch-backend cpu " + fixture_indexes(v.url) +
                     " --index pypi=" + v.url + "/simple/ --index-for filelock=pypi " + kTarget +
                     " -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto lock = scan_lock(w / "pylock.toml");
  check_lock_independently(w / "pylock.toml");
  auto e = w.gpulock("export --format requirements-txt -o locked.txt");
  REQUIRE(e.status == 0);
  auto installed = v.pip("install --no-deps --require-hashes -r locked.txt");
  INFO(installed.out << installed.err);
  REQUIRE(installed.status == 0);
  const std::string py = "--python " + v.python;
  const std::string install_hint = "    hint: `gpulock install --lock pylock.toml --python " +
                                   v.python + "` installs the locked versions";

  {  // clean, then every kind of drift in turn
    // Clean: default layers with --python are inputs, env and machine.
    auto clean = w.gpulock("check " + py);
    INFO(clean.out << clean.err);
    CHECK(clean.status == 0);
    CHECK(starting_with(clean.out, "env: ") == std::vector<std::string>{"env: ok"});
    CHECK(clean.out.find("distributions installed; " + std::to_string(lock.packages.size()) +
                         " of the lock's " + std::to_string(lock.packages.size()) +
                         " packages apply to it") != std::string::npos);
    // An active virtualenv is checked without --python.
    auto active = w.shell("env " + std::string(Workdir::kNoConfiguration) +
                          " VIRTUAL_ENV=" + shell_quote((w / "venv").string()) +
                          " GPULOCK_DRIVER=none NO_COLOR=1 " + shell_quote(GPULOCK_EXE) + " check");
    CHECK(active.status == 0);
    CHECK(starting_with(active.out, "env: ") == std::vector<std::string>{"env: ok"});

    // --strict: the installer's own packages count as extra.
    auto strict = w.gpulock("check --env --strict " + py);
    CHECK(strict.status == 1);
    CHECK(strict.out.find("  error: pip " + v.version_of("pip") +
                          " is installed but not in the lock\n") != std::string::npos);

    // pip installs another version.
    const auto& filelock = lock.at("filelock");
    REQUIRE(filelock.version != "3.13.1");
    REQUIRE(v.pip("install --no-deps filelock==3.13.1").status == 0);
    auto other = w.gpulock("check --env " + py);
    INFO(other.out);
    CHECK(other.status == 1);
    auto errors = starting_with(other.out, "  error: ");
    CHECK(errors == std::vector<std::string>{
                        "  error: pylock.toml:" + std::to_string(filelock.line) +
                        ": filelock 3.13.1 is installed, but the lock has " + filelock.version});
    auto gh = w.gpulock("check --env --format github " + py);
    auto gl = lines_of(gh.out);
    REQUIRE(gl.size() == 2);
    CHECK(gl[0] == "::error file=pylock.toml,line=" + std::to_string(filelock.line) +
                       "::filelock 3.13.1 is installed, but the lock has " + filelock.version +
                       "%0Ahint: `gpulock install --lock pylock.toml --python " + v.python +
                       "` installs the locked versions");
    CHECK(gl[1] == "gpulock check pylock.toml (env): drift found: 1 error");
    REQUIRE(v.pip("install --no-deps filelock==" + filelock.version).status == 0);

    // An extra package.
    REQUIRE(v.pip("install --no-deps colorama==0.4.6").status == 0);
    auto extra = w.gpulock("check --env " + py);
    CHECK(extra.status == 1);
    CHECK(starting_with(extra.out, "  error: ") ==
          std::vector<std::string>{"  error: colorama 0.4.6 is installed but not in the lock"});
    CHECK(extra.out.find("    hint: `" + v.python +
                         " -m pip uninstall colorama`, or add it to the inputs and "
                         "re-resolve\n") != std::string::npos);
    auto egh = w.gpulock("check --env --format github " + py);
    CHECK(lines_of(egh.out).at(0).starts_with(
        "::error file=pylock.toml::colorama 0.4.6 is installed but not in the "
        "lock%0Ahint: "));
    REQUIRE(w.shell(shell_quote(v.python) + " -m pip -q uninstall -y colorama").status == 0);

    // Another variant: the CUDA build of the locked CPU torch.
    const auto& torch = lock.at("torch");
    REQUIRE(torch.version.ends_with("+cpu"));
    const std::string base = torch.version.substr(0, torch.version.size() - 4);
    REQUIRE(v.pip("install --no-deps torch==" + base + "+cu126", "cu126").status == 0);
    auto variant = w.gpulock("check --env " + py);
    INFO(variant.out);
    CHECK(variant.status == 1);
    CHECK(variant.out.find("  error: pylock.toml:" + std::to_string(torch.line) + ": torch " +
                           base + "+cu126 is installed, but the lock has " + torch.version +
                           ": another variant (+cu126 instead of +cpu)\n") != std::string::npos);
    // The load probe's verdict for that environment: a CUDA torch without its cuDNN wheel.
    auto vj = w.gpulock("check --env --json " + py);
    CHECK(vj.out.find("\"kind\": \"variant-differs\"") != std::string::npos);
    CHECK(vj.out.find("\"kind\": \"load-cudnn-not-installed\"") != std::string::npos);
    REQUIRE(v.pip("install --no-deps torch==" + torch.version).status == 0);

    // A locked package missing.
    const auto& sympy = lock.at("sympy");
    REQUIRE(w.shell(shell_quote(v.python) + " -m pip -q uninstall -y sympy").status == 0);
    auto missing = w.gpulock("check --env " + py);
    CHECK(missing.status == 1);
    CHECK(starting_with(missing.out, "  error: ") ==
          std::vector<std::string>{"  error: pylock.toml:" + std::to_string(sympy.line) +
                                   ": sympy " + sympy.version + " is locked but not installed"});
    CHECK(missing.out.find(install_hint + "\n") != std::string::npos);
    REQUIRE(v.pip("install --no-deps sympy==" + sympy.version).status == 0);

    // --deep: installed files against RECORD.
    auto deep_clean = w.gpulock("check --env --deep " + py);
    CHECK(deep_clean.status == 0);
    auto site = purelib(w, v.python);
    auto record = fs::path(site) / ("torch-" + torch.version + ".dist-info") / "RECORD";
    REQUIRE(fs::exists(record));
    std::size_t hashed = 0;
    for (const auto& l : lines_of(read_file(record)))
      hashed += l.find(",sha256=") != std::string::npos ? 1 : 0;
    const std::string init_py = read_file(fs::path(site) / "torch" / "__init__.py");
    const std::string version_py = read_file(fs::path(site) / "torch" / "version.py");
    write_file(fs::path(site) / "torch" / "__init__.py", init_py + "# edited\n");
    fs::remove(fs::path(site) / "torch" / "version.py");
    auto deep = w.gpulock("check --env --deep " + py);
    INFO(deep.out);
    CHECK(deep.status == 1);
    auto dl = lines_of(deep.out);
    auto at = std::find(dl.begin(), dl.end(),
                        "  error: pylock.toml:" + std::to_string(torch.line) + ": torch " +
                            torch.version + ": 2 of " + std::to_string(hashed) +
                            " installed files differ from its RECORD");
    REQUIRE(at != dl.end());
    REQUIRE(dl.end() - at >= 3);
    CHECK(*(at + 1) ==
          "      torch/__init__.py: modified (its sha256 is not the one RECORD lists)");
    CHECK(*(at + 2) == "      torch/version.py: missing");
    // Without --deep, the file list of torch's wheel (read at lock time; the lock records its
    // digest) finds the same two files, by their size: pip installed torch, so there is no
    // install-time record of sizes and mtimes.
    auto shallow = w.gpulock("check --env " + py);
    INFO(shallow.out);
    CHECK(shallow.status == 1);
    auto sl = lines_of(shallow.out);
    auto sat = std::find_if(sl.begin(), sl.end(), [&](const std::string& l) {
      return l.starts_with("  error: pylock.toml:" + std::to_string(torch.line) + ": torch " +
                           torch.version + ": 2 of the ") &&
             l.ends_with(
                 " installs in site-packages are missing or of another size (the file "
                 "list the lock records)");
    });
    REQUIRE(sat != sl.end());
    REQUIRE(sl.end() - sat >= 3);
    const std::vector<std::string> found{*(sat + 1), *(sat + 2)};
    CHECK(std::find(found.begin(), found.end(), "      torch/version.py: missing") != found.end());
    CHECK(std::find(found.begin(), found.end(),
                    "      torch/__init__.py: modified (size " +
                        std::to_string(init_py.size() + 9) + ", " + std::to_string(init_py.size()) +
                        " in the wheel)") != found.end());
    // Put back, the files are the wheel's again.
    write_file(fs::path(site) / "torch" / "__init__.py", init_py);
    write_file(fs::path(site) / "torch" / "version.py", version_py);
    CHECK(w.gpulock("check --env " + py).status == 0);

    // No RECORD at all: the files cannot be verified. A warning; --strict fails on it.
    fs::remove(record);
    auto unverifiable = w.gpulock("check --env --deep " + py);
    INFO(unverifiable.out);
    CHECK(unverifiable.status == 0);
    CHECK(starting_with(unverifiable.out, "env: ") == std::vector<std::string>{"env: 1 warning"});
    const std::string no_record = "pylock.toml:" + std::to_string(torch.line) + ": torch " +
                                  torch.version + " has no RECORD, so its files cannot be verified";
    CHECK(starting_with(unverifiable.out, "  warning: ") ==
          std::vector<std::string>{"  warning: " + no_record});
    CHECK(lines_of(unverifiable.out).back() == "pylock.toml: no drift, 1 warning");
    auto strict_deep = w.gpulock("check --env --deep --strict --format github " + py);
    CHECK(strict_deep.status == 1);
    CHECK(strict_deep.out.find("::error file=pylock.toml,line=" + std::to_string(torch.line) +
                               "::torch " + torch.version +
                               " has no RECORD, so its files cannot be verified%0Ahint: ") !=
          std::string::npos);
    auto uj = w.gpulock("check --env --deep --json " + py);
    CHECK(uj.out.find("\"kind\": \"record-unverifiable\",\n      \"severity\": \"warning\"") !=
          std::string::npos);
  }
}

TEST_CASE("check env --deep: nvidia-* wheels against their RECORD", "[check][env]") {
  Venv v("env-nvidia");
  auto& w = v.w;
  const auto lock = lock_and_pip_install_cudnn(v);
  const auto& cudnn = lock.at("nvidia-cudnn-cu12");
  const auto& cublas = lock.at("nvidia-cublas-cu12");
  const std::string py = "--python " + v.python;
  const std::string machine = "GPULOCK_DRIVER=550.54.14";

  auto clean = w.gpulock("check --env --deep " + py, machine);
  INFO(clean.out << clean.err);
  CHECK(clean.status == 0);
  CHECK(clean.out.find("  note: nvidia-cudnn-cu12 " + cudnn.version +
                       ": 14 files match RECORD\n") != std::string::npos);
  CHECK(clean.out.find("  note: nvidia-cublas-cu12 " + cublas.version) != std::string::npos);

  // A file edited, and a sub-library overwritten by another one (a mixed cuDNN install).
  auto site = purelib(w, v.python);
  const fs::path pkg = fs::path(site) / "nvidia" / "cudnn";
  write_file(pkg / "__init__.py", read_file(pkg / "__init__.py") + "# edited\n");
  fs::copy_file(pkg / "lib" / "libcudnn_ops.so.9", pkg / "lib" / "libcudnn_adv.so.9",
                fs::copy_options::overwrite_existing);
  auto deep = w.gpulock("check --env --deep " + py, machine);
  INFO(deep.out << deep.err);
  CHECK(deep.status == 1);
  auto dl = lines_of(deep.out);
  auto at =
      std::find(dl.begin(), dl.end(),
                "  error: pylock.toml:" + std::to_string(cudnn.line) + ": nvidia-cudnn-cu12 " +
                    cudnn.version + ": 2 of 14 installed files differ from its RECORD");
  REQUIRE(at != dl.end());
  REQUIRE(dl.end() - at >= 4);
  CHECK(*(at + 1) ==
        "      nvidia/cudnn/__init__.py: modified (its sha256 is not the one RECORD lists)");
  CHECK(*(at + 2) ==
        "      nvidia/cudnn/lib/libcudnn_adv.so.9: modified (its sha256 is not the "
        "one RECORD lists)");
  CHECK(*(at + 3) == "    hint: reinstall it: `" + v.python +
                         " -m pip uninstall -y nvidia-cudnn-cu12`, then `gpulock install --lock "
                         "pylock.toml --python " +
                         v.python + "`");
  // cuBLAS was not touched.
  CHECK(deep.out.find("  note: nvidia-cublas-cu12 " + cublas.version) != std::string::npos);
  // The load probe sees the foreign sub-library too (the env layer's load-* findings).
  auto j = w.gpulock("check --env --deep --json " + py, machine);
  CHECK(j.status == 1);
  CHECK(j.out.find("\"kind\": \"record-mismatch\",\n      \"severity\": \"error\",\n      "
                   "\"subject\": \"nvidia-cudnn-cu12\"") != std::string::npos);
  CHECK(j.out.find("\"layer\": \"env\",\n      \"kind\": \"load-") != std::string::npos);
  // Without --deep only the load probe reports it.
  auto shallow = w.gpulock("check --env --json " + py, machine);
  CHECK(shallow.out.find("\"kind\": \"record-mismatch\"") == std::string::npos);
}

// Issue 44 item 1: the lock records every wheel's file list (a digest over path, size and CRC-32
// and the shared libraries), read from the zip's central directory at lock time; `check --env`
// and install's sync compare an environment against it without a RECORD.
TEST_CASE("check env and install: the shared libraries the lock records for each wheel",
          "[check][env][files]") {
  Venv v("env-files");
  auto& w = v.w;
  // With NVRTC, which cuDNN dlopens and its wheel does not require (else the lock records it as
  // missing: tests/resolve/wheel_files_test.cpp).
  auto r = w.gpulock("resolve nvidia-cudnn-cu12==9.1.0.70 nvidia-cuda-nvrtc-cu12 " +
                     fixture_indexes(v.url) + " " + kTarget + " --driver 550.54.14 -o pylock.toml");
  INFO(r.err);
  REQUIRE(r.status == 0);
  check_lock_independently(w / "pylock.toml");
  const std::string text = read_file(w / "pylock.toml");
  INFO(text);
  // The record of the cuDNN wheel, against Python's own reading of the same wheel (zipfile).
  const fs::path wheel =
      gpulock::test::shared_servers().index_root() / "packages" / "nvidia-cudnn-cu12";
  write_file(w / "members.py",
             "import hashlib, pathlib, re, sys, zipfile\n"
             "whl = next(p for p in pathlib.Path(sys.argv[1]).rglob('*.whl')\n"
             "           if p.name.startswith('nvidia_cudnn_cu12-9.1.0.70-') and 'x86_64' in "
             "p.name)\n"
             "infos = [i for i in zipfile.ZipFile(whl).infolist() if not "
             "i.filename.endswith('/')]\n"
             "text = b''.join(i.filename.encode() + b'\\0' + str(i.file_size).encode() + "
             "b'\\0' +\n"
             "                ('%08x' % i.CRC).encode() + b'\\n'\n"
             "                for i in sorted(infos, key=lambda i: i.filename.encode()))\n"
             "libs = sorted(i.filename for i in infos\n"
             "              if re.fullmatch(r'lib.*\\.so(\\..*)?', i.filename.rsplit('/', "
             "1)[-1]))\n"
             "print(whl.name); print(len(infos)); print(hashlib.sha256(text).hexdigest())\n"
             "print('\\n'.join(libs))\n");
  auto expected = w.shell("python3 members.py " + shell_quote(wheel.string()));
  INFO(expected.err);
  REQUIRE(expected.status == 0);
  auto want = lines_of(expected.out);
  REQUIRE(want.size() == 3 + 8);  // the fixture wheel ships the eight cuDNN 9 libraries
  CHECK(text.find("\n[packages.tool.gpulock.files.\"" + want[0] + "\"]\nmembers = " + want[1] +
                  "\nmembers-sha256 = \"" + want[2] + "\"\nshared-libraries = [\n") !=
        std::string::npos);
  for (std::size_t i = 3; i < want.size(); ++i)
    CHECK(text.find("  \"" + want[i] + "\",\n") != std::string::npos);
  // Every locked wheel has a record (cuBLAS, the other package, too).
  CHECK(text.find("\n[packages.tool.gpulock.files.\"nvidia_cublas_cu12-") != std::string::npos);
  // A warm re-lock reads the lists from the cache: the same lock, offline.
  auto again = w.gpulock("resolve nvidia-cudnn-cu12==9.1.0.70 nvidia-cuda-nvrtc-cu12 " +
                         fixture_indexes(v.url) + " " + kTarget +
                         " --driver 550.54.14 --offline -o relock.toml");
  INFO(again.err);
  CHECK(again.status == 0);
  CHECK(again.err.find("records no file list") == std::string::npos);
  // The same lock but for the command in its header comment.
  auto body = [](const std::string& t) { return t.substr(t.find("\nlock-version")); };
  CHECK(body(read_file(w / "relock.toml")) == body(text));

  REQUIRE(w.gpulock("export -o locked.txt").status == 0);
  auto installed = v.pip("install --no-deps --require-hashes -r locked.txt");
  INFO(installed.out << installed.err);
  REQUIRE(installed.status == 0);
  const std::string py = "--python " + v.python;
  const std::string machine = "GPULOCK_DRIVER=550.54.14";
  auto clean = w.gpulock("check --env " + py, machine);
  INFO(clean.out << clean.err);
  CHECK(clean.out.find("locked-file-missing") == std::string::npos);
  CHECK(clean.out.find("shared libraries the lock records") == std::string::npos);

  // A library removed together with its RECORD line (a RECORD another tool rewrote): RECORD
  // cannot say so, the lock's record does.
  auto site = purelib(w, v.python);
  const std::string lib = "nvidia/cudnn/lib/libcudnn_graph.so.9";
  fs::remove(fs::path(site) / lib);
  fs::path record;
  for (const auto& e : fs::directory_iterator(site)) {
    if (e.path().filename().string().starts_with("nvidia_cudnn_cu12-"))
      record = e.path() / "RECORD";
  }
  REQUIRE(!record.empty());
  std::string rows;
  for (const auto& l : lines_of(read_file(record))) {
    if (!l.starts_with(lib + ",")) rows += l + "\n";
  }
  write_file(record, rows);
  auto missing = w.gpulock("check --env " + py, machine);
  INFO(missing.out << missing.err);
  CHECK(missing.status == 1);
  CHECK(missing.out.find(": nvidia-cudnn-cu12 9.1.0.70: 1 of the 8 shared libraries the lock "
                         "records for " +
                         want[0] + " is not installed\n      " + lib + ": missing\n") !=
        std::string::npos);
  auto j = w.gpulock("check --env --json " + py, machine);
  CHECK(j.out.find("\"kind\": \"locked-file-missing\"") != std::string::npos);
  // The probe knows the files the lock promised too, without RECORD (issue 44 item 4).
  auto probed = w.gpulock("probe --lock pylock.toml --json " + py, machine);
  INFO(probed.out << probed.err);
  CHECK(probed.out.find("\"id\": \"locked-file-missing\"") != std::string::npos);
  CHECK(probed.out.find("1 of the 8 shared libraries the lock records for " + want[0] +
                        " is not installed: " + lib + ".") != std::string::npos);
  // install's sync makes the same comparison, and puts the library back.
  auto fix = w.gpulock("install --lock pylock.toml --no-probe " + py, machine);
  INFO(fix.out << fix.err);
  CHECK(fix.status == 0);
  CHECK((fix.out + fix.err).find("a shared library the lock records is missing (" + lib + ")") !=
        std::string::npos);
  CHECK(fs::exists(fs::path(site) / lib));
  auto after = w.gpulock("check --env " + py, machine);
  INFO(after.out << after.err);
  CHECK(after.out.find("locked-file-missing") == std::string::npos);
  CHECK(after.out.find("shared libraries the lock records") == std::string::npos);

  // A lock whose record of the files was changed: when the wheel is read whole (a cold cache),
  // its list is read again and the install refused before the environment is touched.
  std::string edited = text;
  edited.replace(edited.find(want[2]), want[2].size(), std::string(64, '0'));
  write_file(w / "edited.toml", edited);
  auto bad = w.gpulock(
      "install --lock edited.toml --no-probe --cache-dir cold-cache --venv edited-venv", machine);
  INFO(bad.out << bad.err);
  CHECK(bad.status == 3);
  CHECK(bad.err.find("the lock's record of " + want[0] + "'s files (members-sha256 " +
                     std::string(64, '0') + ") is not the wheel's (" + want[2] + ")") !=
        std::string::npos);
  // Nothing of the lock reached the environment (the venv itself is made first).
  CHECK(w.shell("ls -d edited-venv/lib/python*/site-packages/nvidia*").status != 0);
}

// Issue 44 item 1: every file of each installed wheel against the wheel's member list (read from
// its zip at lock time, cached by the wheel's sha256; its digest is the lock's members-sha256),
// offline, for an environment another tool installed and without --deep: a file deleted or
// changed in size is drift, with or without RECORD saying so.
TEST_CASE("check env: every file of the wheels the lock records", "[check][env][files]") {
  Venv v("env-members");
  auto& w = v.w;
  const auto lock = lock_and_pip_install_cudnn(v);
  const auto& cudnn = lock.at("nvidia-cudnn-cu12");
  const auto& cublas = lock.at("nvidia-cublas-cu12");
  const std::string py = "--python " + v.python;
  const std::string machine = "GPULOCK_DRIVER=550.54.14";
  const std::string compared =
      "  note: the files of 2 installed wheels compared by path and size with the file lists the "
      "lock records\n";
  auto clean = w.gpulock("check --env " + py, machine);
  INFO(clean.out << clean.err);
  CHECK(clean.status == 0);
  CHECK(clean.out.find(compared) != std::string::npos);
  CHECK(clean.out.find("locked-file") == std::string::npos);

  // Two files that are not shared libraries: one deleted, one rewritten with another size (the
  // empty nvidia/__init__.py both wheels ship). RECORD still lists both; pip installed the
  // packages, so there is no install-time record of sizes and mtimes: only the lock's lists see
  // it without --deep.
  auto site = purelib(w, v.python);
  REQUIRE(fs::remove(fs::path(site) / "nvidia/cudnn/__init__.py"));
  write_file(fs::path(site) / "nvidia/__init__.py", "x = 1\n");
  auto drift = w.gpulock("check --env " + py, machine);
  INFO(drift.out << drift.err);
  CHECK(drift.status == 1);
  CHECK(drift.out.find("  error: pylock.toml:" + std::to_string(cudnn.line) +
                       ": nvidia-cudnn-cu12 9.1.0.70: 2 of the 12 files " + cudnn.wheel +
                       " installs in site-packages are missing or of another size (the file "
                       "list the lock records)\n      nvidia/cudnn/__init__.py: missing\n      "
                       "nvidia/__init__.py: modified (size 6, 0 in the wheel)\n    hint: "
                       "reinstall it: `" +
                       v.python +
                       " -m pip uninstall -y nvidia-cudnn-cu12`, then `gpulock install "
                       "--lock pylock.toml --python " +
                       v.python + "`\n") != std::string::npos);
  CHECK(drift.out.find("  error: pylock.toml:" + std::to_string(cublas.line) +
                       ": nvidia-cublas-cu12 " + cublas.version + ": 1 of the ") !=
        std::string::npos);
  CHECK(drift.out.find(" is missing or of another size (the file list the lock records)\n      "
                       "nvidia/__init__.py: modified (size 6, 0 in the wheel)\n") !=
        std::string::npos);
  CHECK(drift.out.find("pylock.toml: drift found: 2 errors") != std::string::npos);
  auto j = w.gpulock("check --env --format json " + py, machine);
  INFO(j.out);
  CHECK(j.status == 1);
  CHECK(j.out.find("\"kind\": \"locked-file-mismatch\"") != std::string::npos);
  CHECK(j.out.find("\"line\": " + std::to_string(cudnn.line)) != std::string::npos);
  CHECK(j.out.find("\"nvidia/cudnn/__init__.py: missing\"") != std::string::npos);
  auto gh = w.gpulock("check --env --format github " + py, machine);
  INFO(gh.out);
  CHECK(gh.status == 1);
  CHECK(gh.out.find("::error file=pylock.toml,line=" + std::to_string(cudnn.line) +
                    "::nvidia-cudnn-cu12 9.1.0.70: 2 of the 12 files ") != std::string::npos);

  // A lock for two platforms: of the package's two wheels, the one installed is the one whose
  // tags are the dist-info's WHEEL `Tag:` lines; without them, nothing is claimed.
  {
    auto arm = w.gpulock("resolve nvidia-cudnn-cu12==9.1.0.70 " + fixture_indexes(v.url) +
                         " --python-version 3.11 --platform manylinux_2_28_aarch64 --driver "
                         "550.54.14 -o arm.toml");
    INFO(arm.err);
    REQUIRE(arm.status == 0);
    const std::string arm_text = read_file(w / "arm.toml");
    std::string both = read_file(w / "pylock.toml");
    const std::string arm_wheel = "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_aarch64.whl";
    // The aarch64 wheel's entry, then its record, after the x86_64 wheel's.
    const auto entry_at =
        arm_text.find("  { url = \"" + v.url + "/packages/nvidia-cudnn-cu12/" + arm_wheel);
    REQUIRE(entry_at != std::string::npos);
    const std::string entry =
        arm_text.substr(entry_at, arm_text.find('\n', entry_at) + 1 - entry_at);
    const auto x86_entry =
        both.find("  { url = \"" + v.url + "/packages/nvidia-cudnn-cu12/" + cudnn.wheel);
    REQUIRE(x86_entry != std::string::npos);
    both.insert(both.find('\n', x86_entry) + 1, entry);
    const std::string header = "[packages.tool.gpulock.files.\"" + arm_wheel + "\"]\n";
    const auto record_at = arm_text.find(header);
    REQUIRE(record_at != std::string::npos);
    const std::string record =
        arm_text.substr(record_at, arm_text.find("\n\n", record_at) + 2 - record_at);
    both.insert(both.find("[tool.gpulock]\n"), record);
    write_file(w / "both.toml", both);
    auto two = w.gpulock("check --env --lock both.toml " + py, machine);
    INFO(two.out << two.err);
    CHECK(two.status == 1);
    CHECK(two.out.find(": nvidia-cudnn-cu12 9.1.0.70: 2 of the 12 files " + cudnn.wheel +
                       " installs in site-packages") != std::string::npos);
    CHECK(two.out.find(arm_wheel) == std::string::npos);
    // A WHEEL file without its tags: which wheel was installed is not known.
    fs::path wheel_file;
    for (const auto& e : fs::directory_iterator(site)) {
      if (e.path().filename().string().starts_with("nvidia_cudnn_cu12-"))
        wheel_file = e.path() / "WHEEL";
    }
    REQUIRE(fs::exists(wheel_file));
    const std::string wheel_text = read_file(wheel_file);
    std::string untagged;
    for (const auto& l : lines_of(wheel_text)) {
      if (!l.starts_with("Tag:")) untagged += l + "\n";
    }
    write_file(wheel_file, untagged);
    auto unknown = w.gpulock("check --env --lock both.toml " + py, machine);
    INFO(unknown.out << unknown.err);
    CHECK(unknown.out.find(": nvidia-cudnn-cu12 9.1.0.70: 2 of the") == std::string::npos);
    CHECK(unknown.out.find("  note: the file-level comparison was not possible for "
                           "nvidia-cudnn-cu12: the lock has several wheels of it, and the tags of "
                           "its installed WHEEL file are none of theirs\n") != std::string::npos);
    write_file(wheel_file, wheel_text);
  }

  // Without the lists (another cache, and the lock names no local file), nothing is claimed
  // about the files: one note says the comparison was not possible.
  auto cold = w.gpulock("check --env --cache-dir cold-cache " + py, machine);
  INFO(cold.out << cold.err);
  CHECK(cold.status == 0);
  CHECK(cold.out.find("locked-file") == std::string::npos);
  CHECK(cold.out.find(compared) == std::string::npos);
  CHECK(cold.out.find("  note: the file-level comparison was not possible for 2 installed "
                      "wheels: their file lists are not in the cache, the lock names no local "
                      "file, and the wheel cache has no copy (`gpulock resolve` or `gpulock "
                      "install` reads it): ") != std::string::npos);

  // A cold `gpulock install` reads each wheel whole, checks the list against the lock's record,
  // and caches it: a check with that cache compares the files again.
  auto fresh = w.gpulock(
      "install --lock pylock.toml --no-probe --cache-dir cold-cache --venv fresh-venv", machine);
  INFO(fresh.out << fresh.err);
  REQUIRE(fresh.status == 0);
  auto after = w.gpulock(
      "check --env --cache-dir cold-cache --python " + (w / "fresh-venv/bin/python").string(),
      machine);
  INFO(after.out << after.err);
  CHECK(after.status == 0);
  CHECK(after.out.find(compared) != std::string::npos);
  CHECK(after.out.find("file-level comparison was not possible") == std::string::npos);
  // Without the cached lists, the wheels install unpacked in its cache are their files (the
  // wheels the lock pins by sha256, with as many files as it records).
  fs::remove_all(w / "cold-cache" / "members-v1");
  auto unpacked = w.gpulock(
      "check --env --cache-dir cold-cache --python " + (w / "fresh-venv/bin/python").string(),
      machine);
  INFO(unpacked.out << unpacked.err);
  CHECK(unpacked.status == 0);
  CHECK(unpacked.out.find(compared) != std::string::npos);
  CHECK(unpacked.out.find("file-level comparison was not possible") == std::string::npos);
  // And the reinstall the hint gives puts the files back.
  REQUIRE(w.shell(shell_quote(v.python) + " -m pip -q uninstall -y nvidia-cudnn-cu12 "
                                          "nvidia-cublas-cu12")
              .status == 0);
  auto fix = w.gpulock("install --lock pylock.toml --no-probe " + py, machine);
  INFO(fix.out << fix.err);
  CHECK(fix.status == 0);
  auto fixed = w.gpulock("check --env " + py, machine);
  INFO(fixed.out << fixed.err);
  CHECK(fixed.status == 0);
  CHECK(fixed.out.find(compared) != std::string::npos);
}

// Issue 44 item 4: `probe --lock` compares every file of each installed locked wheel with the
// member list the lock records too (the lists check --env reads: the cache, offline), for an
// environment another tool installed, without RECORD: a file that is not a shared library,
// deleted or of another size, is a `locked-file-mismatch` naming it; a shared library
// `locked-file-missing` named is not named again.
TEST_CASE("probe --lock: every file of the wheels the lock records", "[check][env][files][probe]") {
  Venv v("probe-members");
  auto& w = v.w;
  const auto lock = lock_and_pip_install_cudnn(v);
  const auto& cudnn = lock.at("nvidia-cudnn-cu12");
  const auto& cublas = lock.at("nvidia-cublas-cu12");
  const std::string py = "--python " + v.python;
  const std::string machine = "GPULOCK_DRIVER=550.54.14";
  const std::string compared =
      "\"id\": \"locked-files-compared\",\n      \"severity\": \"info\",\n      \"subject\": "
      "\"\",\n      \"message\": \"the files of 2 installed wheels compared by path and size "
      "with the file lists the lock records.\"";
  auto clean = w.gpulock("probe --lock pylock.toml --json " + py, machine);
  INFO(clean.out << clean.err);
  CHECK(clean.status == 0);
  CHECK(clean.out.find(compared) != std::string::npos);
  CHECK(clean.out.find("locked-file-m") == std::string::npos);
  CHECK(clean.out.find("locked-files-not-compared") == std::string::npos);

  auto site = purelib(w, v.python);
  // Two files that are not shared libraries (RECORD still lists both), and a library.
  REQUIRE(fs::remove(fs::path(site) / "nvidia/cudnn/__init__.py"));
  write_file(fs::path(site) / "nvidia/__init__.py", "x = 1\n");
  const std::string lib = "nvidia/cudnn/lib/libcudnn_graph.so.9";
  REQUIRE(fs::remove(fs::path(site) / lib));
  const std::string install =
      "`gpulock install --lock pylock.toml --python " + v.python + "` replaces it";
  auto drift = w.gpulock("probe --lock pylock.toml --json " + py, machine);
  INFO(drift.out << drift.err);
  CHECK(drift.status == 1);
  CHECK(drift.out.find("\"id\": \"locked-file-missing\",\n      \"severity\": \"fail\",\n      "
                       "\"subject\": \"nvidia-cudnn-cu12\",\n      \"message\": "
                       "\"nvidia-cudnn-cu12 9.1.0.70: 1 of the 8 shared libraries the lock "
                       "records for " +
                       cudnn.wheel + " is not installed: " + lib + ".\"") != std::string::npos);
  // The library is not counted again: 2 of the 12 files, not 3.
  CHECK(drift.out.find("\"id\": \"locked-file-mismatch\",\n      \"severity\": \"fail\",\n      "
                       "\"subject\": \"nvidia-cudnn-cu12\",\n      \"message\": "
                       "\"nvidia-cudnn-cu12 9.1.0.70: 2 of the 12 files " +
                       cudnn.wheel +
                       " installs in site-packages are missing or of another size (the file "
                       "list the lock records): nvidia/cudnn/__init__.py: missing; "
                       "nvidia/__init__.py: modified (size 6, 0 in the wheel).\",\n      "
                       "\"hint\": \"reinstall it: `" +
                       v.python +
                       " -m pip uninstall -y nvidia-cudnn-cu12`, then `gpulock "
                       "install --lock pylock.toml --python " +
                       v.python + "`\"") != std::string::npos);
  CHECK(drift.out.find("\"id\": \"locked-file-mismatch\",\n      \"severity\": \"fail\",\n      "
                       "\"subject\": \"nvidia-cublas-cu12\",\n      \"message\": "
                       "\"nvidia-cublas-cu12 " +
                       cublas.version + ": 1 of the ") != std::string::npos);
  CHECK(drift.out.find(" is missing or of another size (the file list the lock records): "
                       "nvidia/__init__.py: modified (size 6, 0 in the wheel).\"") !=
        std::string::npos);
  CHECK(drift.out.find(compared) != std::string::npos);
  // The text report: one verdict line each, with the hint (run by the hint log).
  auto text = w.gpulock("probe --lock pylock.toml " + py, machine);
  INFO(text.out << text.err);
  CHECK(text.status == 1);
  CHECK(text.out.find("fail: nvidia-cudnn-cu12 9.1.0.70: 2 of the 12 files " + cudnn.wheel) !=
        std::string::npos);
  CHECK(text.out.find("hint: " + install + "\n") != std::string::npos);

  // Without the lists (another cache, and the lock names no local file), nothing is claimed
  // about the other files, and the report says the comparison was not possible.
  auto cold = w.gpulock("probe --lock pylock.toml --json " + py,
                        machine + " GPULOCK_CACHE_DIR=" + shell_quote((w / "cold").string()));
  INFO(cold.out << cold.err);
  CHECK(cold.status == 1);  // the library the lock's own record names is still missing
  CHECK(cold.out.find("\"id\": \"locked-file-missing\"") != std::string::npos);
  CHECK(cold.out.find("locked-file-mismatch") == std::string::npos);
  CHECK(cold.out.find("locked-files-compared") == std::string::npos);
  CHECK(cold.out.find("\"id\": \"locked-files-not-compared\",\n      \"severity\": \"info\",\n"
                      "      \"subject\": \"") != std::string::npos);
  CHECK(cold.out.find("\"message\": \"the file-level comparison was not possible for 2 installed "
                      "wheels: their file lists are not in the cache, the lock names no local "
                      "file, and the wheel cache has no copy (`gpulock resolve` or `gpulock "
                      "install` reads it): ") != std::string::npos);

  // install puts the files back (their RECORD says they changed), and the probe after it
  // compares them again.
  auto fix = w.gpulock("install --lock pylock.toml " + py, machine);
  INFO(fix.out << fix.err);
  CHECK(fix.status == 0);
  CHECK((fix.out + fix.err).find("locked-file") == std::string::npos);
  auto fixed = w.gpulock("probe --lock pylock.toml --json " + py, machine);
  INFO(fixed.out << fixed.err);
  CHECK(fixed.status == 0);
  CHECK(fixed.out.find(compared) != std::string::npos);
  CHECK(fixed.out.find("locked-file-m") == std::string::npos);
}

// An edit that keeps a file's size: for a package gpulock installed, `check --env` sees it
// without --deep (the sizes and mtimes install recorded, <dist-info>/.gpulock-files); for one
// pip installed, only --deep does (RECORD's hashes): the lock's file lists hold paths and sizes.
TEST_CASE("check env: an edit that keeps a file's size", "[check][env][files]") {
  Venv v("env-same-size");
  auto& w = v.w;
  lock_and_pip_install_cudnn(v);
  const std::string machine = "GPULOCK_DRIVER=550.54.14";
  auto made = w.gpulock("install --lock pylock.toml --no-probe --venv gl-venv", machine);
  INFO(made.out << made.err);
  REQUIRE(made.status == 0);
  const std::string wheel_file = "nvidia_cudnn_cu12-9.1.0.70.dist-info/WHEEL";
  // WHEEL's generator line, one digit changed: a new file (a file gpulock linked from its cache
  // is not written through) of the same size.
  auto edit = [&](const std::string& python) {
    auto site = purelib(w, python);
    const fs::path path = fs::path(site) / wheel_file;
    std::string text = read_file(path);
    const auto at = text.find("Generator: gpulock-fixtures 1\n");
    REQUIRE(at != std::string::npos);
    text[at + std::string("Generator: gpulock-fixtures ").size()] = '2';
    const auto size = fs::file_size(path);
    REQUIRE(fs::remove(path));
    write_file(path, text);
    REQUIRE(fs::file_size(path) == size);
  };

  const std::string gl = "--python " + (w / "gl-venv/bin/python").string();
  REQUIRE(w.gpulock("check --env " + gl, machine).status == 0);
  edit((w / "gl-venv/bin/python").string());
  auto stat = w.gpulock("check --env " + gl, machine);
  INFO(stat.out << stat.err);
  CHECK(stat.status == 1);
  CHECK(stat.out.find(": nvidia-cudnn-cu12 9.1.0.70: 1 of ") != std::string::npos);
  CHECK(stat.out.find(" installed files changed since gpulock installed them\n      " + wheel_file +
                      ": modified (its mtime is not the one recorded at install)\n") !=
        std::string::npos);

  const std::string pip = "--python " + v.python;
  edit(v.python);
  auto shallow = w.gpulock("check --env " + pip, machine);
  INFO(shallow.out << shallow.err);
  CHECK(shallow.status == 0);
  CHECK(shallow.out.find(wheel_file) == std::string::npos);
  CHECK(shallow.out.find("  note: the files of 2 installed wheels compared by path and size") !=
        std::string::npos);
  auto deep = w.gpulock("check --env --deep " + pip, machine);
  INFO(deep.out << deep.err);
  CHECK(deep.status == 1);
  CHECK(deep.out.find(": nvidia-cudnn-cu12 9.1.0.70: 1 of 14 installed files differ from its "
                      "RECORD\n      " +
                      wheel_file + ": modified (its sha256 is not the one RECORD lists)\n") !=
        std::string::npos);
}
