#include "interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "gpulock/index/interrupt.h"

namespace gpulock::cli {
namespace {

int g_pipe[2] = {-1, -1};
std::atomic<bool> g_signalled{false};
std::atomic<bool> g_reported{false};

// Never destroyed: the thread may still wait on them while main()'s exit runs destructors.
struct State {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
};
State& state() {
  static State* s = new State;
  return *s;
}

extern "C" void on_signal(int sig) {
  int saved = errno;
  char c = static_cast<char>(sig);
  [[maybe_unused]] auto n = ::write(g_pipe[1], &c, 1);
  errno = saved;
}

void watch() {
  char c = 0;
  while (::read(g_pipe[0], &c, 1) != 1) {
    if (errno != EINTR) return;
  }
  g_signalled = true;
  index::interrupt_all_clients();
  State& s = state();
  {
    std::unique_lock<std::mutex> lock(s.mu);
    if (s.cv.wait_for(lock, kInterruptGrace, [&] { return s.finished; })) return;
  }
  if (claim_interrupt_report()) {
    static constexpr char kLine[] = "error: interrupted\n";
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, kLine, sizeof kLine - 1);
  }
  index::remove_temporary_files();
  ::_exit(130);
}

}  // namespace

void install_interrupt_handler() {
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) return;
  (void)state();
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  std::thread(&watch).detach();
}

bool interrupted_by_signal() noexcept {
  return g_signalled.load();
}

bool claim_interrupt_report() noexcept {
  return !g_reported.exchange(true);
}

void command_finished() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.finished = true;
  s.cv.notify_all();
}

}  // namespace gpulock::cli
