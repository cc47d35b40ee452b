#include "gpulock/lock/toml_value.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "gpulock/core/civil_date.h"

#include "utf8.h"

namespace gpulock::lock {
namespace {

using detail::append_utf8;
using detail::utf8_sequence;

bool equal_double(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return a == b;
}

// TOML's two-character escapes, or nullptr.
const char* short_escape(unsigned char c) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\b':
      return "\\b";
    case '\t':
      return "\\t";
    case '\n':
      return "\\n";
    case '\f':
      return "\\f";
    case '\r':
      return "\\r";
    default:
      return nullptr;
  }
}

std::string fraction(std::uint32_t nanosecond) {
  if (nanosecond == 0) return {};
  if (nanosecond % 1000 == 0) return fmt::format(".{:06}", nanosecond / 1000);
  return fmt::format(".{:09}", nanosecond);
}

}  // namespace

TomlDatetime TomlDatetime::to_utc() const {
  TomlDatetime out = *this;
  out.offset_minutes = 0;
  if (!offset_minutes || *offset_minutes == 0) return out;
  std::int64_t minutes = core::days_from_civil(date.year, date.month, date.day) * 1440 +
                         time.hour * 60 + time.minute - *offset_minutes;
  std::int64_t days = minutes >= 0 ? minutes / 1440 : -((-minutes + 1439) / 1440);
  std::int64_t rest = minutes - days * 1440;
  const core::CivilDate civil = core::civil_from_days(days);
  out.date.year = static_cast<std::int32_t>(civil.year);
  out.date.month = static_cast<std::uint8_t>(civil.month);
  out.date.day = static_cast<std::uint8_t>(civil.day);
  out.time.hour = static_cast<std::uint8_t>(rest / 60);
  out.time.minute = static_cast<std::uint8_t>(rest % 60);
  return out;
}

std::string to_toml_text(const TomlDate& d) {
  return fmt::format("{:04}-{:02}-{:02}", d.year, d.month, d.day);
}

std::string to_toml_text(const TomlTime& t) {
  return fmt::format("{:02}:{:02}:{:02}{}", t.hour, t.minute, t.second, fraction(t.nanosecond));
}

std::string to_toml_text(const TomlDatetime& dt) {
  std::string out = to_toml_text(dt.date) + "T" + to_toml_text(dt.time);
  if (dt.offset_minutes) {
    const std::int32_t off = *dt.offset_minutes;
    if (off == 0) {
      out += 'Z';
    } else {
      const std::int32_t a = off < 0 ? -off : off;
      out += fmt::format("{}{:02}:{:02}", off < 0 ? '-' : '+', a / 60, a % 60);
    }
  }
  return out;
}

std::string_view TomlValue::type_name() const noexcept {
  switch (data.index()) {
    case 0:
      return "string";
    case 1:
      return "integer";
    case 2:
      return "float";
    case 3:
      return "boolean";
    case 4:
      return "date";
    case 5:
      return "time";
    case 6:
      return "date-time";
    case 7:
      return "array";
    default:
      return "table";
  }
}

bool operator==(const TomlValue& a, const TomlValue& b) {
  if (a.data.index() != b.data.index()) return false;
  if (const auto* x = a.get_if<double>()) return equal_double(*x, *b.get_if<double>());
  return a.data == b.data;
}

bool is_bare_key(std::string_view key) noexcept {
  if (key.empty()) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string toml_key(std::string_view key) {
  return is_bare_key(key) ? std::string(key) : toml_string(key);
}

std::string toml_string(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (const char* escape = short_escape(c)) {
      out += escape;
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(text, i, cp);
    if (len == 0) {
      append_utf8(out, 0xFFFD);
      ++i;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  out += '"';
  return out;
}

std::string to_toml_inline(const TomlValue& value) {
  struct Visitor {
    std::string operator()(const std::string& s) const { return toml_string(s); }
    std::string operator()(std::int64_t i) const { return fmt::format("{}", i); }
    std::string operator()(double d) const {
      if (std::isnan(d)) return std::signbit(d) ? "-nan" : "nan";
      if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
      std::string s = fmt::format("{}", d);
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const TomlDate& d) const { return to_toml_text(d); }
    std::string operator()(const TomlTime& t) const { return to_toml_text(t); }
    std::string operator()(const TomlDatetime& dt) const { return to_toml_text(dt); }
    std::string operator()(const TomlArray& a) const {
      std::string out = "[";
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (i) out += ", ";
        out += to_toml_inline(a[i]);
      }
      return out + "]";
    }
    std::string operator()(const TomlTable& t) const {
      if (t.empty()) return "{}";
      std::string out = "{ ";
      bool first = true;
      for (const auto& [k, v] : t) {
        if (!first) out += ", ";
        first = false;
        out += toml_key(k) + " = " + to_toml_inline(v);
      }
      return out + " }";
    }
  };
  return std::visit(Visitor{}, value.data);
}

}  // namespace gpulock::lock
