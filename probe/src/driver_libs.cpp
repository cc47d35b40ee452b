#include "driver_libs.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <span>

#include <fmt/format.h>

namespace gpulock::probe::detail {
namespace {

// The few NVML and CUDA driver API declarations gpulock needs (no headers are installed, and
// the libraries are never linked). Signatures from nvml.h and cuda.h.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};
constexpr int kCuDeviceAttributeComputeCapabilityMajor = 75;
constexpr int kCuDeviceAttributeComputeCapabilityMinor = 76;
constexpr unsigned kNvmlBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE, UUID_V2 too

// One line of the report: "key\tfield\tfield...". Control characters in values become spaces
// so that a library's text cannot break the framing.
void emit(int fd, std::initializer_list<std::string_view> fields) {
  std::string line;
  bool first = true;
  for (std::string_view f : fields) {
    if (!first) line += '\t';
    first = false;
    for (char c : f)
      line += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  }
  line += '\n';
  sys::write_all(fd, line);
}

std::string c_string(const char* buffer, std::size_t size) {
  std::size_t n = 0;
  while (n < size && buffer[n] != '\0')
    ++n;
  return std::string(buffer, n);
}

// Calls `f` with the call announced first and its return code reported after.
template <class F>
int traced(int fd, const std::string& name, F&& f) {
  emit(fd, {"call", name});
  int rc = f();
  emit(fd, {"rc", name, std::to_string(rc)});
  return rc;
}

// In hermetic mode (tests), a soname is looked for in LD_LIBRARY_PATH only; the message for a
// miss is the loader's own.
std::optional<std::string> hermetic_lookup(const std::string& soname) {
  const char* path = std::getenv("LD_LIBRARY_PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    std::size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (!dir.empty()) {
      std::string candidate = dir + "/" + soname;
      if (::access(candidate.c_str(), F_OK) == 0) return candidate;
    }
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

// Opens the first candidate that loads; reports each failure and the file that loaded.
void* open_first(int fd, std::span<const std::string> candidates, bool hermetic) {
  for (const auto& name : candidates) {
    std::string file = name;
    if (hermetic && name.find('/') == std::string::npos) {
      auto found = hermetic_lookup(name);
      if (!found) {
        emit(fd, {"dlerror", name + ": cannot open shared object file: No such file or directory"});
        continue;
      }
      file = *found;
    }
    void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = ::dlerror();
      emit(fd, {"dlerror", e != nullptr ? e : name});
      continue;
    }
    std::string path = name;
    link_map* map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
        map->l_name[0] != '\0') {
      path = map->l_name;
    }
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) != nullptr) path = resolved;
    emit(fd, {"loaded", path});
    return handle;
  }
  return nullptr;
}

template <class Fn>
Fn* driver_symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn*>(::dlsym(handle, name));
}

void nvml_body(int fd, const std::vector<std::string>& candidates, bool hermetic) {
  void* h = open_first(fd, candidates, hermetic);
  if (h == nullptr) return;
  auto init = driver_symbol<nvmlReturn_t()>(h, "nvmlInit_v2");
  if (init == nullptr) {
    emit(fd, {"missing", "nvmlInit_v2"});
    return;
  }
  if (traced(fd, "nvmlInit_v2", init) != 0) return;

  if (auto f = driver_symbol<nvmlReturn_t(char*, unsigned)>(h, "nvmlSystemGetDriverVersion")) {
    char buffer[81] = {};
    if (traced(fd, "nvmlSystemGetDriverVersion", [&] { return f(buffer, 80); }) == 0) {
      emit(fd, {"driver_version", c_string(buffer, sizeof buffer)});
    }
  } else {
    emit(fd, {"missing", "nvmlSystemGetDriverVersion"});
  }
  if (auto f = driver_symbol<nvmlReturn_t(int*)>(h, "nvmlSystemGetCudaDriverVersion_v2")) {
    int v = 0;
    if (traced(fd, "nvmlSystemGetCudaDriverVersion_v2", [&] { return f(&v); }) == 0) {
      emit(fd, {"cuda_version", std::to_string(v)});
    }
  } else {
    emit(fd, {"missing", "nvmlSystemGetCudaDriverVersion_v2"});
  }

  auto get_count = driver_symbol<nvmlReturn_t(unsigned*)>(h, "nvmlDeviceGetCount_v2");
  auto get_handle =
      driver_symbol<nvmlReturn_t(unsigned, nvmlDevice_t*)>(h, "nvmlDeviceGetHandleByIndex_v2");
  auto get_name =
      driver_symbol<nvmlReturn_t(nvmlDevice_t, char*, unsigned)>(h, "nvmlDeviceGetName");
  auto get_uuid =
      driver_symbol<nvmlReturn_t(nvmlDevice_t, char*, unsigned)>(h, "nvmlDeviceGetUUID");
  auto get_cc = driver_symbol<nvmlReturn_t(nvmlDevice_t, int*, int*)>(
      h, "nvmlDeviceGetCudaComputeCapability");
  auto get_mem =
      driver_symbol<nvmlReturn_t(nvmlDevice_t, nvmlMemory_t*)>(h, "nvmlDeviceGetMemoryInfo");
  if (get_count == nullptr || get_handle == nullptr) {
    emit(fd, {"missing",
              get_count == nullptr ? "nvmlDeviceGetCount_v2" : "nvmlDeviceGetHandleByIndex_v2"});
  } else {
    unsigned count = 0;
    if (traced(fd, "nvmlDeviceGetCount_v2", [&] { return get_count(&count); }) == 0) {
      emit(fd, {"count", std::to_string(count)});
      for (unsigned i = 0; i < count && i < 64; ++i) {
        std::string idx = std::to_string(i);
        nvmlDevice_t dev = nullptr;
        if (traced(fd, fmt::format("nvmlDeviceGetHandleByIndex_v2({})", i),
                   [&] { return get_handle(i, &dev); }) != 0) {
          continue;
        }
        emit(fd, {"gpu", idx});
        char buffer[kNvmlBufferSize + 1] = {};
        if (get_name != nullptr && traced(fd, fmt::format("nvmlDeviceGetName({})", i), [&] {
                                     return get_name(dev, buffer, kNvmlBufferSize);
                                   }) == 0) {
          emit(fd, {"gpu.name", idx, c_string(buffer, sizeof buffer)});
        }
        std::array<char, kNvmlBufferSize + 1> uuid{};
        if (get_uuid != nullptr && traced(fd, fmt::format("nvmlDeviceGetUUID({})", i), [&] {
                                     return get_uuid(dev, uuid.data(), kNvmlBufferSize);
                                   }) == 0) {
          emit(fd, {"gpu.uuid", idx, c_string(uuid.data(), uuid.size())});
        }
        int major = 0;
        int minor = 0;
        if (get_cc != nullptr &&
            traced(fd, fmt::format("nvmlDeviceGetCudaComputeCapability({})", i),
                   [&] { return get_cc(dev, &major, &minor); }) == 0) {
          emit(fd, {"gpu.cc", idx, fmt::format("{}.{}", major, minor)});
        }
        nvmlMemory_t memory{};
        if (get_mem != nullptr && traced(fd, fmt::format("nvmlDeviceGetMemoryInfo({})", i),
                                         [&] { return get_mem(dev, &memory); }) == 0) {
          emit(fd, {"gpu.mem", idx, std::to_string(memory.total)});
        }
      }
    }
  }
  if (auto f = driver_symbol<nvmlReturn_t()>(h, "nvmlShutdown")) traced(fd, "nvmlShutdown", f);
  emit(fd, {"done"});
}

std::string format_uuid(const CUuuid& u) {
  std::string hex;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", u.bytes[i]);
  }
  return "GPU-" + hex;
}

void cuda_body(int fd, const std::vector<std::string>& candidates, bool hermetic) {
  void* h = open_first(fd, candidates, hermetic);
  if (h == nullptr) return;
  auto init = driver_symbol<CUresult(unsigned)>(h, "cuInit");
  auto version = driver_symbol<CUresult(int*)>(h, "cuDriverGetVersion");
  if (init == nullptr || version == nullptr) {
    emit(fd, {"missing", init == nullptr ? "cuInit" : "cuDriverGetVersion"});
    return;
  }
  int init_rc = traced(fd, "cuInit", [&] { return init(0); });
  // cuDriverGetVersion needs no initialization: the ceiling is known even when cuInit fails
  // because no device is visible.
  int v = 0;
  if (traced(fd, "cuDriverGetVersion", [&] { return version(&v); }) == 0) {
    emit(fd, {"cuda_version", std::to_string(v)});
  }
  if (init_rc != 0) return;
  auto get_count = driver_symbol<CUresult(int*)>(h, "cuDeviceGetCount");
  auto get_device = driver_symbol<CUresult(CUdevice*, int)>(h, "cuDeviceGet");
  auto get_name = driver_symbol<CUresult(char*, int, CUdevice)>(h, "cuDeviceGetName");
  auto get_attr = driver_symbol<CUresult(int*, int, CUdevice)>(h, "cuDeviceGetAttribute");
  auto get_mem = driver_symbol<CUresult(std::size_t*, CUdevice)>(h, "cuDeviceTotalMem_v2");
  auto get_uuid = driver_symbol<CUresult(CUuuid*, CUdevice)>(h, "cuDeviceGetUuid");
  if (get_count == nullptr || get_device == nullptr) {
    emit(fd, {"missing", get_count == nullptr ? "cuDeviceGetCount" : "cuDeviceGet"});
    return;
  }
  int count = 0;
  if (traced(fd, "cuDeviceGetCount", [&] { return get_count(&count); }) != 0) return;
  emit(fd, {"count", std::to_string(count)});
  for (int i = 0; i < count && i < 64; ++i) {
    std::string idx = std::to_string(i);
    CUdevice dev = 0;
    if (traced(fd, fmt::format("cuDeviceGet({})", i), [&] { return get_device(&dev, i); }) != 0) {
      continue;
    }
    emit(fd, {"gpu", idx});
    char name[257] = {};
    if (get_name != nullptr && traced(fd, fmt::format("cuDeviceGetName({})", i),
                                      [&] { return get_name(name, 256, dev); }) == 0) {
      emit(fd, {"gpu.name", idx, c_string(name, sizeof name)});
    }
    int major = 0;
    int minor = 0;
    if (get_attr != nullptr &&
        traced(fd, fmt::format("cuDeviceGetAttribute({})", i), [&] {
          int rc = get_attr(&major, kCuDeviceAttributeComputeCapabilityMajor, dev);
          return rc != 0 ? rc : get_attr(&minor, kCuDeviceAttributeComputeCapabilityMinor, dev);
        }) == 0) {
      emit(fd, {"gpu.cc", idx, fmt::format("{}.{}", major, minor)});
    }
    std::size_t bytes = 0;
    if (get_mem != nullptr && traced(fd, fmt::format("cuDeviceTotalMem_v2({})", i),
                                     [&] { return get_mem(&bytes, dev); }) == 0) {
      emit(fd, {"gpu.mem", idx, std::to_string(bytes)});
    }
    CUuuid uuid{};
    if (get_uuid != nullptr && traced(fd, fmt::format("cuDeviceGetUuid({})", i),
                                      [&] { return get_uuid(&uuid, dev); }) == 0) {
      emit(fd, {"gpu.uuid", idx, format_uuid(uuid)});
    }
  }
  emit(fd, {"done"});
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    std::size_t tab = line.find('\t');
    fields.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) break;
    line.remove_prefix(tab + 1);
  }
  return fields;
}

template <class T>
std::optional<T> number(std::string_view text) {
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

LibGpu& gpu_at(LibReport& report, std::string_view index_text) {
  auto index = number<std::uint32_t>(index_text).value_or(0);
  for (auto& g : report.gpus) {
    if (g.index == index) return g;
  }
  report.gpus.push_back(LibGpu{});
  report.gpus.back().index = index;
  return report.gpus.back();
}

}  // namespace

std::optional<int> LibReport::rc(std::string_view function) const {
  for (const auto& [name, code] : calls) {
    if (name == function) return code;
  }
  return std::nullopt;
}

core::Result<sys::ChildProcess> start_nvml_child(std::vector<std::string> candidates,
                                                 bool hermetic) {
  return sys::ChildProcess::fork_call(
      [c = std::move(candidates), hermetic](int fd) { nvml_body(fd, c, hermetic); });
}

core::Result<sys::ChildProcess> start_cuda_child(std::vector<std::string> candidates,
                                                 bool hermetic) {
  return sys::ChildProcess::fork_call(
      [c = std::move(candidates), hermetic](int fd) { cuda_body(fd, c, hermetic); });
}

LibReport parse_lib_report(sys::ChildResult child) {
  LibReport r;
  std::string_view text = child.out;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;  // a line cut short by a crash
    auto f = split_tabs(text.substr(0, nl));
    text.remove_prefix(nl + 1);
    const std::string_view key = f[0];
    if (key == "dlerror" && f.size() >= 2) {
      r.dl_errors.emplace_back(f[1]);
    } else if (key == "loaded" && f.size() >= 2) {
      r.loaded = true;
      r.path = std::string(f[1]);
    } else if (key == "missing" && f.size() >= 2) {
      r.missing_symbol = std::string(f[1]);
    } else if (key == "call" && f.size() >= 2) {
      r.pending_call = std::string(f[1]);
    } else if (key == "rc" && f.size() >= 3) {
      r.calls.emplace_back(std::string(f[1]), number<int>(f[2]).value_or(-1));
      r.pending_call.clear();
    } else if (key == "driver_version" && f.size() >= 2) {
      r.driver_version = std::string(f[1]);
    } else if (key == "cuda_version" && f.size() >= 2) {
      r.cuda_version = number<int>(f[1]);
    } else if (key == "count" && f.size() >= 2) {
      r.count = number<std::uint32_t>(f[1]);
    } else if (key == "gpu" && f.size() >= 2) {
      gpu_at(r, f[1]);
    } else if (key == "gpu.name" && f.size() >= 3) {
      gpu_at(r, f[1]).name = std::string(f[2]);
    } else if (key == "gpu.uuid" && f.size() >= 3) {
      gpu_at(r, f[1]).uuid = std::string(f[2]);
    } else if (key == "gpu.cc" && f.size() >= 3) {
      std::size_t dot = f[2].find('.');
      if (dot != std::string_view::npos) {
        auto& g = gpu_at(r, f[1]);
        g.cc_major = number<int>(f[2].substr(0, dot)).value_or(-1);
        g.cc_minor = number<int>(f[2].substr(dot + 1)).value_or(-1);
      }
    } else if (key == "gpu.mem" && f.size() >= 3) {
      gpu_at(r, f[1]).memory_bytes = number<std::uint64_t>(f[2]);
    }
  }
  r.child = std::move(child);
  return r;
}

std::string nvml_error_name(int rc) {
  static constexpr std::array<std::string_view, 30> kNames{
      "NVML_SUCCESS",
      "NVML_ERROR_UNINITIALIZED",
      "NVML_ERROR_INVALID_ARGUMENT",
      "NVML_ERROR_NOT_SUPPORTED",
      "NVML_ERROR_NO_PERMISSION",
      "NVML_ERROR_ALREADY_INITIALIZED",
      "NVML_ERROR_NOT_FOUND",
      "NVML_ERROR_INSUFFICIENT_SIZE",
      "NVML_ERROR_INSUFFICIENT_POWER",
      "NVML_ERROR_DRIVER_NOT_LOADED",
      "NVML_ERROR_TIMEOUT",
      "NVML_ERROR_IRQ_ISSUE",
      "NVML_ERROR_LIBRARY_NOT_FOUND",
      "NVML_ERROR_FUNCTION_NOT_FOUND",
      "NVML_ERROR_CORRUPTED_INFOROM",
      "NVML_ERROR_GPU_IS_LOST",
      "NVML_ERROR_RESET_REQUIRED",
      "NVML_ERROR_OPERATING_SYSTEM",
      "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
      "NVML_ERROR_IN_USE",
      "NVML_ERROR_MEMORY",
      "NVML_ERROR_NO_DATA",
      "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
      "NVML_ERROR_INSUFFICIENT_RESOURCES",
      "NVML_ERROR_FREQ_NOT_SUPPORTED",
      "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
      "NVML_ERROR_DEPRECATED",
      "NVML_ERROR_NOT_READY",
      "NVML_ERROR_GPU_NOT_FOUND",
      "NVML_ERROR_INVALID_STATE",
  };
  if (rc >= 0 && static_cast<std::size_t>(rc) < kNames.size()) {
    return fmt::format("{} ({})", kNames[static_cast<std::size_t>(rc)], rc);
  }
  if (rc == 999) return "NVML_ERROR_UNKNOWN (999)";
  return fmt::format("NVML error {}", rc);
}

std::string cuda_error_name(int rc) {
  std::string_view name;
  switch (rc) {
    case 0:
      name = "CUDA_SUCCESS";
      break;
    case 1:
      name = "CUDA_ERROR_INVALID_VALUE";
      break;
    case 2:
      name = "CUDA_ERROR_OUT_OF_MEMORY";
      break;
    case 3:
      name = "CUDA_ERROR_NOT_INITIALIZED";
      break;
    case 4:
      name = "CUDA_ERROR_DEINITIALIZED";
      break;
    case 34:
      name = "CUDA_ERROR_STUB_LIBRARY";
      break;
    case 35:
      name = "CUDA_ERROR_INSUFFICIENT_DRIVER";
      break;
    case 46:
      name = "CUDA_ERROR_DEVICE_UNAVAILABLE";
      break;
    case 100:
      name = "CUDA_ERROR_NO_DEVICE";
      break;
    case 101:
      name = "CUDA_ERROR_INVALID_DEVICE";
      break;
    case 304:
      name = "CUDA_ERROR_OPERATING_SYSTEM";
      break;
    case 800:
      name = "CUDA_ERROR_NOT_PERMITTED";
      break;
    case 802:
      name = "CUDA_ERROR_SYSTEM_NOT_READY";
      break;
    case 803:
      name = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
      break;
    case 804:
      name = "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
      break;
    case 999:
      name = "CUDA_ERROR_UNKNOWN";
      break;
    default:
      return fmt::format("CUDA error {}", rc);
  }
  return fmt::format("{} ({})", name, rc);
}

}  // namespace gpulock::probe::detail
