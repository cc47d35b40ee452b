#include "gpulock/gpu/gpu_policy.h"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/gpu/gpu_stacks.h"

namespace gpulock::gpu {
namespace {

bool parse_uint(std::string_view s, std::uint32_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

std::string variant_name(CudaVersion cuda) {
  return fmt::format("cu{}{}", cuda.major, cuda.minor);
}

std::optional<CudaVersion> cuda_of_variant_label(std::string_view label) {
  if (label.starts_with("cuda")) {
    auto v = CudaVersion::parse(label.substr(4));
    if (v) return *v;
    return std::nullopt;
  }
  std::uint32_t n = 0;
  if (label.starts_with("cu") && parse_uint(label.substr(2), n) && n >= 100) {
    return CudaVersion{n / 10, n % 10};
  }
  return std::nullopt;
}

BuildLabel classify_build(const core::Version& version) {
  auto local = version.local();
  if (local.empty()) return {};
  const auto* first = std::get_if<std::string>(&local.front());
  if (first == nullptr) return {BuildKind::Other, std::nullopt};
  std::string_view label = *first;
  if (label.starts_with("cu") && label != "cpu") {
    // cuXYZ: the last digit is the minor version (cu92 -> 9.2, cu118 -> 11.8, cu130 -> 13.0).
    std::uint32_t all = 0;
    auto digits = label.substr(2);
    if (digits.size() >= 2 && parse_uint(digits, all)) {
      return {BuildKind::Cuda, CudaVersion{all / 10, all % 10}};
    }
    return {BuildKind::Other, std::nullopt};
  }
  if (label == "cpu") return {BuildKind::Cpu, std::nullopt};
  if (label.starts_with("rocm")) return {BuildKind::Rocm, std::nullopt};
  return {BuildKind::Other, std::nullopt};
}

std::optional<CudaVersion> cuda_needed_by_runtime_package(std::string_view name,
                                                          const core::Version& version) {
  if (name != "nvidia-cuda-runtime" && !name.starts_with("nvidia-cuda-runtime-cu"))
    return std::nullopt;
  if (version.release().size() < 2) return std::nullopt;
  return CudaVersion{static_cast<std::uint32_t>(version.release_at(0)),
                     static_cast<std::uint32_t>(version.release_at(1))};
}

namespace {

// Libraries whose version is the CUDA release they belong to (so it bounds the minor too).
constexpr std::array<std::string_view, 4> kCudaVersionedLibraries = {
    "nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "nvidia-nvjitlink", "nvidia-cuda-cupti"};

std::optional<std::uint32_t> cu_suffix_major(std::string_view name, std::string_view& base) {
  auto dash = name.rfind("-cu");
  if (dash == std::string_view::npos) return std::nullopt;
  std::uint32_t major = 0;
  std::string_view digits = name.substr(dash + 3);
  if (digits.empty() || digits.size() > 2 || !parse_uint(digits, major)) return std::nullopt;
  base = name.substr(0, dash);
  return major;
}

CudaVersion release_cuda(const core::Version& v) {
  return {static_cast<std::uint32_t>(v.release_at(0)), static_cast<std::uint32_t>(v.release_at(1))};
}

}  // namespace

std::optional<CudaNeed> cuda_need_of_package(std::string_view name, const core::Version& version) {
  auto major_only = [](std::uint32_t major) { return CudaNeed{CudaVersion{major, 0}, false}; };
  if (name == "cuda-toolkit") {
    if (version.release().size() < 2) return std::nullopt;
    return CudaNeed{release_cuda(version), true};
  }
  if (name == "cuda-bindings" || name == "cuda-python") {
    auto major = version.release_at(0);
    if (major < 9 || major > 99) return std::nullopt;
    return major_only(static_cast<std::uint32_t>(major));
  }
  if (!name.starts_with("nvidia-")) return std::nullopt;
  std::string_view base;
  std::optional<std::uint32_t> major = cu_suffix_major(name, base);
  if (!major) {
    // CUDA 13's library wheels dropped the `-cuNN` suffix (gpu-stacks.md §6.1; the table's
    // `cuda13-name` rows): these names are CUDA 13 builds whatever their version.
    if (!gpu_stacks().is_cuda13_name(name)) return std::nullopt;
    base = name;
    major = 13;
  }
  bool versioned = std::find(kCudaVersionedLibraries.begin(), kCudaVersionedLibraries.end(),
                             base) != kCudaVersionedLibraries.end() ||
                   (base == "nvidia-cublas" && *major == 12);
  // A version that does not start with the CUDA major is not a CUDA release number.
  if (versioned && version.release_at(0) == *major && version.release().size() >= 2) {
    return CudaNeed{release_cuda(version), true};
  }
  return major_only(*major);
}

std::optional<CudaVersion> cuda_from_dependencies(
    std::span<const core::Requirement> requires_dist) {
  for (const auto& req : requires_dist) {
    std::string name = req.normalized_name();
    bool runtime = name == "nvidia-cuda-runtime" || name.starts_with("nvidia-cuda-runtime-cu");
    if (!runtime && name != "cuda-toolkit") continue;
    for (const auto& spec : req.specifier) {
      if (spec.op() == core::Operator::Equal && spec.version().release().size() >= 2) {
        return CudaVersion{static_cast<std::uint32_t>(spec.version().release_at(0)),
                           static_cast<std::uint32_t>(spec.version().release_at(1))};
      }
    }
  }
  return std::nullopt;
}

namespace {

// shared/research/uv.md §1.4: uv's TorchStrategy::applies_to (22 names).
constexpr std::array<std::string_view, 22> kTorchFamily = {"fbgemm-gpu",
                                                           "fbgemm-gpu-genai",
                                                           "pytorch-triton",
                                                           "pytorch-triton-rocm",
                                                           "pytorch-triton-xpu",
                                                           "torch",
                                                           "torch-tensorrt",
                                                           "torchao",
                                                           "torcharrow",
                                                           "torchaudio",
                                                           "torchcodec",
                                                           "torchcsprng",
                                                           "torchdistx",
                                                           "torchrec",
                                                           "torchserve",
                                                           "torchtext",
                                                           "torchtune",
                                                           "torchvision",
                                                           "triton",
                                                           "triton-rocm",
                                                           "triton-xpu",
                                                           "xformers"};

// uv's has_system_dependency list restricted to the family, plus xformers, which ships one
// build per CUDA variant on download.pytorch.org. triton/pytorch-triton are not CUDA-linked.
constexpr std::array<std::string_view, 15> kCudaLinked = {
    "fbgemm-gpu", "fbgemm-gpu-genai", "torch",      "torch-tensorrt", "torchao",
    "torcharrow", "torchaudio",       "torchcodec", "torchcsprng",    "torchdistx",
    "torchrec",   "torchtext",        "torchtune",  "torchvision",    "xformers"};

}  // namespace

bool is_torch_family(std::string_view name) {
  return std::find(kTorchFamily.begin(), kTorchFamily.end(), name) != kTorchFamily.end();
}

bool is_cuda_linked(std::string_view name) {
  return std::find(kCudaLinked.begin(), kCudaLinked.end(), name) != kCudaLinked.end();
}

namespace {

// One row of TORCH_CUDA_ARCH_LIST per (torch release range, CUDA version, machine).
// Source: shared/data/pytorch-gpu-wheels.json `gpu_arch_lists.entries` (each row's `source`
// names the pytorch/builder or pytorch/pytorch file). Lists are "X.Y;...;X.Y+PTX".
struct ArchRow {
  std::uint32_t first_minor;  // torch 2.<first_minor> ...
  std::uint32_t last_minor;   // ... to 2.<last_minor> (99: open-ended)
  CudaVersion cuda;
  std::string_view machine;  // "x86_64" or "aarch64"
  std::string_view list;
  std::string_view source;
};

constexpr ArchRow kArchRows[] = {
    {0,
     0,
     {11, 7},
     "x86_64",
     "3.7;5.0;6.0;7.0;7.5;8.0;8.6",
     "BUILDER release/2.0 manywheel/build_cuda.sh"},
    {0, 0, {11, 8}, "x86_64", "3.7;5.0;6.0;7.0;7.5;8.0;8.6;9.0", "BUILDER release/2.0"},
    {1, 5, {11, 8}, "x86_64", "3.7;5.0;6.0;7.0;7.5;8.0;8.6;9.0", "BUILDER release/2.1..2.5"},
    {1, 5, {12, 1}, "x86_64", "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "BUILDER release/2.1..2.5"},
    {4, 5, {12, 4}, "x86_64", "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "BUILDER release/2.4, release/2.5"},
    {4, 5, {12, 4}, "aarch64", "9.0", "BUILDER release/2.4, release/2.5"},
    {6,
     6,
     {12, 4},
     "x86_64",
     "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
     "PT_BUILD_CUDA (2.6-era fork; secondary)"},
    {6,
     6,
     {12, 6},
     "x86_64",
     "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
     "PT_BUILD_CUDA (2.6-era fork; secondary)"},
    {7,
     7,
     {12, 8},
     "x86_64",
     "5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",
     "PT_BUILD_CUDA (2.7-era fork; final 2.7.0 list unverified)"},
    {8, 8, {12, 8}, "x86_64", "7.5;8.0;8.6;9.0;10.0;12.0", "PT_157517"},
    {8, 8, {12, 9}, "x86_64", "7.5;8.0;8.6;9.0;10.0;12.0+PTX", "PT_157517"},
    {8,
     99,
     {12, 6},
     "x86_64",
     "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
     "pytorch .ci/manywheel/build_cuda.sh @799d09f2"},
    {8, 99, {12, 6}, "aarch64", "8.0;9.0", "pytorch .ci/manywheel/build_cuda.sh @799d09f2"},
    {9,
     11,
     {12, 8},
     "x86_64",
     "7.0;7.5;8.0;8.6;9.0;10.0;12.0",
     "pytorch .ci/manywheel/build_cuda.sh @799d09f2"},
    {9,
     11,
     {12, 8},
     "aarch64",
     "8.0;9.0;10.0;12.0",
     "pytorch .ci/manywheel/build_cuda.sh @799d09f2"},
    {9,
     99,
     {12, 9},
     "x86_64",
     "7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",
     "pytorch .ci/manywheel/build_cuda.sh @799d09f2"},
    {9,
     99,
     {13, 0},
     "x86_64",
     "7.5;8.0;8.6;9.0;10.0;12.0+PTX",
     "pytorch .ci/manywheel/build_cuda.sh @799d09f2"},
    {9,
     99,
     {13, 0},
     "aarch64",
     "8.0;9.0;10.0;11.0;12.0+PTX",
     "pytorch .ci/manywheel/build_cuda.sh @799d09f2"},
};

}  // namespace

ArchList parse_arch_list(std::string_view text, std::string_view source) {
  ArchList list;
  list.source = std::string(source);
  while (!text.empty()) {
    auto semi = text.find(';');
    std::string_view item = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
    bool ptx = item.ends_with("+PTX");
    if (ptx) item.remove_suffix(4);
    bool ptx_only = item.starts_with("PTX:");
    if (ptx_only) item.remove_prefix(4);
    auto cc = ComputeCapability::parse(item);
    if (!cc) continue;  // the tables are ours; a typo here is caught by the tests
    if (!ptx_only) list.cubins.push_back(*cc);
    if (ptx || ptx_only) list.ptx = *cc;
  }
  return list;
}

std::optional<ArchList> torch_arch_list(const core::Version& torch_version, CudaVersion cuda,
                                        std::string_view machine) {
  if (torch_version.release_at(0) != 2) return std::nullopt;
  auto minor = torch_version.release_at(1);
  for (const auto& row : kArchRows) {
    if (row.cuda == cuda && row.machine == machine && minor >= row.first_minor &&
        minor <= row.last_minor) {
      return parse_arch_list(row.list, row.source);
    }
  }
  return std::nullopt;
}

std::vector<CudaVersion> torch_cuda_builds_running_on(const core::Version& torch_version,
                                                      ComputeCapability gpu,
                                                      std::string_view machine) {
  std::vector<CudaVersion> out;
  if (torch_version.release_at(0) != 2) return out;
  auto minor = torch_version.release_at(1);
  for (const auto& row : kArchRows) {
    if (row.machine != machine || minor < row.first_minor || minor > row.last_minor) continue;
    if (!arch_list_runs_on(parse_arch_list(row.list, row.source), gpu)) continue;
    if (std::find(out.begin(), out.end(), row.cuda) == out.end()) out.push_back(row.cuda);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool arch_list_runs_on(const ArchList& list, ComputeCapability gpu) {
  for (const auto& cc : list.cubins) {
    if (cc.major == gpu.major && cc.minor <= gpu.minor) return true;
  }
  return list.ptx.has_value() && *list.ptx <= gpu;
}

std::string describe_arch_list(const ArchList& list) {
  std::string out;
  for (const auto& cc : list.cubins) {
    if (!out.empty()) out += ", ";
    out += cc.to_string();
    if (list.ptx && *list.ptx == cc) out += "+PTX";
  }
  if (list.ptx &&
      std::find(list.cubins.begin(), list.cubins.end(), *list.ptx) == list.cubins.end()) {
    out += (out.empty() ? "PTX " : ", PTX ") + list.ptx->to_string();
  }
  return out;
}

std::optional<ComputeCapability> cudnn_min_capability(const core::Version& cudnn_version) {
  // torch/backends/cudnn/__init__.py refuses cuDNN >= 9.11.0 below sm_75 (standards-and-peers.md
  // §C).
  if (cudnn_version.release_at(0) > 9 ||
      (cudnn_version.release_at(0) == 9 && cudnn_version.release_at(1) >= 11)) {
    return ComputeCapability{7, 5};
  }
  return std::nullopt;
}

ArchList archs_cuda_can_build(CudaVersion cuda) {
  // shared/data/cuda-archs.md: the first toolkit that can build each arch, and the first that
  // no longer can (0.0: still supported).
  struct Row {
    ComputeCapability arch;
    CudaVersion first, dropped;
  };
  static constexpr Row kRows[] = {
      {{3, 5}, {9, 0}, {12, 0}},  {{3, 7}, {9, 0}, {12, 0}},  {{5, 0}, {9, 0}, {13, 0}},
      {{5, 2}, {9, 0}, {13, 0}},  {{5, 3}, {9, 0}, {13, 0}},  {{6, 0}, {9, 0}, {13, 0}},
      {{6, 1}, {9, 0}, {13, 0}},  {{6, 2}, {9, 0}, {13, 0}},  {{7, 0}, {9, 0}, {13, 0}},
      {{7, 2}, {9, 0}, {13, 0}},  {{7, 5}, {10, 0}, {0, 0}},  {{8, 0}, {11, 0}, {0, 0}},
      {{8, 6}, {11, 1}, {0, 0}},  {{8, 7}, {11, 4}, {0, 0}},  {{8, 9}, {11, 8}, {0, 0}},
      {{9, 0}, {11, 8}, {0, 0}},  {{10, 0}, {12, 8}, {0, 0}}, {{10, 1}, {12, 8}, {13, 0}},
      {{12, 0}, {12, 8}, {0, 0}}, {{10, 3}, {12, 9}, {0, 0}}, {{12, 1}, {12, 9}, {0, 0}},
      {{11, 0}, {13, 0}, {0, 0}},
  };
  ArchList list;
  list.assumed = true;
  list.source =
      fmt::format("assumed: the architectures CUDA {} can build (cuda-archs.md)", cuda.to_string());
  for (const auto& row : kRows) {
    bool dropped = row.dropped.major != 0 && !(cuda < row.dropped);
    if (!(cuda < row.first) && !dropped) list.cubins.push_back(row.arch);
  }
  std::sort(list.cubins.begin(), list.cubins.end());
  return list;
}

}  // namespace gpulock::gpu

namespace gpulock::gpu {

std::optional<std::string> placeholder_real_name(std::string_view name,
                                                 const core::Version& version) {
  // gpu-stacks.md §6.1: `nvidia-cuda-runtime-cu13` is a deprecated placeholder (an empty 0.0.1
  // sdist); CUDA 13's runtime is `nvidia-cuda-runtime`. Any `nvidia-<lib>-cu13` at 0.0.x whose
  // unsuffixed name is a CUDA 13 library is one.
  if (!name.ends_with("-cu13") || version.release_at(0) != 0 || version.release_at(1) != 0)
    return std::nullopt;
  std::string_view base = name.substr(0, name.size() - 5);
  if (!gpu_stacks().is_cuda13_name(base)) return std::nullopt;
  return std::string(base);
}

std::optional<DriverBranches> driver_branches_for(ComputeCapability arch) {
  // shared/data/gpu-names.md: "Driver branches that can drive a family".
  if (arch.major >= 10 && arch.major <= 12) return DriverBranches{"Blackwell", 570, std::nullopt};
  if (arch.major == 9) return DriverBranches{"Hopper", 520, std::nullopt};
  if (arch.major == 7 && arch.minor < 5) return DriverBranches{"Volta", std::nullopt, 580};
  if (arch.major == 6) return DriverBranches{"Pascal", std::nullopt, 580};
  if (arch.major == 5) return DriverBranches{"Maxwell", std::nullopt, 580};
  if (arch.major == 3) return DriverBranches{"Kepler", std::nullopt, 470};
  return std::nullopt;
}

std::optional<std::string> branch_cannot_drive(ComputeCapability arch,
                                               const DriverVersion& driver) {
  auto branches = driver_branches_for(arch);
  if (!branches) return std::nullopt;
  const std::uint32_t branch = driver.branch();
  if (branches->first && branch < *branches->first) {
    return fmt::format("{} GPUs ({}) need driver branch R{} or later, and this driver is R{}",
                       branches->family, arch.to_string(), *branches->first, branch);
  }
  if (branches->last && branch > *branches->last) {
    return fmt::format("R{} is the last driver branch for {} GPUs ({}), and this driver is R{}",
                       *branches->last, branches->family, arch.to_string(), branch);
  }
  return std::nullopt;
}

}  // namespace gpulock::gpu
