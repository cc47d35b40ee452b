// `gpulock probe --machine` end to end: the real gpulock binary, fake libnvidia-ml.so.1 and
// libcuda.so.1 (fakes/*.c) found through LD_LIBRARY_PATH, a fake nvidia-smi (fakes/bin) on
// PATH, and a fake /sys, /proc and /dev tree per case (GPULOCK_TEST_ROOT). Each case checks the
// verdict and key facts, and compares the text and JSON output with golden files
// (golden/<case>.txt, .json). Regenerate them with GPULOCK_UPDATE_GOLDEN=1.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/utsname.h>

#include "cli_runner.h"
#include "golden.h"

namespace fs = std::filesystem;

namespace {

const std::string kExe = GPULOCK_EXE;
const fs::path kNvmlDir = PROBE_FAKE_NVML_DIR;
const fs::path kCudaDir = PROBE_FAKE_CUDA_DIR;
const fs::path kBinDir = PROBE_FAKE_BIN_DIR;
const fs::path kGoldenDir = PROBE_GOLDEN_DIR;
const fs::path kWorkDir = PROBE_WORK_DIR;

// GPUs for FAKE_GPUS: name|compute capability|MiB|UUID.
const std::string kH100 =
    "NVIDIA H100 80GB HBM3|9.0|81559|GPU-5b4e1c2a-7d3f-4c2e-9a1b-000000000001";
const std::string k1080Ti =
    "NVIDIA GeForce GTX 1080 Ti|6.1|11264|GPU-5b4e1c2a-7d3f-4c2e-9a1b-000000000002";
const std::string kA100 =
    "NVIDIA A100-SXM4-40GB|8.0|40960|GPU-5b4e1c2a-7d3f-4c2e-9a1b-000000000003";

using gpulock::test::merge_env;
using gpulock::test::read_file;
using gpulock::test::replace_all;
using gpulock::test::run_process;
using Run = gpulock::test::RunResult;

void write_file(const fs::path& path, const std::string& content,
                fs::perms mode = fs::perms(0644)) {
  gpulock::test::write_file(path, content);
  fs::permissions(path, mode);
}

// A loaded nvidia kernel module: /sys and /proc version files, `gpus` GPUs under
// /proc/driver/nvidia/gpus, and (unless `devices` is false) the /dev nodes.
void kernel_module(const fs::path& root, const std::string& version, int gpus = 1,
                   bool devices = true, fs::perms device_mode = fs::perms(0666)) {
  write_file(root / "sys/module/nvidia/version", version + "\n");
  write_file(
      root / "proc/driver/nvidia/version",
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + version +
          "  Thu Feb 22 01:44:30 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  for (int i = 0; i < gpus; ++i) {
    write_file(root / "proc/driver/nvidia/gpus" / ("0000:0" + std::to_string(i + 1) + ":00.0") /
                   "information",
               "Model: \t\t NVIDIA GPU\nIRQ:   \t\t 100\n");
    if (devices) write_file(root / "dev" / ("nvidia" + std::to_string(i)), "", device_mode);
  }
  if (devices) write_file(root / "dev/nvidiactl", "", device_mode);
}

// A copy of a fake library under another file name, with the soname symlinked to it (the layout
// of a real driver: libcuda.so.1 -> libcuda.so.550.54.14).
void versioned_library(const fs::path& dir, const fs::path& fake, const std::string& soname,
                       const std::string& file) {
  fs::create_directories(dir);
  fs::copy_file(fake, dir / file, fs::copy_options::overwrite_existing);
  fs::create_symlink(file, dir / soname);
}

struct Case {
  std::string name{};
  std::vector<std::string> args = {"probe", "--machine"};
  std::map<std::string, std::string> env{};
  bool nvml = false;  // the fake libnvidia-ml.so.1 on LD_LIBRARY_PATH
  bool cuda = false;  // the fake libcuda.so.1 on LD_LIBRARY_PATH
  bool smi = false;   // the fake nvidia-smi on PATH
  std::function<void(const fs::path& root, const fs::path& lib)>
      tree{};  // lib: extra LD_LIBRARY_PATH dir
  bool extra_lib = false;
  std::string lib_dir = "lib";  // the extra LD_LIBRARY_PATH dir, under the case's directory
  bool as_nobody = false;       // the permission case: run without root's powers
  int exit = 0;
  std::string status{};                 // expected "status" in the JSON output
  std::vector<std::string> contains{};  // expected in the text output
  bool json = true;
  bool golden = true;
};

// Paths of this build and the user id become placeholders, so the golden files hold on any
// checkout.
std::string normalize(std::string s) {
  for (const auto& [dir, name] :
       std::vector<std::pair<fs::path, std::string>>{{kWorkDir, "<WORK>"},
                                                     {kNvmlDir, "<FAKE_NVML>"},
                                                     {kCudaDir, "<FAKE_CUDA>"},
                                                     {kBinDir, "<BIN>"}}) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(dir, ec);
    if (!ec && canonical != dir) s = replace_all(s, canonical.string(), name);
    s = replace_all(s, dir.string(), name);
  }
  s = std::regex_replace(s, std::regex("uid [0-9]+"), "uid <UID>");
  // This host's CPU (uname), which the golden files cannot know.
  struct utsname u {};
  if (::uname(&u) == 0)
    s = replace_all(s, "\"cpu\": \"" + std::string(u.machine) + "\"", "\"cpu\": \"<HOST_CPU>\"");
  return s;
}

void compare_golden(const std::string& file, const std::string& actual) {
  GPULOCK_CHECK_GOLDEN(kGoldenDir / file, actual);
}

// Where a case's tree lives. The permission case runs as user nobody, who must reach the tree
// and the binary: a checkout under a directory only root may enter (/root, `mktemp -d`) would
// hide them, so that case works under the system's temporary directory instead.
fs::path work_dir_for(const Case& c) {
  if (!c.as_nobody || ::getuid() != 0) return kWorkDir;
  fs::path base =
      fs::temp_directory_path() / ("gpulock-probe-nobody-" + std::to_string(::getpid()));
  fs::create_directories(base);
  fs::permissions(base, fs::perms(0755));
  return base;
}

Run run_case(const Case& c, bool json) {
  const fs::path work = work_dir_for(c);
  fs::path dir = work / c.name;
  fs::remove_all(dir);
  fs::path root = dir / "root";
  fs::path lib = dir / c.lib_dir;
  fs::path tools = dir / "tools";
  fs::create_directories(root);
  // The fake nvidia-smi needs `sleep`; nothing else from the system is on PATH, so a real
  // nvidia-smi on the test machine cannot leak in.
  fs::create_directories(tools);
  fs::create_symlink("/bin/sleep", tools / "sleep");
  if (c.tree) c.tree(root, lib);
  // The permission case runs as nobody, who must be able to reach everything but the device.
  for (const auto& p : {work, dir, root, lib, lib.parent_path(), tools}) {
    if (fs::exists(p)) fs::permissions(p, fs::perms(0755));
  }

  std::map<std::string, std::string> env = {
      {"PATH", (c.smi ? kBinDir.string() + ":" : std::string()) + tools.string()},
      {"GPULOCK_TEST_ROOT", root.string()},
      {"GPULOCK_PROBE_TIMEOUT_MS", "500"},
  };
  std::vector<std::string> libs;
  if (c.extra_lib) libs.push_back(lib.string());
  if (c.nvml) libs.push_back(kNvmlDir.string());
  if (c.cuda) libs.push_back(kCudaDir.string());
  std::string ld;
  for (const auto& l : libs)
    ld += (ld.empty() ? "" : ":") + l;
  if (!ld.empty()) env["LD_LIBRARY_PATH"] = ld;
  for (const auto& [k, v] : c.env)
    env[k] = v;

  std::vector<std::string> argv;
  std::string exe = kExe;
  if (c.as_nobody) {
    if (::getuid() == 0) {
      argv = {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
      exe = (dir / "gpulock").string();  // a copy nobody can reach
      fs::copy_file(kExe, exe, fs::copy_options::overwrite_existing);
      fs::permissions(exe, fs::perms(0755));
    } else {
      // Not root: this user is already unprivileged; make the devices unreadable to it.
      for (const auto& e : fs::directory_iterator(root / "dev"))
        fs::permissions(e.path(), fs::perms::none);
    }
  }
  argv.push_back(exe);
  for (const auto& a : c.args)
    argv.push_back(a);
  if (json) argv.push_back("--json");
  Run r = run_process(argv, env);
  if (work != kWorkDir) {
    // Paths read as in every other case (<WORK> in the golden files).
    r.out = replace_all(r.out, work.string(), kWorkDir.string());
    r.err = replace_all(r.err, work.string(), kWorkDir.string());
    fs::remove_all(work);
  }
  return r;
}

void check_case(const Case& c) {
  SECTION("text") {
    Run r = run_case(c, false);
    INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
    CHECK(r.status == c.exit);
    for (const auto& s : c.contains)
      CHECK(r.out.find(s) != std::string::npos);
    if (c.exit == 0 && !c.status.empty())
      CHECK(r.out.find("\n  " + c.status + ": ") != std::string::npos);
    std::string text = normalize(r.out);
    if (!r.err.empty()) text += "--- stderr\n" + normalize(r.err);
    if (c.golden) compare_golden(c.name + ".txt", text);
  }
  if (c.json) {
    SECTION("json") {
      Run r = run_case(c, true);
      INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
      CHECK(r.status == c.exit);
      if (!c.status.empty())
        CHECK(r.out.find("\"status\": \"" + c.status + "\"") != std::string::npos);
      CHECK(r.out.starts_with("{\n"));
      CHECK(r.out.ends_with("}\n"));
      if (c.golden) compare_golden(c.name + ".json", normalize(r.out));
    }
  }
}

std::map<std::string, std::string> full_driver(const std::string& gpus = kH100) {
  return {{"FAKE_GPUS", gpus},
          {"FAKE_NVML_DRIVER", "550.54.14"},
          {"FAKE_NVML_CUDA", "12040"},
          {"FAKE_CUDA_VERSION", "12040"}};
}

auto module_550 = [](const fs::path& root, const fs::path&) { kernel_module(root, "550.54.14"); };

}  // namespace

// ----- no driver -----

TEST_CASE("probe --machine: no driver at all", "[probe][cli]") {
  Case c{.name = "no_driver", .status = "no-driver"};
  c.contains = {"no NVIDIA driver found", "libnvidia-ml.so.1: cannot open shared object file"};
  check_case(c);
}

TEST_CASE("probe --machine: empty override variables count as unset", "[probe][cli]") {
  Case c{.name = "empty_overrides_unset", .status = "no-driver"};
  c.env = {{"GPULOCK_DRIVER", ""}, {"GPULOCK_CUDA_CEILING", ""}, {"GPULOCK_GPU_ARCH", ""}};
  c.contains = {"overrides   not-found"};
  check_case(c);
}

TEST_CASE("probe --machine: a stub libcuda is no driver", "[probe][cli]") {
  Case c{.name = "stub_libcuda", .cuda = true, .status = "no-driver"};
  c.env = {{"FAKE_CUDA_INIT_RC", "34"}};
  c.contains = {"stub libcuda, no driver", "CUDA_ERROR_STUB_LIBRARY (34)"};
  check_case(c);
}

TEST_CASE("probe --machine: the CUDA toolkit's real stub libcuda is no driver", "[probe][cli]") {
  // The toolkit on these machines ships lib64/stubs/libcuda.so (soname libcuda.so.1).
  fs::path stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (const char* home = std::getenv("CUDA_HOME")) stub = fs::path(home) / "lib64/stubs/libcuda.so";
  INFO("needs the CUDA toolkit's stub at " << stub.string());
  REQUIRE(fs::exists(stub));
  Case c{.name = "stub_real", .extra_lib = true, .status = "no-driver", .golden = false};
  c.tree = [stub](const fs::path&, const fs::path& lib) {
    fs::create_directories(lib);
    fs::create_symlink(stub, lib / "libcuda.so.1");
  };
  c.contains = {"stub libcuda, no driver", "only the CUDA toolkit's stub libcuda"};
  check_case(c);
}

TEST_CASE("probe --machine: a CUDA toolkit's nvcc is not the driver", "[probe][cli]") {
  // nvcc on PATH and a toolkit tree say CUDA 12.8; neither is the driver's ceiling.
  Case c{.name = "nvcc_not_driver", .status = "no-driver"};
  c.tree = [](const fs::path& root, const fs::path&) {
    const fs::path nvcc = root.parent_path() / "tools/nvcc";
    write_file(nvcc,
               "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
               "echo 'Cuda compilation tools, release 12.8, V12.8.93'\n",
               fs::perms(0755));
    write_file(root / "usr/local/cuda/version.json", "{\"cuda\": {\"version\": \"12.8.1\"}}\n");
  };
  c.contains = {"no NVIDIA driver found", "CUDA ceiling   unknown"};
  check_case(c);
}

TEST_CASE("probe --machine: a CUDA ceiling override without a driver", "[probe][cli]") {
  Case c{.name = "ceiling_override_no_driver", .status = "no-driver"};
  c.env = {{"GPULOCK_CUDA_CEILING", "12.4"}};
  c.contains = {"CUDA ceiling 12.4 given by GPULOCK_CUDA_CEILING",
                "override: GPULOCK_CUDA_CEILING"};
  check_case(c);
}

TEST_CASE("probe --machine: a bare branch number and a driver newer than the table",
          "[probe][cli]") {
  // Issue 16: `--driver 550` is the R550 branch (CUDA 12.4, as 550.54.14), said in a warning;
  // a driver past the table's last row warns that its ceiling is assumed.
  SECTION("a branch") {
    Case c{.name = "driver_branch_number",
           .args = {"probe", "--machine", "--driver", "550"},
           .status = "override"};
    c.contains = {"CUDA ceiling 12.4",
                  "warning: driver 550 is a branch number: read as the R550 branch, whose drivers "
                  "run CUDA <= 12.4"};
    c.golden = false;
    check_case(c);
  }
  SECTION("newer than the table") {
    Case c{.name = "driver_newer_than_table",
           .args = {"probe", "--machine", "--driver", "999.1"},
           .status = "override"};
    c.contains = {
        "warning: driver 999.1 is newer than gpulock's driver table (up to 595.45.04): its CUDA "
        "ceiling "
        "is assumed to be 13.2"};
    c.golden = false;
    check_case(c);
  }
}

// ----- NVML and libcuda -----

TEST_CASE("probe --machine: NVML and libcuda, libcuda gives the ceiling, nvidia-smi not needed",
          "[probe][cli]") {
  Case c{.name = "nvml_and_libcuda",
         .nvml = true,
         .cuda = true,
         .smi = true,
         .tree = module_550,
         .status = "gpu"};
  // nvidia-smi would say something else: it must not be asked.
  c.env = merge_env(full_driver(), {{"FAKE_SMI_OUTPUT", "999.99, Other GPU, 7.0, GPU-x\\n"}});
  c.contains = {"libcuda: cuDriverGetVersion = 12040", "nvml: nvmlSystemGetDriverVersion", "sm_90",
                "nvidia-smi  skipped"};
  check_case(c);
}

TEST_CASE("probe --machine: colour on a terminal request", "[probe][cli]") {
  Case c{.name = "nvml_and_libcuda_color",
         .nvml = true,
         .cuda = true,
         .tree = module_550,
         .json = false};
  c.args = {"--color", "always", "probe", "--machine"};
  c.env = full_driver();
  c.contains = {"\x1b[1mDriver\x1b[0m", "\x1b[32mgpu\x1b[0m"};
  check_case(c);
}

TEST_CASE("probe --machine: several GPUs of different architectures", "[probe][cli]") {
  Case c{.name = "several_gpus", .nvml = true, .cuda = true, .status = "gpu"};
  c.tree = [](const fs::path& root, const fs::path&) { kernel_module(root, "550.54.14", 2); };
  c.env = full_driver(kH100 + ";" + k1080Ti);
  c.contains = {
      "2 GPUs with different architectures (sm_61, sm_90): a build must support every one"};
  check_case(c);
}

TEST_CASE("probe --machine: NVML present but libcuda missing", "[probe][cli]") {
  Case c{.name = "nvml_without_libcuda", .nvml = true, .tree = module_550, .status = "gpu"};
  c.env = full_driver();
  c.contains = {"nvml: nvmlSystemGetCudaDriverVersion_v2 = 12040", "libcuda.so.1 was not found"};
  check_case(c);
}

TEST_CASE("probe --machine: libcuda present but NVML missing", "[probe][cli]") {
  Case c{.name = "libcuda_without_nvml", .cuda = true, .tree = module_550, .status = "gpu"};
  c.env = full_driver();
  c.contains = {"libnvidia-ml.so.1 (NVML) was not found", "sysfs: /sys/module/nvidia/version",
                "libcuda"};
  check_case(c);
}

TEST_CASE("probe --machine: libcuda alone, the driver version from its file name", "[probe][cli]") {
  // No NVML, no kernel module files (/sys/module and /proc not mounted), no nvidia-smi: the
  // driver's libcuda.so.1 -> libcuda.so.550.54.14 gives the driver version, and libcuda itself
  // the ceiling and the GPUs.
  Case c{.name = "libcuda_driver_from_file_name", .extra_lib = true, .status = "gpu"};
  c.tree = [](const fs::path& root, const fs::path& lib) {
    fs::create_directories(root);
    versioned_library(lib, kCudaDir / "libcuda.so.1", "libcuda.so.1", "libcuda.so.550.54.14");
  };
  c.env = full_driver();
  c.contains = {"550.54.14", "libcuda.so.550.54.14", "libcuda: cuDriverGetVersion = 12040",
                "sm_90"};
  check_case(c);
}

TEST_CASE("probe --machine: the driver version mapped through NVIDIA's table", "[probe][cli]") {
  // NVML without a CUDA version (NVML_ERROR_LIBRARY_NOT_FOUND) and no libcuda.
  Case c{.name = "ceiling_from_table", .nvml = true, .status = "gpu"};
  c.tree = [](const fs::path& root, const fs::path&) { kernel_module(root, "570.26"); };
  c.env = {{"FAKE_GPUS", kH100}, {"FAKE_NVML_DRIVER", "570.26"}};
  c.contains = {"12.8", "driver-table: NVIDIA's table (driver 570.26 from nvml)"};
  check_case(c);
}

TEST_CASE("probe --machine: NVML and libcuda disagree", "[probe][cli]") {
  Case c{.name = "nvml_libcuda_disagree",
         .nvml = true,
         .cuda = true,
         .tree = module_550,
         .status = "gpu"};
  c.env = merge_env(full_driver(),
                    {{"FAKE_CUDA_VERSION", "12080"},
                     {"FAKE_CUDA_GPUS",
                      "NVIDIA H100 80GB HBM3|8.0|81559|GPU-5b4e1c2a-7d3f-4c2e-9a1b-000000000001"}});
  c.contains = {"NVML and libcuda disagree on the CUDA version: NVML 12.4, libcuda 12.8",
                "NVML and libcuda disagree on the GPU architectures", "12.8"};
  check_case(c);
}

TEST_CASE("probe --machine: CUDA_VISIBLE_DEVICES keeps some GPUs from CUDA", "[probe][cli]") {
  Case c{.name = "cuda_visible_devices_subset", .nvml = true, .cuda = true, .status = "gpu"};
  c.tree = [](const fs::path& root, const fs::path&) { kernel_module(root, "550.54.14", 2); };
  c.env = merge_env(full_driver(kH100 + ";" + kA100), {{"CUDA_VISIBLE_DEVICES", "1"}});
  c.contains = {"CUDA_VISIBLE_DEVICES='1' shows CUDA 1 GPU of the 2 NVML lists"};
  check_case(c);
}

TEST_CASE("probe --machine: a stub libcuda shadows the driver's", "[probe][cli]") {
  Case c{.name = "stub_shadows_driver",
         .nvml = true,
         .cuda = true,
         .tree = module_550,
         .status = "gpu"};
  c.env = merge_env(full_driver(), {{"FAKE_CUDA_INIT_RC", "34"}});
  c.contains = {"resolves to the CUDA toolkit's stub", "nvml: nvmlSystemGetCudaDriverVersion_v2"};
  check_case(c);
}

TEST_CASE("probe --machine: a CUDA forward-compatibility libcuda raises the ceiling",
          "[probe][cli]") {
  Case c{.name = "forward_compat",
         .nvml = true,
         .tree = {},
         .extra_lib = true,
         .lib_dir = "cuda-12.9/compat",
         .status = "gpu"};
  c.tree = [](const fs::path& root, const fs::path& lib) {
    kernel_module(root, "550.54.14");
    versioned_library(lib, kCudaDir / "libcuda.so.1", "libcuda.so.1", "libcuda.so.575.57.08");
  };
  c.env = merge_env(full_driver(), {{"FAKE_CUDA_VERSION", "12090"}});
  c.contains = {"CUDA forward-compatibility package", "libcuda: cuDriverGetVersion = 12090"};
  check_case(c);
}

// ----- a driver but no usable GPU -----

TEST_CASE("probe --machine: kernel module only (sysfs), nothing lists the GPUs", "[probe][cli]") {
  Case c{.name = "kernel_module_only", .tree = module_550, .status = "driver-only"};
  c.contains = {"sysfs: /sys/module/nvidia/version", "driver-table", "12.4"};
  check_case(c);
}

TEST_CASE("probe --machine: only /proc/driver/nvidia/version (open kernel module)",
          "[probe][cli]") {
  Case c{.name = "procfs_only", .status = "driver-only"};
  c.tree = [](const fs::path& root, const fs::path&) {
    write_file(root / "proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
               "(dvs-builder@U22-I3-AE18-23-3)  Wed Jul 23 2025\n");
    write_file(root / "dev/nvidia0", "", fs::perms(0666));
    write_file(root / "dev/nvidiactl", "", fs::perms(0666));
  };
  c.contains = {"procfs: /proc/driver/nvidia/version", "13.0"};
  check_case(c);
}

TEST_CASE("probe --machine: kernel module loaded but no device nodes (a container)",
          "[probe][cli]") {
  Case c{.name = "container_no_devices", .status = "no-device"};
  c.tree = [](const fs::path& root, const fs::path&) {
    kernel_module(root, "550.54.14", 1, false);
  };
  c.contains = {"no /dev/nvidia* device nodes", "docker run --gpus all"};
  check_case(c);
}

TEST_CASE("probe --machine: CUDA_VISIBLE_DEVICES is empty", "[probe][cli]") {
  Case c{.name = "cuda_visible_devices_empty",
         .nvml = true,
         .cuda = true,
         .tree = module_550,
         .status = "no-device"};
  c.env = merge_env(full_driver(), {{"CUDA_VISIBLE_DEVICES", ""}});
  c.contains = {"CUDA_VISIBLE_DEVICES is set to ''", "unset CUDA_VISIBLE_DEVICES",
                "CUDA_ERROR_NO_DEVICE (100)"};
  check_case(c);
}

TEST_CASE("probe --machine: NVML sees no GPU", "[probe][cli]") {
  Case c{
      .name = "nvml_no_gpu", .nvml = true, .cuda = true, .tree = module_550, .status = "no-device"};
  c.env = merge_env(full_driver(""), {{"FAKE_CUDA_INIT_RC", "100"}});
  c.contains = {"NVML sees no GPU"};
  check_case(c);
}

TEST_CASE("probe --machine: /dev/nvidia* not accessible to this user", "[probe][cli]") {
  Case c{.name = "no_permission", .as_nobody = true, .status = "no-permission"};
  c.tree = [](const fs::path& root, const fs::path&) {
    kernel_module(root, "550.54.14", 1, true, fs::perms(0600));
  };
  c.contains = {"this user cannot open /dev/nvidia0, /dev/nvidiactl",
                "not accessible to this user"};
  check_case(c);
}

TEST_CASE("probe --machine: NVML has no permission", "[probe][cli]") {
  Case c{.name = "nvml_no_permission", .nvml = true, .tree = module_550, .status = "no-permission"};
  c.env = {{"FAKE_NVML_INIT_RC", "4"}};
  c.contains = {"NVML_ERROR_NO_PERMISSION"};
  check_case(c);
}

TEST_CASE("probe --machine: NVML says the driver and library versions differ", "[probe][cli]") {
  Case c{.name = "rm_version_mismatch",
         .nvml = true,
         .cuda = true,
         .tree = module_550,
         .status = "driver-mismatch"};
  c.env = {{"FAKE_NVML_INIT_RC", "18"}, {"FAKE_CUDA_INIT_RC", "803"}, {"FAKE_GPUS", kH100}};
  c.contains = {"NVML_ERROR_LIB_RM_VERSION_MISMATCH (18)",
                "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)", "reboot or reload the nvidia module"};
  check_case(c);
}

TEST_CASE("probe --machine: user-space libraries newer than the loaded kernel module",
          "[probe][cli]") {
  Case c{.name = "updated_not_reloaded", .extra_lib = true, .status = "driver-mismatch"};
  c.tree = [](const fs::path& root, const fs::path& lib) {
    kernel_module(root, "550.54.14");
    versioned_library(lib, kNvmlDir / "libnvidia-ml.so.1", "libnvidia-ml.so.1",
                      "libnvidia-ml.so.550.54.15");
    versioned_library(lib, kCudaDir / "libcuda.so.1", "libcuda.so.1", "libcuda.so.550.54.15");
  };
  c.env = merge_env(full_driver(), {{"FAKE_NVML_DRIVER", "550.54.15"}});
  c.contains = {"user-space libraries 550.54.15, loaded kernel module 550.54.14",
                "reboot or reload"};
  check_case(c);
}

TEST_CASE("probe --machine: user-space driver installed, kernel module not loaded",
          "[probe][cli]") {
  Case c{.name = "module_not_loaded", .nvml = true, .cuda = true, .status = "module-not-loaded"};
  c.env = {{"FAKE_NVML_INIT_RC", "9"}, {"FAKE_CUDA_INIT_RC", "100"}};
  c.contains = {"NVML_ERROR_DRIVER_NOT_LOADED (9)", "sudo modprobe nvidia"};
  check_case(c);
}

TEST_CASE("probe --machine: WSL 2", "[probe][cli]") {
  Case c{.name = "wsl", .status = "gpu"};
  c.tree = [](const fs::path& root, const fs::path&) {
    fs::path wsl = root / "usr/lib/wsl/lib";
    fs::create_directories(wsl);
    fs::copy_file(kCudaDir / "libcuda.so.1", wsl / "libcuda.so.1");
    fs::copy_file(kNvmlDir / "libnvidia-ml.so.1", wsl / "libnvidia-ml.so.1");
    write_file(root / "dev/dxg", "", fs::perms(0666));
  };
  c.env = {{"FAKE_GPUS", kA100},
           {"FAKE_NVML_DRIVER", "566.36"},
           {"FAKE_NVML_CUDA", "12070"},
           {"FAKE_CUDA_VERSION", "12070"}};
  c.contains = {"WSL 2", "/usr/lib/wsl/lib/libcuda.so.1", "12.7"};
  check_case(c);
}

// ----- hangs and crashes -----

TEST_CASE("probe --machine: NVML hangs, libcuda answers", "[probe][cli]") {
  Case c{.name = "nvml_hangs", .nvml = true, .cuda = true, .tree = module_550, .status = "gpu"};
  c.env = merge_env(full_driver(), {{"FAKE_NVML_HANG_IN", "nvmlDeviceGetName"}});
  c.contains = {"nvml        timeout", "no answer within 0.5 s in nvmlDeviceGetName(0)"};
  check_case(c);
}

TEST_CASE("probe --machine: NVML crashes, libcuda answers", "[probe][cli]") {
  Case c{.name = "nvml_crashes", .nvml = true, .cuda = true, .tree = module_550, .status = "gpu"};
  c.env = merge_env(full_driver(), {{"FAKE_NVML_CRASH_IN", "nvmlInit_v2"}});
  c.contains = {"crashed (SIGSEGV) in nvmlInit_v2"};
  check_case(c);
}

TEST_CASE("probe --machine: libcuda hangs, NVML answers", "[probe][cli]") {
  Case c{.name = "libcuda_hangs", .nvml = true, .cuda = true, .tree = module_550, .status = "gpu"};
  c.env = merge_env(full_driver(), {{"FAKE_CUDA_HANG_IN", "cuInit"}});
  c.contains = {"libcuda     timeout", "in cuInit", "nvml: nvmlSystemGetCudaDriverVersion_v2"};
  check_case(c);
}

TEST_CASE("probe --machine: libcuda crashes, NVML answers", "[probe][cli]") {
  Case c{
      .name = "libcuda_crashes", .nvml = true, .cuda = true, .tree = module_550, .status = "gpu"};
  c.env = merge_env(full_driver(), {{"FAKE_CUDA_CRASH_IN", "cuDeviceGetName"}});
  c.contains = {"crashed (SIGSEGV) in cuDeviceGetName(0)"};
  check_case(c);
}

// ----- nvidia-smi -----

TEST_CASE("probe --machine: nvidia-smi lists one GPU", "[probe][cli]") {
  Case c{.name = "smi_one_gpu", .smi = true, .tree = module_550, .status = "gpu"};
  c.env = {{"FAKE_SMI_OUTPUT",
            "550.54.14, NVIDIA H100 80GB HBM3, 9.0, GPU-5b4e1c2a-7d3f-4c2e-9a1b-000000000001\\n"}};
  c.contains = {"nvidia-smi  ok", "nvidia-smi"};
  check_case(c);
}

TEST_CASE("probe --machine: nvidia-smi lists several GPUs and gives the driver", "[probe][cli]") {
  Case c{.name = "smi_several_gpus", .smi = true, .status = "gpu"};
  c.env = {{"FAKE_SMI_OUTPUT",
            "575.57.08, NVIDIA GeForce RTX 5090, 12.0, GPU-a\\n575.57.08, NVIDIA GeForce RTX 3090, "
            "8.6, GPU-b\\n"}};
  c.contains = {"nvidia-smi: nvidia-smi --query-gpu=driver_version", "sm_120", "sm_86", "12.9"};
  check_case(c);
}

TEST_CASE("probe --machine: nvidia-smi prints garbage", "[probe][cli]") {
  Case c{.name = "smi_garbage", .smi = true, .status = "no-driver"};
  c.env = {{"FAKE_SMI_OUTPUT", "this is not csv\\n"}};
  c.contains = {"unexpected nvidia-smi output 'this is not csv'"};
  check_case(c);
}

TEST_CASE("probe --machine: nvidia-smi fails", "[probe][cli]") {
  Case c{.name = "smi_fails", .smi = true, .tree = module_550, .status = "driver-only"};
  c.env = {{"FAKE_SMI_OUTPUT",
            "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error\\n"},
           {"FAKE_SMI_EXIT", "15"}};
  c.contains = {"exit status 15: Unable to determine the device handle"};
  check_case(c);
}

TEST_CASE("probe --machine: nvidia-smi cannot talk to the driver", "[probe][cli]") {
  Case c{.name = "smi_no_driver", .smi = true, .status = "module-not-loaded"};
  c.env = {{"FAKE_SMI_OUTPUT",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
            "sure that "
            "the latest NVIDIA driver is installed and running.\\n\\n"},
           {"FAKE_SMI_EXIT", "9"}};
  c.contains = {"nvidia-smi cannot communicate with the NVIDIA driver"};
  check_case(c);
}

TEST_CASE("probe --machine: nvidia-smi finds no devices", "[probe][cli]") {
  Case c{.name = "smi_no_devices", .smi = true, .tree = module_550, .status = "no-device"};
  c.env = {{"FAKE_SMI_OUTPUT", "No devices were found\\n"}, {"FAKE_SMI_EXIT", "6"}};
  c.contains = {"nvidia-smi: No devices were found"};
  check_case(c);
}

TEST_CASE("probe --machine: nvidia-smi hangs", "[probe][cli]") {
  Case c{.name = "smi_hangs", .smi = true, .tree = module_550, .status = "driver-only"};
  c.env = {{"FAKE_SMI_HANG", "1"}};
  c.contains = {"nvidia-smi  timeout", "no answer within 0.5 s"};
  check_case(c);
}

TEST_CASE("probe --machine: an nvidia-smi without compute_cap (driver < 510)", "[probe][cli]") {
  Case c{.name = "smi_old_driver", .smi = true, .status = "gpu"};
  c.tree = [](const fs::path& root, const fs::path&) { kernel_module(root, "470.82.01"); };
  c.env = {{"FAKE_SMI_OLD", "1"}, {"FAKE_SMI_OUTPUT", "470.82.01, Tesla K80, GPU-k80\\n"}};
  c.contains = {"no compute_cap field", "compute capability of GPU 0 (Tesla K80) is unknown"};
  check_case(c);
}

// ----- overrides -----

TEST_CASE("probe --machine: GPULOCK_DRIVER describes another machine, nothing is detected",
          "[probe][cli]") {
  Case c{.name = "override_driver_env",
         .nvml = true,
         .cuda = true,
         .smi = true,
         .tree = module_550,
         .status = "override"};
  c.env = merge_env(full_driver(), {{"GPULOCK_DRIVER", "550.54.14"}});
  c.contains = {"override: GPULOCK_DRIVER", "12.4",
                "not run: the driver is given by GPULOCK_DRIVER"};
  check_case(c);
}

TEST_CASE("probe --machine: flags beat the environment", "[probe][cli]") {
  Case c{.name = "override_flags", .status = "override"};
  c.args = {"probe", "--machine", "--driver", "570.26", "--gpu-arch", "sm_90,sm_61"};
  c.env = {{"GPULOCK_DRIVER", "550.54.14"}, {"GPULOCK_GPU_ARCH", "sm_80"}};
  c.contains = {"override: --driver", "12.8", "sm_61, sm_90", "override: --gpu-arch"};
  check_case(c);
}

TEST_CASE("probe --machine: --driver none", "[probe][cli]") {
  Case c{.name = "override_driver_none", .nvml = true, .cuda = true, .status = "no-gpu"};
  c.env = merge_env(full_driver(), {{"GPULOCK_DRIVER", "none"}});
  c.contains = {"only CPU builds qualify"};
  check_case(c);
}

TEST_CASE("probe --machine: ceiling and arch overrides with detection", "[probe][cli]") {
  Case c{.name = "override_ceiling_and_arch",
         .nvml = true,
         .cuda = true,
         .tree = module_550,
         .status = "gpu"};
  c.args = {"probe", "--machine", "--cuda-ceiling", "12.1"};
  c.env = merge_env(full_driver(), {{"GPULOCK_GPU_ARCH", "sm_80"}});
  c.contains = {"override: --cuda-ceiling", "override: GPULOCK_GPU_ARCH",
                "GPU archs sm_80 from GPULOCK_GPU_ARCH replace the detected sm_90"};
  check_case(c);
}

// One case per test: check_case's sections would run only for the first case of a test.
TEST_CASE("probe --machine: a bad override variable is a usage error", "[probe][cli]") {
  Case c{.name = "bad_override_env", .exit = 2, .json = false};
  c.env = {{"GPULOCK_DRIVER", "latest"}};
  check_case(c);
}

TEST_CASE("probe --machine: a bad override flag is a usage error", "[probe][cli]") {
  Case c{.name = "bad_override_flag", .exit = 2, .json = false};
  c.args = {"probe", "--machine", "--gpu-arch", "sm_9x"};
  check_case(c);
}

TEST_CASE("probe --machine: a bad override with --json is a usage error on stderr",
          "[probe][cli]") {
  // --json: no report on stdout, the error line on stderr (the same one as without --json).
  Case c{.name = "bad_override_ceiling_json", .exit = 2, .json = false, .golden = false};
  c.env = {{"GPULOCK_CUDA_CEILING", "twelve"}};
  Run r = run_case(c, true);
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.starts_with("error: invalid value for GPULOCK_CUDA_CEILING"));
}

// ----- the command itself -----

TEST_CASE("probe without --machine is the environment probe", "[probe][cli]") {
  // Plain `gpulock probe` asks an interpreter for its site-packages (tests/envprobe covers it);
  // with no python3 on PATH it says so and exits with the I/O status, no machine report.
  Case c{.name = "probe_without_machine", .exit = 74, .json = false, .golden = false};
  c.args = {"probe"};
  check_case(c);
}

TEST_CASE("probe --machine on this machine: a report and exit 0", "[probe][cli]") {
  // The real detection, with the real environment: whatever this machine has, the report is
  // complete and the exit status 0 (no GPU is a normal result). On a machine without an NVIDIA
  // driver (CI) it says so; the gpu-labelled test covers machines with one.
  std::map<std::string, std::string> env;
  for (const char* k : {"PATH", "LD_LIBRARY_PATH", "HOME", "CUDA_VISIBLE_DEVICES"}) {
    if (const char* v = std::getenv(k)) env[k] = v;
  }
  Run text = run_process({kExe, "probe", "--machine"}, env);
  INFO(text.out << text.err);
  CHECK(text.status == 0);
  CHECK(text.out.find("Steps\n  overrides") != std::string::npos);
  CHECK(text.out.find("Verdict\n") != std::string::npos);
  Run json = run_process({kExe, "probe", "--machine", "--json"}, env);
  CHECK(json.status == 0);
  CHECK(json.out.find("\"schema\": \"gpulock.machine/1\"") != std::string::npos);
  bool driver_here = fs::exists("/proc/driver/nvidia/version") ||
                     fs::exists("/sys/module/nvidia/version") || fs::exists("/dev/nvidiactl");
  if (!driver_here) {
    CHECK(text.out.find("no NVIDIA driver found") != std::string::npos);
    CHECK(json.out.find("\"status\": \"no-driver\"") != std::string::npos);
  }
}
