/* A fake libnvidia-ml.so.1 for gpulock's machine-detection tests. Its answers come from
 * environment variables (see fake_gpus.h for the GPU list and the failure modes):
 *   FAKE_NVML_INIT_RC      nvmlInit_v2's return code (18 = LIB_RM_VERSION_MISMATCH, 9 =
 * DRIVER_NOT_LOADED) FAKE_NVML_DRIVER       nvmlSystemGetDriverVersion ("550.54.14") FAKE_NVML_CUDA
 * nvmlSystemGetCudaDriverVersion_v2 (12040); unset = LIBRARY_NOT_FOUND FAKE_NVML_COUNT_RC
 * nvmlDeviceGetCount_v2's return code Only the functions gpulock calls exist. */
#include <stdio.h>

#include "fake_gpus.h"

typedef int nvmlReturn_t;
typedef struct fake_gpu* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

static struct fake_gpu g_gpus[FAKE_MAX_GPUS];
static int g_count = -1;
static int g_initialized = 0;

#define FAULT(fn) fake_fault("NVML", fn)

static int env_int(const char* what, int fallback) {
  const char* v = fake_env("NVML", what);
  return v != NULL ? atoi(v) : fallback;
}

nvmlReturn_t nvmlInit_v2(void) {
  int rc;
  FAULT("nvmlInit_v2");
  rc = env_int("INIT_RC", 0);
  if (rc != 0) return rc;
  g_count = fake_gpus("NVML", g_gpus);
  g_initialized = 1;
  return 0;
}

nvmlReturn_t nvmlShutdown(void) {
  FAULT("nvmlShutdown");
  g_initialized = 0;
  return 0;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  const char* v = fake_env("NVML", "DRIVER");
  FAULT("nvmlSystemGetDriverVersion");
  if (!g_initialized) return 1;
  fake_copy_string(version, length, v != NULL ? v : "550.54.14");
  return 0;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  const char* v = fake_env("NVML", "CUDA");
  FAULT("nvmlSystemGetCudaDriverVersion_v2");
  if (v == NULL) return 12; /* NVML_ERROR_LIBRARY_NOT_FOUND: no libcuda */
  *version = atoi(v);
  return 0;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  int rc;
  FAULT("nvmlDeviceGetCount_v2");
  if (!g_initialized) return 1;
  rc = env_int("COUNT_RC", 0);
  if (rc != 0) return rc;
  *count = (unsigned)g_count;
  return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  FAULT("nvmlDeviceGetHandleByIndex_v2");
  if (!g_initialized) return 1;
  if ((int)index >= g_count) return 2;
  *device = &g_gpus[index];
  return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  FAULT("nvmlDeviceGetName");
  fake_copy_string(name, length, device->name);
  return 0;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  FAULT("nvmlDeviceGetUUID");
  if (device->uuid[0] == '\0') return 3; /* NOT_SUPPORTED */
  fake_copy_string(uuid, length, device->uuid);
  return 0;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  FAULT("nvmlDeviceGetCudaComputeCapability");
  if (device->major == 0) return 3; /* NOT_SUPPORTED */
  *major = device->major;
  *minor = device->minor;
  return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  FAULT("nvmlDeviceGetMemoryInfo");
  memory->total = device->memory_mib * 1024ULL * 1024ULL;
  memory->free = memory->total;
  memory->used = 0;
  return 0;
}
