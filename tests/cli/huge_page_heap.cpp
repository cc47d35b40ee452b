// The executable's allocation policy (cli/allocation.cpp with sys::use_huge_page_heap), in a
// binary of its own because it changes the process's malloc: small blocks come from a heap whose
// growth is advised for huge pages, from any thread; a large block is advised on its own. Before
// it, no mapping the allocations land in had the kernel's "hg" flag.
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "gpulock/sys/huge_pages.h"

#include "../support/smaps.h"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// How many of the blocks (a sample of 100, spread evenly) lie in mappings advised for huge pages.
int advised_of_100(const std::vector<std::unique_ptr<char[]>>& blocks) {
  int advised = 0;
  for (std::size_t i = 0; i < 100; ++i) {
    if (gpulock::test::has_vm_flag(blocks[i * blocks.size() / 100].get(), "hg")) ++advised;
  }
  return advised;
}

std::vector<std::unique_ptr<char[]>> small_blocks(std::size_t total, std::size_t each) {
  std::vector<std::unique_ptr<char[]>> blocks;
  blocks.reserve(total / each);
  for (std::size_t i = 0; i < total / each; ++i)
    blocks.push_back(std::make_unique<char[]>(each));
  return blocks;
}

}  // namespace

TEST_CASE("the executable's heap is advised for huge pages", "[cli][huge_pages]") {
  gpulock::sys::use_huge_page_heap();
  SECTION("small blocks, on this thread") {
    auto blocks = small_blocks(256 * kMiB, 512);
    // The first 2 MiB of each 64 MiB growth may be written before it is advised.
    CHECK(advised_of_100(blocks) >= 90);
  }
  SECTION("small blocks, on another thread (one arena for all)") {
    std::vector<std::unique_ptr<char[]>> blocks;
    std::thread([&] { blocks = small_blocks(256 * kMiB, 512); }).join();
    CHECK(advised_of_100(blocks) >= 90);
  }
  SECTION("a block over 32 MiB (mapped apart from the heap)") {
    auto big = std::make_unique<char[]>(48 * kMiB);
    CHECK(gpulock::test::has_vm_flag(big.get() + 24 * kMiB, "hg"));
  }
}
