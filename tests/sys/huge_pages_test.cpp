// advise_huge_pages: which part of a block is advised, and that the kernel records it.
// (The heap policy and the executable's operator new: tests/cli/huge_page_heap_test.cpp.)
#include "gpulock/sys/huge_pages.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/mman.h>

#include "../support/smaps.h"

using gpulock::sys::advise_huge_pages;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

struct Mapping {
  explicit Mapping(std::size_t n) : size(n) {
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~Mapping() {
    if (base != nullptr) ::munmap(base, size);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  // The first 2 MiB boundary in the mapping.
  char* aligned() const {
    auto a = reinterpret_cast<std::uintptr_t>(base);
    return reinterpret_cast<char*>((a + 2 * kMiB - 1) & ~(2 * kMiB - 1));
  }
  char* base = nullptr;
  std::size_t size = 0;
};

}  // namespace

TEST_CASE("advise_huge_pages leaves small blocks alone", "[sys][huge_pages]") {
  Mapping m(16 * kMiB);
  REQUIRE(m.base != nullptr);
  CHECK(advise_huge_pages(nullptr, 8 * kMiB) == 0);
  CHECK(advise_huge_pages(m.aligned(), gpulock::sys::kHugePageAdviceMin - 1) == 0);
  CHECK_FALSE(gpulock::test::has_vm_flag(m.aligned(), "hg"));
}

TEST_CASE("advise_huge_pages advises the whole 2 MiB pages inside a block", "[sys][huge_pages]") {
  Mapping m(16 * kMiB);
  REQUIRE(m.base != nullptr);
  // From 1 byte past a boundary to 1 byte short of the one 8 MiB later: the 4 MiB of whole
  // pages between (2 to 6 MiB).
  char* begin = m.aligned() + 1;
  std::size_t n = 8 * kMiB - 2;
  CHECK(advise_huge_pages(begin, n) == 4 * kMiB);
  CHECK(gpulock::test::has_vm_flag(m.aligned() + 2 * kMiB, "hg"));
  CHECK(gpulock::test::has_vm_flag(m.aligned() + 6 * kMiB - 1, "hg"));
  // The partial pages at both ends are not advised: they may be written already.
  CHECK_FALSE(gpulock::test::has_vm_flag(m.aligned(), "hg"));
  CHECK_FALSE(gpulock::test::has_vm_flag(m.aligned() + 6 * kMiB, "hg"));
}

TEST_CASE("advise_huge_pages refuses a range that wraps the address space", "[sys][huge_pages]") {
  CHECK(advise_huge_pages(reinterpret_cast<void*>(UINTPTR_MAX - kMiB), 8 * kMiB) == 0);
}

namespace {
// This process's anonymous resident memory (RssAnon), in KiB.
long rss_anon_kib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "RssAnon:", 8) == 0) kib = std::strtol(line + 8, nullptr, 10);
  }
  std::fclose(f);
  return kib;
}
}  // namespace

TEST_CASE("return_free_memory hands freed heap memory back", "[sys][huge_pages]") {
  // 64 MiB in 2 KiB blocks (each from the heap, written), all freed but the last (which keeps
  // the heap's top, so free() alone cannot shrink it).
  std::vector<char*> blocks;
  for (std::size_t i = 0; i < 32 * 1024; ++i) {
    auto* p = static_cast<char*>(std::malloc(2048));
    REQUIRE(p != nullptr);
    std::memset(p, 1, 2048);
    blocks.push_back(p);
  }
  for (std::size_t i = 0; i + 1 < blocks.size(); ++i)
    std::free(blocks[i]);
  const long before = rss_anon_kib();
  gpulock::sys::return_free_memory();
  const long after = rss_anon_kib();
  std::free(blocks.back());
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator is not glibc's: malloc_trim does not reach its memory (and it
  // keeps freed blocks in quarantine). The call must still be harmless.
  CHECK(before >= 0);
  CHECK(after >= 0);
#else
  INFO("RssAnon " << before << " KiB before, " << after << " KiB after");
  CHECK(before - after >= 32 * 1024);
#endif
}
