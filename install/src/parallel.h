#pragma once
// Runs `fn(i)` for i in [0, n) on up to `threads` threads (this one included); the install
// module's one pool (the sync's downloads and stat checks, a wheel's links).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace gpulock::install::detail {

template <typename Fn>
void parallel_for(std::size_t n, std::size_t threads, Fn fn) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++)
      fn(i);
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(threads, n); ++t)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
}

}  // namespace gpulock::install::detail
