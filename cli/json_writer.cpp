#include "json_writer.h"

#include <cmath>

#include <fmt/format.h>

#include "gpulock/core/text.h"

namespace gpulock::cli {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  std::uint32_t cp = 0;
  return core::utf8_sequence(s, i, cp);
}

}  // namespace

std::string JsonWriter::quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      ++i;
      continue;
    }
    std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  out += '"';
  return out;
}

void JsonWriter::newline() {
  out_ += '\n';
  out_.append(stack_.size() * 2, ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!stack_.empty()) {
    if (!stack_.back().empty) out_ += ',';
    stack_.back().empty = false;
    newline();
  }
}

JsonWriter& JsonWriter::open(char bracket, bool is_object) {
  before_value();
  out_ += bracket;
  stack_.push_back({is_object});
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  out_ += bracket;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (!stack_.back().empty) out_ += ',';
  stack_.back().empty = false;
  newline();
  out_ += quote(k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  out_ += quote(s);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t n) {
  before_value();
  out_ += fmt::format("{}", n);
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t n) {
  before_value();
  out_ += fmt::format("{}", n);
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  before_value();
  if (std::isfinite(d)) {
    out_ += fmt::format("{}", d);
  } else {
    out_ += "null";
  }
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::value(const std::vector<std::string>& items) {
  begin_array();
  for (const auto& s : items)
    value(s);
  return end_array();
}

JsonWriter& JsonWriter::value_or_null(std::string_view s) {
  return s.empty() ? null() : value(s);
}

std::string JsonWriter::str() const {
  if (stack_.empty() && !out_.empty()) return out_ + "\n";
  return out_;
}

}  // namespace gpulock::cli
