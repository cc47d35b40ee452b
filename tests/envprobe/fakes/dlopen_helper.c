/* The oracle for the loader-search tests: loads a libcudnn.so.N by its path (argv[1]), calls its
 * cudnnGraphVersionCheck (the fake libcudnn dlopens libcudnn_graph.so.N by bare soname from
 * there, as the real one does), and prints the file the loader really mapped for
 * libcudnn_graph, from /proc/self/maps ("none" when it could not load it). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (shim == NULL) {
    printf("error %s\n", dlerror());
    return 1;
  }
  int (*check)(void) = (int (*)(void))dlsym(shim, "cudnnGraphVersionCheck");
  if (check == NULL) return 1;
  int status = check();
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[4096];
  const char* found = "none";
  static char path[4096];
  while (maps != NULL && fgets(line, sizeof line, maps) != NULL) {
    char* slash = strchr(line, '/');
    if (slash == NULL || strstr(slash, "libcudnn_graph") == NULL) continue;
    snprintf(path, sizeof path, "%s", slash);
    path[strcspn(path, "\n")] = '\0';
    found = path;
    break;
  }
  printf("%d %s\n", status, found);
  return 0;
}
