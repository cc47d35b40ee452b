#include "load_child.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "gpulock/sys/process.h"

namespace gpulock::probe::detail {
namespace {

// cuDNN and CUDA runtime prototypes, declared here (gpulock never includes their headers).
// Values from cuDNN 9's cudnn_graph.h / cudnn_ops.h / cudnn_cnn.h and CUDA's driver_types.h.
using SizeFn = std::size_t (*)();
using StatusFn = int (*)();
using CreateFn = int (*)(void**);
using DestroyFn = int (*)(void*);
using LastErrorFn = void (*)(char*, std::size_t);
using SetTensor4dFn = int (*)(void*, int format, int data_type, int n, int c, int h, int w);
using SetFilter4dFn = int (*)(void*, int data_type, int format, int k, int c, int h, int w);
using SetConv2dFn = int (*)(void*, int pad_h, int pad_w, int u, int v, int dil_h, int dil_w,
                            int mode, int compute_type);
using ConvOutDimFn = int (*)(void* conv, void* x, void* w, int* n, int* c, int* h, int* wd);
using WorkspaceFn = int (*)(void* handle, void* x, void* w, void* conv, void* y, int algo,
                            std::size_t* size);
using ConvForwardFn = int (*)(void* handle, const void* alpha, void* x_desc, const void* x,
                              void* w_desc, const void* w, void* conv, int algo, void* ws,
                              std::size_t ws_size, const void* beta, void* y_desc, void* y);
using CudaMallocFn = int (*)(void**, std::size_t);
using CudaFreeFn = int (*)(void*);
using CudaMemcpyFn = int (*)(void*, const void*, std::size_t, int kind);
using CudaSyncFn = int (*)();
using CudaErrorNameFn = const char* (*)(int);

constexpr int kTensorNchw = 0;          // CUDNN_TENSOR_NCHW
constexpr int kDataFloat = 0;           // CUDNN_DATA_FLOAT
constexpr int kCrossCorrelation = 1;    // CUDNN_CROSS_CORRELATION
constexpr int kAlgoImplicitGemm = 0;    // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM
constexpr int kMemcpyHostToDevice = 1;  // cudaMemcpyHostToDevice
constexpr int kMemcpyDeviceToHost = 2;  // cudaMemcpyDeviceToHost

class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void line(std::initializer_list<std::string_view> fields) {
    std::string out;
    bool first = true;
    for (auto f : fields) {
      if (!first) out += '\t';
      out += escape_field(f);
      first = false;
    }
    out += '\n';
    sys::write_all(fd_, out);
  }
  void step(const std::string& key, const std::string& text) { line({"step", key, text}); }

 private:
  int fd_;
};

template <class Fn>
Fn symbol(void* handle, const char* name) {
  if (handle == nullptr) return nullptr;
  return reinterpret_cast<Fn>(::dlsym(handle, name));
}

std::string dl_error() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown error";
}

// Version bytes of a loaded library's data symbol, as "9.1.0".
std::string version_from_symbol(void* handle, const std::string& name) {
  auto* p = static_cast<const unsigned char*>(::dlsym(handle, name.c_str()));
  if (p == nullptr || p[3] != 0 || p[2] < 7 || p[2] > 99) return {};
  return fmt::format("{}.{}.{}", p[2], p[1], p[0]);
}

// The kernel check: a 1x3x8x8 input of ones, a 1x3x3x3 filter of ones, no padding: every one of
// the 6x6 outputs is 27.
void run_kernels(Reporter& r, void* cudnn, void* handle, const std::string& cudart_path) {
  auto report = [&](const char* name, int code, std::string text = {}) {
    r.line({"kstep", name, std::to_string(code), text});
    return code == 0;
  };
  r.step("kernel:cudart", "loading " + cudart_path);
  void* cudart =
      cudart_path.empty() ? nullptr : ::dlopen(cudart_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (cudart == nullptr) {
    r.line({"kstep", "load libcudart", "-1",
            cudart_path.empty() ? "no libcudart in the environment" : dl_error()});
    return;
  }
  auto cuda_malloc = symbol<CudaMallocFn>(cudart, "cudaMalloc");
  auto cuda_free = symbol<CudaFreeFn>(cudart, "cudaFree");
  auto cuda_memcpy = symbol<CudaMemcpyFn>(cudart, "cudaMemcpy");
  auto cuda_sync = symbol<CudaSyncFn>(cudart, "cudaDeviceSynchronize");
  auto cuda_error_name = symbol<CudaErrorNameFn>(cudart, "cudaGetErrorName");
  auto create_tensor = symbol<CreateFn>(cudnn, "cudnnCreateTensorDescriptor");
  auto create_filter = symbol<CreateFn>(cudnn, "cudnnCreateFilterDescriptor");
  auto create_conv = symbol<CreateFn>(cudnn, "cudnnCreateConvolutionDescriptor");
  auto set_tensor = symbol<SetTensor4dFn>(cudnn, "cudnnSetTensor4dDescriptor");
  auto set_filter = symbol<SetFilter4dFn>(cudnn, "cudnnSetFilter4dDescriptor");
  auto set_conv = symbol<SetConv2dFn>(cudnn, "cudnnSetConvolution2dDescriptor");
  auto out_dim = symbol<ConvOutDimFn>(cudnn, "cudnnGetConvolution2dForwardOutputDim");
  auto ws_size = symbol<WorkspaceFn>(cudnn, "cudnnGetConvolutionForwardWorkspaceSize");
  auto forward = symbol<ConvForwardFn>(cudnn, "cudnnConvolutionForward");
  if (!cuda_malloc || !cuda_free || !cuda_memcpy || !cuda_sync || !create_tensor ||
      !create_filter || !create_conv || !set_tensor || !set_filter || !set_conv || !out_dim ||
      !ws_size || !forward) {
    r.line({"kstep", "resolve functions", "-1", "a cuDNN or CUDA runtime function is missing"});
    return;
  }
  auto cuda = [&](const char* name, int code) {
    std::string text = code == 0 ? "cudaSuccess" : fmt::format("cudaError {}", code);
    if (cuda_error_name != nullptr) {
      if (const char* n = cuda_error_name(code)) text = n;
    }
    return report(name, code, text);
  };

  void *x_desc = nullptr, *y_desc = nullptr, *w_desc = nullptr, *conv = nullptr;
  r.step("kernel:descriptors", "creating descriptors");
  if (!report("cudnnCreateTensorDescriptor", create_tensor(&x_desc)) ||
      !report("cudnnCreateTensorDescriptor", create_tensor(&y_desc)) ||
      !report("cudnnCreateFilterDescriptor", create_filter(&w_desc)) ||
      !report("cudnnCreateConvolutionDescriptor", create_conv(&conv)) ||
      !report("cudnnSetTensor4dDescriptor",
              set_tensor(x_desc, kTensorNchw, kDataFloat, 1, 3, 8, 8)) ||
      !report("cudnnSetFilter4dDescriptor",
              set_filter(w_desc, kDataFloat, kTensorNchw, 1, 3, 3, 3)) ||
      !report("cudnnSetConvolution2dDescriptor",
              set_conv(conv, 0, 0, 1, 1, 1, 1, kCrossCorrelation, kDataFloat))) {
    return;
  }
  int n = 0, c = 0, h = 0, w = 0;
  if (!report("cudnnGetConvolution2dForwardOutputDim",
              out_dim(conv, x_desc, w_desc, &n, &c, &h, &w))) {
    return;
  }
  if (n != 1 || c != 1 || h != 6 || w != 6) {
    r.line(
        {"kstep", "output shape", "-1", fmt::format("{}x{}x{}x{}, expected 1x1x6x6", n, c, h, w)});
    return;
  }
  if (!report("cudnnSetTensor4dDescriptor",
              set_tensor(y_desc, kTensorNchw, kDataFloat, 1, 1, 6, 6))) {
    return;
  }
  std::size_t workspace = 0;
  if (!report("cudnnGetConvolutionForwardWorkspaceSize",
              ws_size(handle, x_desc, w_desc, conv, y_desc, kAlgoImplicitGemm, &workspace))) {
    return;
  }
  const std::vector<float> ones_x(1 * 3 * 8 * 8, 1.0f);
  const std::vector<float> ones_w(1 * 3 * 3 * 3, 1.0f);
  std::vector<float> y(36, 0.0f);
  void *dx = nullptr, *dw = nullptr, *dy = nullptr, *dws = nullptr;
  r.step("kernel:cudaMalloc", "allocating device buffers");
  if (!cuda("cudaMalloc", cuda_malloc(&dx, ones_x.size() * sizeof(float))) ||
      !cuda("cudaMalloc", cuda_malloc(&dw, ones_w.size() * sizeof(float))) ||
      !cuda("cudaMalloc", cuda_malloc(&dy, y.size() * sizeof(float))) ||
      (workspace > 0 && !cuda("cudaMalloc", cuda_malloc(&dws, workspace)))) {
    return;
  }
  r.step("kernel:copy", "copying inputs to the device");
  if (!cuda("cudaMemcpy",
            cuda_memcpy(dx, ones_x.data(), ones_x.size() * sizeof(float), kMemcpyHostToDevice)) ||
      !cuda("cudaMemcpy",
            cuda_memcpy(dw, ones_w.data(), ones_w.size() * sizeof(float), kMemcpyHostToDevice))) {
    return;
  }
  const float alpha = 1.0f, beta = 0.0f;
  r.step("kernel:forward", "running cudnnConvolutionForward");
  if (!report("cudnnConvolutionForward",
              forward(handle, &alpha, x_desc, dx, w_desc, dw, conv, kAlgoImplicitGemm, dws,
                      workspace, &beta, y_desc, dy))) {
    return;
  }
  r.step("kernel:synchronize", "waiting for the device");
  if (!cuda("cudaDeviceSynchronize", cuda_sync())) return;
  if (!cuda("cudaMemcpy",
            cuda_memcpy(y.data(), dy, y.size() * sizeof(float), kMemcpyDeviceToHost))) {
    return;
  }
  bool right = true;
  float bad = 0;
  for (float v : y) {
    if (v != 27.0f) {
      right = false;
      bad = v;
      break;
    }
  }
  r.line({"kresult", right ? "ok" : "wrong", fmt::format("{}", right ? 27.0f : bad)});
  for (void* p : {dx, dw, dy, dws}) {
    if (p != nullptr) cuda_free(p);
  }
}

void report_maps(Reporter& r) {
  std::ifstream in("/proc/self/maps");
  std::string line;
  std::set<std::string> seen;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string range, perms, offset, dev, inode;
    ls >> range >> perms >> offset >> dev >> inode;
    std::string path;
    std::getline(ls, path);
    auto b = path.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    path = path.substr(b);
    if (path.empty() || path[0] != '/' || !is_reported_mapping(path)) continue;
    if (!seen.insert(path).second) continue;
    r.line({"map", dev, inode, path});
  }
}

}  // namespace

std::string escape_field(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<std::string> split_fields(std::string_view line) {
  std::vector<std::string> out(1);
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\t') {
      out.emplace_back();
    } else if (c == '\\' && i + 1 < line.size()) {
      char n = line[++i];
      out.back() += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool is_reported_mapping(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (std::string_view prefix : {"libcudnn", "libcudart", "libcublas", "libnccl"}) {
    if (file.starts_with(prefix) && file.find(".so") != std::string_view::npos) return true;
  }
  return false;
}

void run_child(const ChildPlan& plan, int fd) {
  Reporter r(fd);
  auto skipped = [&](const std::string& key) { return plan.skip.contains(key); };
  void* cudnn = nullptr;
  for (std::size_t i = 0; i < plan.preloads.size(); ++i) {
    const std::string key = fmt::format("preload:{}", i);
    if (skipped(key)) continue;
    r.step(key, "loading " + plan.preloads[i]);
    void* h = ::dlopen(plan.preloads[i].c_str(), RTLD_NOW | RTLD_LOCAL);
    r.line({"preload", std::to_string(i), h != nullptr ? "ok" : "error",
            h != nullptr ? "" : dl_error()});
    if (static_cast<int>(i) == plan.cudnn_index) cudnn = h;
  }

  if (cudnn != nullptr) {
    for (const auto& fn : plan.version_functions) {
      const std::string key = "call:" + fn;
      if (skipped(key)) continue;
      auto f = symbol<SizeFn>(cudnn, fn.c_str());
      if (f == nullptr) {
        r.line({"call", fn, "absent", ""});
        continue;
      }
      r.step(key, "calling " + fn);
      r.line({"call", fn, "ok", std::to_string(f())});
    }
    for (const auto& fn : plan.check_functions) {
      const std::string key = "check:" + fn;
      if (skipped(key)) continue;
      auto f = symbol<StatusFn>(cudnn, fn.c_str());
      if (f == nullptr) {
        r.line({"check", fn, "absent", ""});
        continue;
      }
      r.step(key, "calling " + fn);
      r.line({"check", fn, "ok", std::to_string(f())});
    }
    if (!skipped("create")) {
      auto create = symbol<CreateFn>(cudnn, "cudnnCreate");
      auto destroy = symbol<DestroyFn>(cudnn, "cudnnDestroy");
      auto last_error = symbol<LastErrorFn>(cudnn, "cudnnGetLastErrorString");
      if (create == nullptr) {
        r.line({"create", "absent", ""});
      } else {
        r.step("create", "calling cudnnCreate");
        void* handle = nullptr;
        int status = create(&handle);
        char message[512] = {0};
        if (status != 0 && last_error != nullptr) last_error(message, sizeof message);
        r.line({"create", std::to_string(status), message});
        if (status == 0 && plan.run_kernels && !skipped("kernel")) {
          run_kernels(r, cudnn, handle, plan.cudart);
        }
        if (status == 0 && destroy != nullptr) destroy(handle);
      }
    }
  }

  if (!skipped("maps")) {
    r.step("maps", "reading /proc/self/maps");
    report_maps(r);
  }

  for (std::size_t j = 0; j < plan.sublibraries.size(); ++j) {
    const auto& lib = plan.sublibraries[j];
    const std::string key = fmt::format("lib:{}", j);
    if (lib.path.empty() || skipped(key)) continue;
    r.step(key, "loading " + lib.path);
    void* h = ::dlopen(lib.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      r.line({"lib", std::to_string(j), "error", dl_error()});
      continue;
    }
    r.line({"lib", std::to_string(j), "ok", ""});
    for (const auto& sym : lib.version_symbols) {
      std::string v = version_from_symbol(h, sym);
      if (!v.empty()) {
        r.line({"libver", std::to_string(j), v, sym});
        break;
      }
    }
  }
  r.line({"done"});
}

}  // namespace gpulock::probe::detail
