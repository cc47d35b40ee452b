// advise_huge_pages: which part of a block is advised, and that the kernel records it.
// (The heap policy and the executable's operator new: tests/cli/huge_page_heap_test.cpp.)
#include "gpulock/sys/huge_pages.h"

#include <cstdint>

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
