// Stand-ins for measuring process start (bench/run, section "profile"): this program does
// nothing; built twice, once with libc and libstdc++ only (gpulock_bench_empty) and once with
// every shared library gpulock links, kept with --no-as-needed (gpulock_bench_linked). The
// difference between their run times is the cost of loading and relocating those libraries.
int main() {
  return 0;
}
