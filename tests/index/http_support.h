#pragma once
// Helpers for the index tests that talk to the loopback servers (tests/support/test_servers.h).

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gpulock/index/client.h"

#include "index_test_support.h"
#include "test_servers.h"

namespace index_test {

inline const gpulock::test::ServersEnv& servers() {
  return gpulock::test::shared_servers();
}

/// A User-Agent unique to this process and call: the shared access log is filtered by it, so
/// tests running in parallel never count each other's requests.
inline std::string unique_agent(const std::string& what) {
  static std::atomic<int> n{0};
  return "gpulock-test/" + what + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

/// Options for a test client: its own cache, a unique User-Agent, quick retries and timeouts.
inline gpulock::index::ClientOptions test_options(const std::string& cache,
                                                  const std::string& agent) {
  gpulock::index::ClientOptions o;
  o.cache_dir = cache;
  o.user_agent = agent;
  o.retry_backoff = std::chrono::milliseconds(10);
  o.low_speed_time = std::chrono::milliseconds(1500);
  o.connect_timeout = std::chrono::milliseconds(5000);
  return o;
}

/// The requests `agent` made, from an nginx access log.
inline std::vector<gpulock::test::AccessLogEntry> requests_by(const std::string& agent,
                                                              const std::filesystem::path& log) {
  std::vector<gpulock::test::AccessLogEntry> out;
  for (auto& e : gpulock::test::read_access_log(log)) {
    if (e.user_agent == agent) out.push_back(std::move(e));
  }
  return out;
}

inline std::vector<gpulock::test::AccessLogEntry> requests_by(const std::string& agent) {
  return requests_by(agent, servers().access_log());
}

/// nginx logs a request after answering it, so a client can return before its line is written:
/// waits (up to 5 s) until `agent` has at least `count` requests in the log, then a little
/// longer for stragglers, and returns them all.
inline std::vector<gpulock::test::AccessLogEntry> settled_requests_by(
    const std::string& agent, std::size_t count, const std::filesystem::path& log) {
  for (int i = 0; i < 100 && requests_by(agent, log).size() < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return requests_by(agent, log);
}

inline std::vector<gpulock::test::AccessLogEntry> settled_requests_by(const std::string& agent,
                                                                      std::size_t count) {
  return settled_requests_by(agent, count, servers().access_log());
}

}  // namespace index_test
