/* A fake libcuda.so.1 for gpulock's machine-detection tests. Its answers come from environment
 * variables (see fake_gpus.h for the GPU list and the failure modes):
 *   FAKE_CUDA_INIT_RC   cuInit's return code (34 = STUB_LIBRARY: then every call returns 34,
 *                       as the toolkit's stub does; 100 = NO_DEVICE; 803 = SYSTEM_DRIVER_MISMATCH)
 *   FAKE_CUDA_VERSION   cuDriverGetVersion (12040)
 * Like the real library, CUDA_VISIBLE_DEVICES="" hides every device (cuInit: NO_DEVICE), and a
 * list of indices keeps only those. */
#include <stdio.h>

#include "fake_gpus.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct {
  unsigned char bytes[16];
} CUuuid;

static struct fake_gpu g_all[FAKE_MAX_GPUS];
static struct fake_gpu* g_visible[FAKE_MAX_GPUS];
static int g_count = 0;
static int g_initialized = 0;

#define FAULT(fn) fake_fault("CUDA", fn)

static int stub(void) {
  const char* v = fake_env("CUDA", "INIT_RC");
  return v != NULL && atoi(v) == 34;
}

CUresult cuInit(unsigned flags) {
  const char* rc = fake_env("CUDA", "INIT_RC");
  const char* visible = getenv("CUDA_VISIBLE_DEVICES");
  int total;
  (void)flags;
  FAULT("cuInit");
  if (rc != NULL && atoi(rc) != 0) return atoi(rc);
  total = fake_gpus("CUDA", g_all);
  g_count = 0;
  if (visible == NULL) {
    for (int i = 0; i < total; ++i)
      g_visible[g_count++] = &g_all[i];
  } else {
    const char* p = visible;
    while (*p != '\0') {
      char* end;
      long i = strtol(p, &end, 10);
      if (end == p) break;
      if (i >= 0 && i < total) g_visible[g_count++] = &g_all[i];
      p = *end == ',' ? end + 1 : end;
    }
  }
  if (g_count == 0) return 100; /* CUDA_ERROR_NO_DEVICE */
  g_initialized = 1;
  return 0;
}

CUresult cuDriverGetVersion(int* version) {
  const char* v = fake_env("CUDA", "VERSION");
  FAULT("cuDriverGetVersion");
  if (stub()) return 34;
  *version = v != NULL ? atoi(v) : 12040;
  return 0;
}

CUresult cuDeviceGetCount(int* count) {
  FAULT("cuDeviceGetCount");
  if (!g_initialized) return 3;
  *count = g_count;
  return 0;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  FAULT("cuDeviceGet");
  if (!g_initialized) return 3;
  if (ordinal < 0 || ordinal >= g_count) return 101;
  *device = ordinal;
  return 0;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  FAULT("cuDeviceGetName");
  fake_copy_string(name, (unsigned)length, g_visible[device]->name);
  return 0;
}

CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  FAULT("cuDeviceGetAttribute");
  if (attribute == 75)
    *value = g_visible[device]->major;
  else if (attribute == 76)
    *value = g_visible[device]->minor;
  else
    return 1;
  return 0;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  FAULT("cuDeviceTotalMem_v2");
  *bytes = (size_t)(g_visible[device]->memory_mib * 1024ULL * 1024ULL);
  return 0;
}

/* The UUID "GPU-xxxxxxxx-..." back to its 16 bytes. */
CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device) {
  const char* text = g_visible[device]->uuid;
  int n = 0;
  FAULT("cuDeviceGetUuid");
  if (strncmp(text, "GPU-", 4) != 0) return 1;
  text += 4;
  while (*text != '\0' && n < 16) {
    unsigned byte;
    if (*text == '-') {
      ++text;
      continue;
    }
    if (sscanf(text, "%2x", &byte) != 1) return 1;
    uuid->bytes[n++] = (unsigned char)byte;
    text += 2;
  }
  return n == 16 ? 0 : 1;
}
