// pylock.toml (lock/lockfile.h parse_lock: toml++ then every PEP 751 rule). Properties: a lock
// the reader accepts passes validate_lock; the writer's text reads back to the same model (in
// canonical order) and writing that gives the same bytes (read(write(x)) == x, byte-stable).
#include <fmt/format.h>

#include "gpulock/lock/lockfile.h"

#include "fuzz_check.h"

using namespace gpulock::lock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto file = parse_lock(gpulock::fuzz::as_text(data, size), "pylock.toml");
  if (!file) return 0;
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
