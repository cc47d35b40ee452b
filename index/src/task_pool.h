#pragma once
// Background work for prefetches: a pool whose threads are started on demand (a warm run that
// never prefetches over the network starts none), and Op<T>, a memoized operation that the
// first caller to need it runs, whether that is a pool thread or a caller of fetch_*(): a fetch
// that joins a prefetch still queued runs it itself instead of waiting for a free thread.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "gpulock/core/error.h"

namespace gpulock::index::detail {

template <class T>
class Op {
 public:
  explicit Op(std::function<core::Result<T>()> work) : work_(std::move(work)) {}

  /// Runs the work if nobody has started it; waits for it otherwise.
  core::Result<T> get() {
    if (claim()) run_claimed();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return result_.has_value(); });
    return *result_;
  }

  /// For pool threads: runs the work unless a caller already took it.
  void run_if_unclaimed() {
    if (claim()) run_claimed();
  }

  /// Completes the op with a result computed elsewhere (a cache hit in prefetch).
  void finish(core::Result<T> result) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      state_ = State::Done;
      result_ = std::move(result);
      work_ = nullptr;
    }
    cv_.notify_all();
  }

  /// Whether the result is there (get() would not wait).
  bool done() {
    std::lock_guard<std::mutex> lock(mu_);
    return state_ == State::Done;
  }

  /// Whether another thread is running the work (get() would wait for it).
  bool running() {
    std::lock_guard<std::mutex> lock(mu_);
    return state_ == State::Running;
  }

  bool claim() {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::Queued) return false;
    state_ = State::Running;
    return true;
  }

  /// Runs the work of an op this caller claimed (claim() returned true), on any thread.
  void run_claimed() {
    core::Result<T> r = work_();
    finish(std::move(r));
  }

 private:
  enum class State { Queued, Running, Done };

  std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::Queued;
  std::function<core::Result<T>()> work_;
  std::optional<core::Result<T>> result_;
};

class TaskPool {
 public:
  /// `on_done` (may be empty) runs on the pool thread after each task.
  explicit TaskPool(unsigned max_threads, std::function<void()> on_done = {})
      : max_threads_(max_threads == 0 ? 1 : max_threads), on_done_(std::move(on_done)) {}
  ~TaskPool() { stop(); }
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  /// Queues a task; false (and the task dropped) once the pool is stopping. An urgent task goes
  /// before the queued ones: a fetch somebody waits for, ahead of speculative prefetches.
  bool submit(std::function<void()> task, bool urgent = false) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    if (urgent) {
      queue_.push_front(std::move(task));
    } else {
      queue_.push_back(std::move(task));
    }
    // An idle thread may already be about to take an earlier task: a new one is needed whenever
    // more tasks wait than threads are idle, or queued prefetches would run one after another.
    if (queue_.size() > idle_ && threads_.size() < max_threads_) {
      threads_.emplace_back([this] { work(); });
    } else {
      cv_.notify_one();
    }
    return true;
  }

  /// Drops queued tasks and joins the threads (running tasks finish first).
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      queue_.clear();
    }
    cv_.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      ++idle_;
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      --idle_;
      if (stopping_) return;
      auto task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      task();
      if (on_done_) on_done_();
      lock.lock();
    }
  }

  unsigned max_threads_;
  std::function<void()> on_done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  unsigned idle_ = 0;
  bool stopping_ = false;
};

}  // namespace gpulock::index::detail
