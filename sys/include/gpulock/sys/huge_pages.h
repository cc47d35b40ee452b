#pragma once
/// @file
/// Transparent huge pages for gpulock's memory. A block of memory costs one page fault per
/// 4 KiB the first time it is written; on a virtual machine with shadow page tables a fault
/// costs about 12 us, so a cold resolve of one 41 MB index page spent more time faulting in fresh
/// memory than parsing it (37,000 faults; bench/run's linearity and scale sections). With 2 MiB
/// pages that is one fault per 2 MiB. All of this is advice: where the kernel has no transparent
/// huge pages nothing changes, and nothing here can fail.

#include <cstddef>

namespace gpulock::sys {

/// Blocks smaller than this are left alone (they hold at most one whole aligned 2 MiB page).
inline constexpr std::size_t kHugePageAdviceMin = std::size_t{4} << 20;

/// Advises the kernel to back the whole 2 MiB-aligned pages inside [p, p + n) with huge pages
/// (Linux madvise MADV_HUGEPAGE). Returns the number of bytes advised: 0 when n is below
/// kHugePageAdviceMin, on systems without madvise, or when the kernel refuses (errors are
/// ignored). Call it before the block is written: a 2 MiB page already partly written stays in
/// 4 KiB pages.
std::size_t advise_huge_pages(void* p, std::size_t n) noexcept;

/// The process's malloc heap on huge pages: one arena (threads share the main heap instead of
/// each faulting in its own), the heap grown and kept in 64 MiB steps, blocks up to 32 MiB
/// served from it (reused after a free, not mapped anew), and each growth advised with
/// advise_huge_pages (note_heap_growth). For executables, once, before any thread starts; the
/// cost is memory kept after it is freed, which a short-lived command does not miss.
void use_huge_page_heap() noexcept;

/// Hands the whole pages of the heap's free memory back to the system (glibc malloc_trim):
/// memory freed in bulk stays resident otherwise, and what is allocated next lands in fresh
/// pages beside it. For after a huge index page's files were filtered down to a target's; a few
/// milliseconds; nothing elsewhere.
void return_free_memory() noexcept;

/// Advises the part of the heap grown since the last call (nothing when use_huge_page_heap was
/// not called). Cheap enough for every allocation: one sbrk(0) and a comparison.
void note_heap_growth() noexcept;

}  // namespace gpulock::sys
