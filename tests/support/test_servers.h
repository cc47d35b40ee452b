// Test support: the loopback servers that tests/support/servers.py starts on the fixture index.
// Header-only, standard library only (no gpulock, no Catch2), so any module's tests can use it.
//
//   const auto& s = gpulock::test::shared_servers();   // ctest fixture `servers`
//   s.at("PYPI_URL")  -> "http://127.0.0.1:PORT/simple/"
//
// A missing or unreadable servers.env throws std::runtime_error: the test FAILS (never skips).
// Register the tests of a Catch2 binary with the fixture in CMake:
//   gpulock_tests_use_servers(<target>)        (defined in fixtures/CMakeLists.txt)
// Keys of servers.env: see fixtures/README.md ("Test servers").
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"

namespace gpulock::test {

/// The KEY=VALUE lines of a servers.env file.
struct ServersEnv {
  std::filesystem::path file;
  std::map<std::string, std::string> values;

  /// The value of `key`; throws std::runtime_error naming the file when the key is absent.
  const std::string& at(const std::string& key) const {
    auto it = values.find(key);
    if (it == values.end()) {
      throw std::runtime_error("test servers: no key " + key + " in " + file.string());
    }
    return it->second;
  }
  /// The value of `key`, or `fallback` when absent.
  std::string get(const std::string& key, const std::string& fallback = {}) const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
  std::string http_url() const { return at("HTTP_URL"); }
  std::string https_url() const { return at("HTTPS_URL"); }
  std::string pypi_url() const { return at("PYPI_URL"); }
  std::string torch_index_base() const { return at("TORCH_INDEX_BASE"); }
  std::string fault_url() const { return at("FAULT_URL"); }
  std::string ca_file() const { return at("CA_FILE"); }
  std::filesystem::path access_log() const { return at("ACCESS_LOG"); }
  std::filesystem::path index_root() const { return at("INDEX_ROOT"); }
  std::filesystem::path state_dir() const { return at("STATE_DIR"); }
};

/// Reads a servers.env file. Throws std::runtime_error when it is missing or empty.
inline ServersEnv read_servers_env(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    throw std::runtime_error(
        "test servers: " + file.string() +
        " is missing: the loopback servers are not running. Run the tests through ctest (the "
        "`servers` fixture starts them: ctest -R <test> pulls in servers_start), or start them "
        "by hand with tests/support/servers.py start (fixtures/README.md)");
  }
  ServersEnv env;
  env.file = file;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    env.values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  if (env.values.empty()) throw std::runtime_error("test servers: " + file.string() + " is empty");
  return env;
}

/// $GPULOCK_TEST_SERVERS_ENV if set, else <build dir>/fixtures/servers.env.
inline std::filesystem::path shared_servers_env_path() {
  if (const char* p = std::getenv("GPULOCK_TEST_SERVERS_ENV"); p != nullptr && *p != '\0') {
    return p;
  }
#ifdef GPULOCK_BINARY_DIR
  return std::filesystem::path(GPULOCK_BINARY_DIR) / "fixtures" / "servers.env";
#else
  throw std::runtime_error(
      "test servers: set GPULOCK_TEST_SERVERS_ENV (GPULOCK_BINARY_DIR is not defined)");
#endif
}

/// The servers shared by every test (ctest fixture `servers`), read once.
inline const ServersEnv& shared_servers() {
  static const ServersEnv env = read_servers_env(shared_servers_env_path());
  return env;
}

/// One request of nginx's access log (tab-separated, one line per request).
struct AccessLogEntry {
  double time = 0;
  std::string scheme;  ///< http | https
  std::string method;
  std::string uri;  ///< as requested (percent-encoded, with query)
  int status = 0;
  long long bytes = 0;  ///< body bytes sent
  std::string range, accept, if_none_match, if_modified_since, accept_encoding, protocol,
      user_agent;               ///< "-" when the header was absent
  std::string connection;       ///< nginx's connection serial number (same value: same connection)
  int connection_requests = 0;  ///< requests made on that connection so far, this one included
  bool conditional() const { return if_none_match != "-" || if_modified_since != "-"; }
};

/// Parses an access log written with the `fixture` log format of servers.py.
inline std::vector<AccessLogEntry> read_access_log(const std::filesystem::path& log) {
  std::vector<AccessLogEntry> out;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::size_t start = 0;
    while (true) {
      auto tab = line.find('\t', start);
      f.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    if (f.size() < 13) continue;
    AccessLogEntry e;
    e.time = std::strtod(f[0].c_str(), nullptr);
    e.scheme = f[1];
    e.method = f[2];
    e.uri = f[3];
    e.status = std::atoi(f[4].c_str());
    e.bytes = std::atoll(f[5].c_str());
    e.range = f[6];
    e.accept = f[7];
    e.if_none_match = f[8];
    e.if_modified_since = f[9];
    e.accept_encoding = f[10];
    e.protocol = f[11];
    e.user_agent = f[12];
    if (f.size() >= 15) {
      e.connection = f[13];
      e.connection_requests = std::atoi(f[14].c_str());
    }
    out.push_back(std::move(e));
  }
  return out;
}

/// Counts the requests logged after it was created (nginx writes each line unbuffered).
class AccessLogCursor {
 public:
  explicit AccessLogCursor(std::filesystem::path log)
      : log_(std::move(log)), seen_(read_access_log(log_).size()) {}
  /// Requests logged since construction (or since the last call to mark()).
  std::vector<AccessLogEntry> entries() const {
    auto all = read_access_log(log_);
    if (all.size() <= seen_) return {};
    return {all.begin() + static_cast<std::ptrdiff_t>(seen_), all.end()};
  }
  std::size_t count() const { return entries().size(); }
  void mark() { seen_ = read_access_log(log_).size(); }

 private:
  std::filesystem::path log_;
  std::size_t seen_;
};

/// The source tree (for tests/support/servers.py and fixtures/generate.py).
inline std::filesystem::path source_dir() {
  if (const char* p = std::getenv("GPULOCK_SOURCE_DIR"); p != nullptr && *p != '\0') return p;
#ifdef GPULOCK_SOURCE_DIR
  return GPULOCK_SOURCE_DIR;
#else
  throw std::runtime_error("test servers: GPULOCK_SOURCE_DIR is not defined");
#endif
}

struct PrivateServerOptions {
  std::filesystem::path root;  ///< tree to serve; empty = the shared servers' INDEX_ROOT
  bool copy = true;            ///< serve a hard-linked copy (safe to regenerate/mutate)
  int page_max_age = 600;      ///< Cache-Control max-age of pages
  bool tls = false;
  bool fault = false;
};

/// A private nginx (and optionally TLS and the fault server) for one test: its own port,
/// access log and (by default) its own copy of the tree. Stopped and removed on destruction.
class PrivateServers {
 public:
  explicit PrivateServers(PrivateServerOptions opts = {}) {
    std::random_device rd;
    state_ = std::filesystem::temp_directory_path() /
             ("gpulock-servers-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(state_);
    auto root = opts.root.empty() ? shared_servers().index_root() : opts.root;
    std::string cmd =
        "python3 " + shell_quote((source_dir() / "tests/support/servers.py").string()) +
        " start -q --root " + shell_quote(root.string()) + " --state " +
        shell_quote(state_.string()) + " --page-max-age " + std::to_string(opts.page_max_age);
    if (opts.copy) cmd += " --copy";
    if (!opts.tls) cmd += " --no-tls";
    if (!opts.fault) cmd += " --no-fault";
    run(cmd, "start");
    env_ = read_servers_env(state_ / "servers.env");
  }
  PrivateServers(const PrivateServers&) = delete;
  PrivateServers& operator=(const PrivateServers&) = delete;
  ~PrivateServers() {
    std::string cmd = "python3 " +
                      shell_quote((source_dir() / "tests/support/servers.py").string()) +
                      " stop --state " + shell_quote(state_.string()) + " >/dev/null 2>&1";
    (void)std::system(cmd.c_str());
    std::error_code ec;
    std::filesystem::remove_all(state_, ec);
  }

  const ServersEnv& env() const { return env_; }
  const std::filesystem::path& state_dir() const { return state_; }
  std::filesystem::path index_root() const { return env_.index_root(); }
  std::filesystem::path access_log() const { return env_.access_log(); }

  /// Regenerates the served tree (a copy) with the same inputs as the build plus `overlay_json`
  /// (fixtures/README.md, "Overlays": remove / yank / unyank / rehash / releases).
  void regenerate(const std::string& overlay_json) {
    auto overlay = state_ / "overlay.json";
    {
      std::ofstream out(overlay);
      out << overlay_json;
    }
    run("python3 " + shell_quote((source_dir() / "tests/support/servers.py").string()) +
            " regenerate --state " + shell_quote(state_.string()) + " --overlay " +
            shell_quote(overlay.string()),
        "regenerate");
  }

 private:
  void run(const std::string& cmd, const char* what) {
    const RunResult r = run_shell(cmd);
    if (r.status != 0) {
      throw std::runtime_error(std::string("test servers: ") + what + " failed (" + cmd + "):\n" +
                               r.out + r.err);
    }
  }

  std::filesystem::path state_;
  ServersEnv env_;
};

}  // namespace gpulock::test
