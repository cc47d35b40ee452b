/* Shared by the fake NVML and libcuda: GPU lists and failure modes from environment variables.
 *
 * FAKE_GPUS (or FAKE_NVML_GPUS / FAKE_CUDA_GPUS for one library only):
 *   "name|major.minor|memory MiB|uuid;name|..."   e.g. "NVIDIA H100 80GB HBM3|9.0|81559|GPU-1111"
 * FAKE_<LIB>_HANG_IN=function   sleep forever when that function is called
 * FAKE_<LIB>_CRASH_IN=function  raise SIGSEGV when that function is called
 */
#ifndef GPULOCK_FAKE_GPUS_H
#define GPULOCK_FAKE_GPUS_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_MAX_GPUS 16

struct fake_gpu {
  char name[96];
  int major;
  int minor;
  unsigned long long memory_mib;
  char uuid[96];
};

static const char* fake_env(const char* lib, const char* what) {
  char key[64];
  const char* v;
  snprintf(key, sizeof key, "FAKE_%s_%s", lib, what);
  v = getenv(key);
  return (v != NULL && *v != '\0') ? v : NULL;
}

/* Hang or crash if asked to in `function`. */
static void fake_fault(const char* lib, const char* function) {
  const char* hang = fake_env(lib, "HANG_IN");
  const char* crash = fake_env(lib, "CRASH_IN");
  if (hang != NULL && strcmp(hang, function) == 0) {
    for (;;)
      pause();
  }
  if (crash != NULL && strcmp(crash, function) == 0) raise(SIGSEGV);
}

static void copy_field(char* out, size_t size, const char* begin, const char* end) {
  size_t n = (size_t)(end - begin);
  if (n >= size) n = size - 1;
  memcpy(out, begin, n);
  out[n] = '\0';
}

/* Parses the GPU list of `lib` into `gpus`; returns the count. */
static int fake_gpus(const char* lib, struct fake_gpu* gpus) {
  const char* spec = fake_env(lib, "GPUS");
  int count = 0;
  if (spec == NULL) spec = getenv("FAKE_GPUS");
  if (spec == NULL || *spec == '\0') return 0;
  while (*spec != '\0' && count < FAKE_MAX_GPUS) {
    const char* end = strchr(spec, ';');
    const char* fields[4] = {0};
    const char* p = spec;
    int f = 0;
    char cc[16];
    char mem[32];
    struct fake_gpu* g = &gpus[count];
    if (end == NULL) end = spec + strlen(spec);
    memset(g, 0, sizeof *g);
    fields[f++] = p;
    while (p < end && f < 4) {
      if (*p == '|') fields[f++] = p + 1;
      ++p;
    }
    copy_field(g->name, sizeof g->name, fields[0], f > 1 ? fields[1] - 1 : end);
    if (f > 1) {
      copy_field(cc, sizeof cc, fields[1], f > 2 ? fields[2] - 1 : end);
      if (sscanf(cc, "%d.%d", &g->major, &g->minor) != 2) g->major = g->minor = 0;
    }
    if (f > 2) {
      copy_field(mem, sizeof mem, fields[2], f > 3 ? fields[3] - 1 : end);
      g->memory_mib = strtoull(mem, NULL, 10);
    }
    if (f > 3) copy_field(g->uuid, sizeof g->uuid, fields[3], end);
    ++count;
    spec = *end == ';' ? end + 1 : end;
  }
  return count;
}

static void fake_copy_string(char* out, unsigned length, const char* text) {
  if (length == 0) return;
  strncpy(out, text, length - 1);
  out[length - 1] = '\0';
}

#endif
