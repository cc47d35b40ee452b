// pylock.toml (lock/lockfile.h parse_lock: toml++ then every PEP 751 rule). Properties: a lock
// the reader accepts passes validate_lock; the writer's text reads back to the same model (in
// canonical order) and writing that gives the same bytes (read(write(x)) == x, byte-stable);
// every field that becomes a path or a URL is one the reader checked (issue 40): each sha256 is
// 64 lowercase hex digits, each file URL http(s) or file, no path or URL has a control character.
// The wheel-file records (lock/wheel_files.h, issue 44) of an accepted lock: a record the typed
// reader accepts has only relative library paths and a 64-hex digest, and writing it back
// (set_wheel_files) reads back the same.
#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "gpulock/lock/lockfile.h"
#include "gpulock/lock/wheel_files.h"

#include "fuzz_check.h"

using namespace gpulock::lock;

namespace {

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

bool is_sha256(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool allowed_scheme(std::string_view url) {
  std::string scheme(url.substr(0, url.find(':')));
  for (char& c : scheme)
    c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return url.find(':') != std::string_view::npos &&
         (scheme == "http" || scheme == "https" || scheme == "file");
}

// The fields the reader promises to have checked: they become cache paths, URLs and open()s.
void check_fields(const Lock& lock) {
  for (const auto& p : lock.packages) {
    for (const FileEntry* f : p.files()) {
      for (const auto& [algo, digest] : f->hashes) {
        FUZZ_CHECK(
            digest.find_first_of("/.\\") == std::string::npos && !has_control(digest),
            fmt::format("package '{}': hash {} = '{}' could be a path", p.name, algo, digest));
        if (algo == "sha256") {
          FUZZ_CHECK(is_sha256(digest), fmt::format("package '{}': sha256 '{}' is not 64 "
                                                    "lowercase hex digits",
                                                    p.name, digest));
        }
      }
      if (f->url) {
        FUZZ_CHECK(allowed_scheme(*f->url) && !has_control(*f->url) &&
                       f->url->find(' ') == std::string::npos,
                   fmt::format("package '{}': url '{}' is not an http(s)/file URL of one line",
                               p.name, *f->url));
      }
      if (f->path) {
        FUZZ_CHECK(
            !has_control(*f->path),
            fmt::format("package '{}': path '{}' has a control character", p.name, *f->path));
      }
      if (f->size) {
        FUZZ_CHECK(*f->size <= (std::uint64_t{1} << 50),
                   fmt::format("package '{}': size {} is over 1 PiB", p.name, *f->size));
      }
    }
    if (p.directory) {
      FUZZ_CHECK(!has_control(p.directory->path),
                 fmt::format("package '{}': directory path has a control character", p.name));
    }
  }
}

// [packages.tool.gpulock.files]: what the typed reader accepts is what check and install use.
void check_wheel_files(const Lock& lock) {
  for (const auto& p : lock.packages) {
    auto files = wheel_files(p);
    if (!files) continue;
    Package copy = p;
    for (const auto& [name, rec] : *files) {
      FUZZ_CHECK(is_sha256(rec.members_sha256),
                 fmt::format("package '{}': members-sha256 '{}'", p.name, rec.members_sha256));
      for (const auto& lib : rec.shared_libraries) {
        bool relative = !lib.empty() && lib.front() != '/' && !has_control(lib);
        for (std::size_t at = 0; relative && at <= lib.size();) {
          auto end = std::min(lib.find('/', at), lib.size());
          auto part = std::string_view(lib).substr(at, end - at);
          relative = !part.empty() && part != "." && part != "..";
          at = end + 1;
        }
        FUZZ_CHECK(relative,
                   fmt::format("package '{}': shared library '{}' is not relative", p.name, lib));
      }
      for (const auto& text : rec.conflicts)
        FUZZ_CHECK(!text.empty(), fmt::format("package '{}': an empty conflict", p.name));
      set_wheel_files(copy, name, rec);
    }
    auto again = wheel_files(copy);
    FUZZ_CHECK(again.has_value() && *again == *files,
               fmt::format("package '{}': its wheel records do not read back", p.name));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto file = parse_lock(gpulock::fuzz::as_text(data, size), "pylock.toml");
  if (!file) return 0;
  check_fields(file->lock);
  check_wheel_files(file->lock);
  auto valid = validate_lock(file->lock);
  FUZZ_CHECK(valid.has_value(), fmt::format("the reader accepted a lock validate_lock refuses: {}",
                                            valid ? "" : valid.error().to_string()));
  std::string text = to_toml(file->lock);
  auto again = parse_lock(text, "written.toml");
  FUZZ_CHECK(again.has_value(), fmt::format("the writer's text does not read back: {}\n{}",
                                            again ? "" : again.error().to_string(), text));
  Lock canonical = file->lock;
  canonicalize(canonical);
  // By design the writer drops credentials from URLs (`https://user:pw@host` and even an empty
  // `https://@host` lose the userinfo; writer.cpp redact_url), which the reader keeps: a lock
  // with an '@' anywhere is checked for everything but model equality.
  bool may_hold_credentials =
      std::string_view(text).find('@') != std::string_view::npos ||
      gpulock::fuzz::as_text(data, size).find('@') != std::string_view::npos;
  if (!may_hold_credentials) {
    FUZZ_CHECK(again->lock == canonical, fmt::format("read(write(x)) != x:\n{}", text));
  }
  std::string text2 = to_toml(again->lock);
  FUZZ_CHECK(text2 == text, fmt::format("writing twice differs:\n{}\n---\n{}", text, text2));
  return 0;
}
