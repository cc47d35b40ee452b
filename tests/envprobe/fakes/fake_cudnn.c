/* Small stand-ins for the libraries of an nvidia-cudnn-* wheel (and of the cuBLAS / CUDA runtime
 * wheels torch preloads), built by fixtures/fake_cudnn/CMakeLists.txt into the fixture wheels.
 * They keep the shape of the real ones (cuDNN 9, checked against /usr/local/cuda/lib64):
 *  - libcudnn.so.N (FAKE_SHIM): cudnnGetVersion & co.; the four cudnn*VersionCheck functions
 *    dlopen their sub-library BY BARE SONAME from this library (so with its RUNPATH $ORIGIN,
 *    after LD_LIBRARY_PATH, before the ld.so cache), compare its exported version with their own
 *    (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH = 1002; a failed dlopen gives
 *    CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED = 1008) and call its own check; cudnnCreate answers
 *    CUDNN_STATUS_NOT_INITIALIZED (1001), as the real one does without a GPU, unless built with
 *    FAKE_GPU, which runs the convolution on the CPU to exercise the probe's kernel path.
 *  - libcudnn_graph.so.N (FAKE_GRAPH): `cudnn_graph_version` (4 bytes: patch, minor, major, 0)
 *    and cudnnGetVersion; ops and adv export `cudnn_<x>_infer_version`; cnn, the engines and
 *    heuristic carry no version of their own (as in the real cuDNN 9). ops, cnn, adv, the engines
 *    and heuristic need libcudnn_graph (DT_NEEDED) and compare their version with it.
 *  - FAKE_PLAIN: a library with only `fake_library_version` (libcublas, libcudart).
 *  - FAKE_CRASH (with any kind): crashes in its constructor; FAKE_HANG: a libcudnn whose
 *    cudnnGetVersion never returns. FAKE_CUDART_GPU: a libcudart for FAKE_GPU.
 *  - FAKE_NEEDS_NEWER_GRAPH (with a sub-library kind): built against a newer libcudnn_graph, it
 *    needs a function the graph of its own release lacks, so loading it fails with the loader's
 *    "undefined symbol" (a sub-library mixed in from another release).
 * Version: FAKE_MAJOR.FAKE_MINOR.FAKE_PATCH; FAKE_CUDART (e.g. 12040), FAKE_MAXDEV (e.g. 900). */
#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FAKE_MAJOR
#define FAKE_MAJOR 9
#endif
#ifndef FAKE_MINOR
#define FAKE_MINOR 1
#endif
#ifndef FAKE_PATCH
#define FAKE_PATCH 0
#endif
#ifndef FAKE_CUDART
#define FAKE_CUDART 12040
#endif
#ifndef FAKE_MAXDEV
#define FAKE_MAXDEV 900
#endif

#define EXPORT __attribute__((visibility("default")))

#if defined(FAKE_GRAPH) || defined(FAKE_OPS) || defined(FAKE_ADV) || defined(FAKE_SHIM)
#define FAKE_VERSION_BYTES \
  { FAKE_PATCH, FAKE_MINOR, FAKE_MAJOR, 0 }
#endif

#if defined(FAKE_OPS) || defined(FAKE_CNN) || defined(FAKE_ADV) || defined(FAKE_ENGINE)
/* From libcudnn_graph (DT_NEEDED): the release this sub-library must match. */
extern const unsigned char cudnn_graph_version[4];
static int matches_graph(void) {
  return cudnn_graph_version[2] == FAKE_MAJOR && cudnn_graph_version[1] == FAKE_MINOR &&
         cudnn_graph_version[0] == FAKE_PATCH;
}
#endif

#ifdef FAKE_GRAPH
EXPORT const unsigned char cudnn_graph_version[4] = FAKE_VERSION_BYTES;
EXPORT size_t cudnnGetVersion(void) {
  return FAKE_MAJOR * 10000 + FAKE_MINOR * 100 + FAKE_PATCH;
}
EXPORT int cudnnGraphVersionCheck(void) {
  return 0;
}
#endif

#ifdef FAKE_OPS
EXPORT const unsigned char cudnn_ops_infer_version[4] = FAKE_VERSION_BYTES;
EXPORT int cudnnOpsVersionCheck(void) {
  return matches_graph() ? 0 : 1002;
}
#endif

#ifdef FAKE_CNN
EXPORT int cudnnCnnVersionCheck(void) {
  return matches_graph() ? 0 : 1002;
}
#endif

#ifdef FAKE_ADV
EXPORT const unsigned char cudnn_adv_infer_version[4] = FAKE_VERSION_BYTES;
EXPORT int cudnnAdvVersionCheck(void) {
  return matches_graph() ? 0 : 1002;
}
#endif

#ifdef FAKE_ENGINE
EXPORT int fake_engine_matches_graph(void) {
  return matches_graph();
}
#endif

#ifdef FAKE_NEEDS_NEWER_GRAPH
extern int cudnnFakeGraphFunctionOfANewerRelease(void);
EXPORT int fake_uses_newer_graph(void) {
  return cudnnFakeGraphFunctionOfANewerRelease();
}
#endif

#ifdef FAKE_PLAIN
EXPORT const char fake_library_version[] = FAKE_PLAIN_VERSION;
#endif

#ifdef FAKE_CRASH
__attribute__((constructor)) static void crash_on_load(void) {
  raise(SIGSEGV);
}
#endif

#if defined(FAKE_SHIM) || defined(FAKE_HANG)
static char last_error[256];

EXPORT size_t cudnnGetVersion(void) {
#ifdef FAKE_HANG
  for (;;)
    pause();
#endif
  return FAKE_MAJOR * 10000 + FAKE_MINOR * 100 + FAKE_PATCH;
}
EXPORT size_t cudnnGetCudartVersion(void) {
  return FAKE_CUDART;
}
EXPORT size_t cudnnGetMaxDeviceVersion(void) {
  return FAKE_MAXDEV;
}
EXPORT const char* cudnnGetErrorString(int status) {
  return status == 0 ? "CUDNN_STATUS_SUCCESS" : "CUDNN_STATUS_FAKE_ERROR";
}
EXPORT void cudnnGetLastErrorString(char* message, size_t max) {
  if (max > 0) {
    strncpy(message, last_error, max - 1);
    message[max - 1] = '\0';
  }
}

/* As cuDNN 9's shim: load the sub-library by soname, check its version and its own check. */
static int check(const char* name, const char* version_symbol, const char* function) {
  char soname[64];
  snprintf(soname, sizeof soname, "libcudnn_%s.so.%d", name, FAKE_MAJOR);
  void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    snprintf(last_error, sizeof last_error, "%s", dlerror());
    return 1008;
  }
  if (version_symbol != NULL) {
    const unsigned char* v = (const unsigned char*)dlsym(h, version_symbol);
    if (v == NULL || v[2] != FAKE_MAJOR || v[1] != FAKE_MINOR || v[0] != FAKE_PATCH) {
      snprintf(last_error, sizeof last_error, "%s: version mismatch", soname);
      return 1002;
    }
  }
  int (*f)(void) = (int (*)(void))dlsym(h, function);
  return f == NULL ? 1002 : f();
}

EXPORT int cudnnGraphVersionCheck(void) {
  return check("graph", "cudnn_graph_version", "cudnnGraphVersionCheck");
}
EXPORT int cudnnOpsVersionCheck(void) {
  return check("ops", "cudnn_ops_infer_version", "cudnnOpsVersionCheck");
}
EXPORT int cudnnCnnVersionCheck(void) {
  return check("cnn", NULL, "cudnnCnnVersionCheck");
}
EXPORT int cudnnAdvVersionCheck(void) {
  return check("adv", "cudnn_adv_infer_version", "cudnnAdvVersionCheck");
}

#ifndef FAKE_GPU
EXPORT int cudnnCreate(void** handle) {
  *handle = NULL;
  snprintf(last_error, sizeof last_error, "cudaGetDeviceCount(&count) != cudaSuccess");
  return 1001;
}
EXPORT int cudnnDestroy(void* handle) {
  (void)handle;
  return 0;
}
#else
/* A pretend GPU: descriptors are small structs, the "device" is host memory (the matching fake
 * libcudart's cudaMalloc is malloc), and the convolution is computed here. */
struct desc {
  int n, c, h, w;
  int pad_h, pad_w, u, v;
};
static struct desc descs[8];
static int used;
static int handle_token;
static void* new_desc(void) {
  return used < 8 ? &descs[used++] : NULL;
}
EXPORT int cudnnCreate(void** handle) {
  *handle = &handle_token;
  return 0;
}
EXPORT int cudnnDestroy(void* handle) {
  return handle == &handle_token ? 0 : 2000;
}
EXPORT int cudnnCreateTensorDescriptor(void** d) {
  return (*d = new_desc()) ? 0 : 4003;
}
EXPORT int cudnnCreateFilterDescriptor(void** d) {
  return (*d = new_desc()) ? 0 : 4003;
}
EXPORT int cudnnCreateConvolutionDescriptor(void** d) {
  return (*d = new_desc()) ? 0 : 4003;
}
EXPORT int cudnnSetTensor4dDescriptor(void* p, int format, int type, int n, int c, int h, int w) {
  struct desc* d = p;
  if (format != 0 || type != 0) return 2000;
  d->n = n, d->c = c, d->h = h, d->w = w;
  return 0;
}
EXPORT int cudnnSetFilter4dDescriptor(void* p, int type, int format, int k, int c, int h, int w) {
  return cudnnSetTensor4dDescriptor(p, format, type, k, c, h, w);
}
EXPORT int cudnnSetConvolution2dDescriptor(void* p, int pad_h, int pad_w, int u, int v, int dh,
                                           int dw, int mode, int type) {
  struct desc* d = p;
  if (dh != 1 || dw != 1 || mode != 1 || type != 0) return 3000;
  d->pad_h = pad_h, d->pad_w = pad_w, d->u = u, d->v = v;
  return 0;
}
EXPORT int cudnnGetConvolution2dForwardOutputDim(void* conv, void* x, void* w, int* n, int* c,
                                                 int* h, int* wd) {
  struct desc *cd = conv, *xd = x, *fd = w;
  *n = xd->n;
  *c = fd->n;
  *h = (xd->h + 2 * cd->pad_h - fd->h) / cd->u + 1;
  *wd = (xd->w + 2 * cd->pad_w - fd->w) / cd->v + 1;
  return 0;
}
EXPORT int cudnnGetConvolutionForwardWorkspaceSize(void* handle, void* x, void* w, void* conv,
                                                   void* y, int algo, size_t* size) {
  (void)handle, (void)x, (void)w, (void)conv, (void)y, (void)algo;
  *size = 0;
  return 0;
}
EXPORT int cudnnConvolutionForward(void* handle, const void* alpha, void* xdp, const void* x,
                                   void* wdp, const void* w, void* conv, int algo, void* ws,
                                   size_t ws_size, const void* beta, void* ydp, void* y) {
  (void)handle, (void)conv, (void)algo, (void)ws, (void)ws_size;
  struct desc *xd = xdp, *wd = wdp, *yd = ydp;
  const float *xf = x, *wf = w;
  float* yf = y;
  float a = *(const float*)alpha, b = *(const float*)beta;
  for (int k = 0; k < yd->c; ++k)
    for (int i = 0; i < yd->h; ++i)
      for (int j = 0; j < yd->w; ++j) {
        float sum = 0;
        for (int c = 0; c < xd->c; ++c)
          for (int p = 0; p < wd->h; ++p)
            for (int q = 0; q < wd->w; ++q)
              sum += xf[(c * xd->h + i + p) * xd->w + j + q] *
                     wf[((k * wd->c + c) * wd->h + p) * wd->w + q];
        float* out = &yf[(k * yd->h + i) * yd->w + j];
        *out = a * sum + b * *out;
      }
  return 0;
}
#endif
#endif

#ifdef FAKE_CUDART_GPU
/* The CUDA runtime of the pretend GPU: device memory is host memory. */
EXPORT int cudaMalloc(void** p, size_t n) {
  return (*p = malloc(n)) ? 0 : 2;
}
EXPORT int cudaFree(void* p) {
  free(p);
  return 0;
}
EXPORT int cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
  (void)kind;
  memcpy(dst, src, n);
  return 0;
}
EXPORT int cudaDeviceSynchronize(void) {
  return 0;
}
EXPORT const char* cudaGetErrorName(int e) {
  return e == 0 ? "cudaSuccess" : "cudaErrorMemoryAllocation";
}
#endif
