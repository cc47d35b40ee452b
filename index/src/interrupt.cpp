#include "gpulock/index/interrupt.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "interrupt_registry.h"

namespace gpulock::index {
namespace {

struct Clients {
  std::mutex mu;
  std::unordered_map<const void*, std::function<void()>> cancel;
};

Clients& clients() {
  static Clients c;
  return c;
}

std::atomic<bool> g_interrupted{false};

}  // namespace

void interrupt_all_clients() {
  g_interrupted = true;
  Clients& c = clients();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& [key, cancel] : c.cancel)
    cancel();
}

bool interrupted() noexcept {
  return g_interrupted.load();
}

namespace detail {

void register_client(const void* key, std::function<void()> cancel) {
  Clients& c = clients();
  std::lock_guard<std::mutex> lock(c.mu);
  if (g_interrupted) cancel();
  c.cancel[key] = std::move(cancel);
}

void unregister_client(const void* key) {
  Clients& c = clients();
  std::lock_guard<std::mutex> lock(c.mu);
  c.cancel.erase(key);
}

}  // namespace detail
}  // namespace gpulock::index
