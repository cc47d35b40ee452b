/* An LD_PRELOAD shim for tests: counts fsync and fdatasync calls, appending one line per call
   ("fsync <path of the descriptor>") to the file named by GPULOCK_TEST_FSYNC_LOG, then calls the
   real function. Used to show which writes gpulock makes durable (tests/resolve/durable_test.cpp).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void note(const char* what, int fd) {
  const char* log = getenv("GPULOCK_TEST_FSYNC_LOG");
  if (log == NULL || *log == '\0') return;
  char link[64];
  char target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  target[n < 0 ? 0 : n] = '\0';
  int out = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (out < 0) return;
  dprintf(out, "%s %s\n", what, target);
  close(out);
}

int fsync(int fd) {
  static int (*real)(int) = NULL;
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  note("fsync", fd);
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int) = NULL;
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  note("fdatasync", fd);
  return real(fd);
}
