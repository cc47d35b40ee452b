// The executable's operator new: the library's, plus huge-page advice for large blocks
// (sys/huge_pages.h). A cold resolve of a page with 100,000 files writes about 140 MB of fresh
// memory (the body, simdjson's buffers, the records, the cache entry); on 4 KiB pages that was
// 37,000 faults and half the run's CPU time. Blocks come from malloc as before, so the library's
// operator delete (free) releases them; only the executable replaces these, not the libraries
// the tests link.
#include <cstdlib>
#include <new>

#include "gpulock/sys/huge_pages.h"

namespace {

void* allocate(std::size_t n) noexcept {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) return p;
  gpulock::sys::note_heap_growth();
  if (n >= gpulock::sys::kHugePageAdviceMin) gpulock::sys::advise_huge_pages(p, n);
  return p;
}

void* allocate_or_throw(std::size_t n) {
  for (;;) {
    if (void* p = allocate(n)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

void* operator new(std::size_t n) {
  return allocate_or_throw(n);
}
void* operator new[](std::size_t n) {
  return allocate_or_throw(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
