// A sink's body is relayed (issue 46): the transport's thread only queues a success body's
// bytes, at most 256 KiB at a time (the transfer pauses until they are taken), and the thread
// that called perform() decodes them and calls the sink as they arrive. Against a private nginx:
// an uncoded and a gzip-coded body, a slow sink, a sink that refuses half way, and the decoded
// limit.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "http_support.h"
#include "transport.h"

using namespace gpulock;
using namespace gpulock::index;
using namespace gpulock::index::detail;

namespace {

constexpr std::size_t kMaxInbox = 256 << 10;  // curl_transport.cpp
// One write of libcurl's past the inbox's bound (CURL_MAX_WRITE_SIZE is 16 KiB; an HTTP/2 or
// decoded write stays well under this).
constexpr std::size_t kSlack = 64 << 10;

// 6 MB of text: nginx serves `.html` gzip-coded, `.bin` as it is.
const std::string& body() {
  static const std::string text = [] {
    std::string out;
    for (int i = 0; out.size() < 6'000'000; ++i)
      out += fmt::format("<a href=\"pkg-{}.whl#sha256={:064x}\">pkg-{}.whl</a><br/>\n", i, i, i);
    return out;
  }();
  return text;
}

const std::string& served_root() {
  static const std::string root = [] {
    std::string dir = index_test::scratch_dir("relay-served");
    std::filesystem::create_directories(dir + "/files");
    index_test::write_text(dir + "/manifest.json", "{}\n");
    index_test::write_text(dir + "/files/page.html", body());
    index_test::write_text(dir + "/files/page.bin", body());
    return dir;
  }();
  return root;
}

struct Served {
  gpulock::test::PrivateServers servers{{.root = served_root(), .copy = false, .fault = true}};
  std::string url(const char* name) const { return servers.env().http_url() + "/files/" + name; }
  // The fault server in `mode` (tests/support/fault_server.py), serving the same tree.
  std::string fault_url(const char* mode, const char* name) const {
    return servers.env().fault_url() + "/" + mode + "/files/" + name;
  }
};

Served& served() {
  static Served s;
  return s;
}

std::unique_ptr<Transport> transport() {
  TransportOptions o;
  o.user_agent = index_test::unique_agent("relay");
  auto t = make_transport(o);
  REQUIRE(t);
  return std::move(*t);
}

// What a sink saw: its bytes, its calls' sizes and threads, the head it was shown.
struct Seen {
  std::string bytes;
  std::vector<std::size_t> sizes;
  std::vector<std::thread::id> threads;
  std::string encoding;
  std::thread::id head_thread;
};

HttpRequest sink_request(const std::string& url, Seen& seen, std::chrono::microseconds delay,
                         std::size_t refuse_at = 0) {
  HttpRequest req;
  req.url = url;
  req.on_head = [&seen](const HttpResponse& head) {
    seen.encoding = head.content_encoding;
    seen.head_thread = std::this_thread::get_id();
    return true;
  };
  req.sink = [&seen, delay, refuse_at](const char* data, std::size_t n) {
    seen.bytes.append(data, n);
    seen.sizes.push_back(n);
    seen.threads.push_back(std::this_thread::get_id());
    std::this_thread::sleep_for(delay);  // a sink slower than loopback: the transfer pauses
    return refuse_at == 0 || seen.sizes.size() < refuse_at;
  };
  return req;
}

}  // namespace

TEST_CASE("a sink's body is read on the thread that asked, a bounded amount at a time",
          "[http][relay]") {
  auto t = transport();
  for (const char* name : {"page.bin", "page.html"}) {
    INFO(name);
    Seen seen;
    auto req = sink_request(served().url(name), seen, std::chrono::microseconds(300));
    HttpResponse r = t->perform(req);
    REQUIRE(r.error == TransportError::None);
    CHECK(r.status == 200);
    CHECK(seen.encoding == (std::string(name) == "page.html" ? "gzip" : ""));
    CHECK(seen.bytes == body());
    CHECK(r.body_bytes == body().size());
    CHECK(r.body.empty());
    CHECK(seen.head_thread == std::this_thread::get_id());
    for (const auto& id : seen.threads)
      CHECK(id == std::this_thread::get_id());
    // Without the pause, a slow sink's queue would grow toward the whole body.
    CHECK(*std::max_element(seen.sizes.begin(), seen.sizes.end()) <= kMaxInbox + kSlack);
  }
}

TEST_CASE("a sink that refuses half way ends its transfer, paused or not", "[http][relay]") {
  auto t = transport();
  for (const char* name : {"page.bin", "page.html"}) {
    INFO(name);
    Seen seen;
    // Slow enough that the transfer is paused when the sink says no.
    auto req = sink_request(served().url(name), seen, std::chrono::milliseconds(5), 3);
    auto start = std::chrono::steady_clock::now();
    HttpResponse r = t->perform(req);
    CHECK(r.error == TransportError::Aborted);
    CHECK(seen.sizes.size() == 3);  // nothing more after the refusal
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    // The transport goes on serving.
    HttpRequest plain;
    plain.url = served().url("page.bin");
    HttpResponse again = t->perform(plain);
    CHECK(again.error == TransportError::None);
    CHECK(again.body == body());
  }
}

TEST_CASE("a refusal ends its transfer even when the server then sends nothing", "[http][relay]") {
  // /stall/ sends 64 bytes of the body, then nothing: the transfer is not waited out to the
  // low-speed limit (30 s here) once the sink has said no.
  auto t = transport();
  Seen seen;
  auto req =
      sink_request(served().fault_url("stall", "page.bin"), seen, std::chrono::microseconds(0), 1);
  const auto start = std::chrono::steady_clock::now();
  HttpResponse r = t->perform(req);
  CHECK(r.error == TransportError::Aborted);
  CHECK(seen.sizes.size() == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("the bytes that arrived before a transfer failed still reach its sink", "[http][relay]") {
  // The connection closes after half the body. The sink is slow, so the transfer has failed
  // while its last bytes still wait for it: they are read all the same (a download that is cut
  // off keeps them, to resume from: mirror_e2e's resume test caught their loss).
  auto t = transport();
  Seen seen;
  auto req =
      sink_request(served().fault_url("truncated", "page.bin"), seen, std::chrono::milliseconds(3));
  HttpResponse r = t->perform(req);
  CHECK(r.error == TransportError::Truncated);
  CHECK(seen.bytes.size() == body().size() / 2);
  CHECK(seen.bytes == body().substr(0, seen.bytes.size()));
  CHECK(r.body_bytes == seen.bytes.size());
}

TEST_CASE("a relayed body is bounded by what it decodes to", "[http][relay]") {
  auto t = transport();
  for (const char* name : {"page.bin", "page.html"}) {
    INFO(name);
    Seen seen;
    auto req = sink_request(served().url(name), seen, std::chrono::microseconds(0));
    req.max_body = 1'000'000;
    HttpResponse r = t->perform(req);
    CHECK(r.error == TransportError::TooLarge);
    CHECK(seen.bytes.size() <= 1'000'000);
    // An uncoded body's Content-Length says so before a byte reaches the sink.
    if (std::string(name) == "page.bin") CHECK(seen.bytes.empty());
  }
}
