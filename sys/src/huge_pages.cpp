#include "gpulock/sys/huge_pages.h"

#include <atomic>
#include <cstdint>

#if defined(__linux__)
#include <malloc.h>
#include <unistd.h>

#include <sys/mman.h>
#endif

namespace gpulock::sys {
namespace {

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;

// The heap's end when note_heap_growth last looked; 0 until use_huge_page_heap.
std::atomic<std::uintptr_t> heap_end{0};

std::size_t advise_range(std::uintptr_t begin, std::uintptr_t end) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  std::uintptr_t last = end & ~(kHuge - 1);
  if (last <= first) return 0;
  std::size_t length = last - first;
  if (::madvise(reinterpret_cast<void*>(first), length, MADV_HUGEPAGE) != 0) return 0;
  return length;
#else
  (void)begin;
  (void)end;
  return 0;
#endif
}

}  // namespace

std::size_t advise_huge_pages(void* p, std::size_t n) noexcept {
  if (p == nullptr || n < kHugePageAdviceMin) return 0;
  auto begin = reinterpret_cast<std::uintptr_t>(p);
  if (begin > UINTPTR_MAX - n) return 0;
  return advise_range(begin, begin + n);
}

void use_huge_page_heap() noexcept {
#if defined(__linux__) && defined(M_ARENA_MAX)
  constexpr int kStep = 64 << 20;
  ::mallopt(M_ARENA_MAX, 1);
  ::mallopt(M_TOP_PAD, kStep);
  ::mallopt(M_TRIM_THRESHOLD, 2 * kStep);
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  heap_end.store(reinterpret_cast<std::uintptr_t>(::sbrk(0)), std::memory_order_relaxed);
#endif
}

void return_free_memory() noexcept {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

void note_heap_growth() noexcept {
#if defined(__linux__)
  std::uintptr_t seen = heap_end.load(std::memory_order_relaxed);
  if (seen == 0) return;
  auto end = reinterpret_cast<std::uintptr_t>(::sbrk(0));
  if (end == seen || !heap_end.compare_exchange_strong(seen, end, std::memory_order_relaxed))
    return;
  // A heap trimmed and grown again is a new mapping, so the regrown part is advised again.
  if (end > seen) advise_range(seen, end);
#endif
}

}  // namespace gpulock::sys
