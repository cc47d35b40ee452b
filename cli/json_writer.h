#pragma once
/// @file
/// A small streaming JSON writer for `--json` output and `--report` files: objects and arrays
/// in insertion order, UTF-8 passed through, control characters escaped, invalid UTF-8
/// replaced by U+FFFD so the output always parses. Two-space indentation, trailing newline.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulock::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{', true); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('[', false); }
  JsonWriter& end_array() { return close(']'); }
  /// The key of the next value (inside an object).
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(std::int64_t n);
  JsonWriter& value(std::uint64_t n);
  JsonWriter& value(int n) { return value(static_cast<std::int64_t>(n)); }
  JsonWriter& value(double d);
  JsonWriter& null();
  /// An array of the strings, in order.
  JsonWriter& value(const std::vector<std::string>& items);
  /// `s`, or null when it is empty (for fields whose absence the model spells as "").
  JsonWriter& value_or_null(std::string_view s);
  /// `text(*v)`, or null when `v` is empty.
  template <class T, class F>
  JsonWriter& value_or_null(const std::optional<T>& v, F&& text) {
    return v ? value(text(*v)) : null();
  }
  template <class T>
  JsonWriter& value(const std::optional<T>& v) {
    return v ? value(*v) : null();
  }

  /// key(k).value(v)
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  JsonWriter& field(std::string_view k, const char* v) {
    key(k);
    return value(std::string_view(v));
  }

  /// The document so far, with a trailing newline once complete.
  [[nodiscard]] std::string str() const;

  /// JSON string literal for `s`, quotes included.
  [[nodiscard]] static std::string quote(std::string_view s);

 private:
  JsonWriter& open(char bracket, bool is_object);
  JsonWriter& close(char bracket);
  void before_value();
  void newline();

  std::string out_;
  struct Frame {
    bool is_object;
    bool empty = true;
  };
  std::vector<Frame> stack_;
  bool after_key_ = false;
};

}  // namespace gpulock::cli
