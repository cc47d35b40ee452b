#include "gpulock/core/error.h"

#include <fmt/format.h>

namespace gpulock::core {

std::string_view error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidVersion:
      return "invalid-version";
    case ErrorCode::InvalidSpecifier:
      return "invalid-specifier";
    case ErrorCode::InvalidMarker:
      return "invalid-marker";
    case ErrorCode::InvalidRequirement:
      return "invalid-requirement";
    case ErrorCode::InvalidName:
      return "invalid-name";
    case ErrorCode::InvalidFilename:
      return "invalid-filename";
    case ErrorCode::InvalidTag:
      return "invalid-tag";
    case ErrorCode::InvalidMetadata:
      return "invalid-metadata";
    case ErrorCode::InvalidInput:
      return "invalid-input";
    case ErrorCode::InvalidLockfile:
      return "invalid-lockfile";
    case ErrorCode::Usage:
      return "usage";
    case ErrorCode::Network:
      return "network";
    case ErrorCode::Http:
      return "http";
    case ErrorCode::Auth:
      return "auth";
    case ErrorCode::Timeout:
      return "timeout";
    case ErrorCode::HashMismatch:
      return "hash-mismatch";
    case ErrorCode::IndexFormat:
      return "index-format";
    case ErrorCode::NotFound:
      return "not-found";
    case ErrorCode::Offline:
      return "offline";
    case ErrorCode::Io:
      return "io";
    case ErrorCode::Cancelled:
      return "cancelled";
    case ErrorCode::Internal:
      return "internal";
  }
  return "internal";
}

std::string quote_for_message(std::string_view text, std::size_t max_bytes) {
  std::string out = "'";
  std::size_t n = 0;
  for (char ch : text) {
    if (n >= max_bytes) {
      out += "...";
      break;
    }
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '\'') {
      if (c == '\'' || c == '\\') {
        out += '\\';
        out += ch;
      } else {
        out += fmt::format("\\x{:02x}", c);
      }
    } else {
      out += ch;
    }
    ++n;
  }
  out += "'";
  return out;
}

std::string Error::to_string() const {
  std::string out;
  if (!where.empty()) {
    out += where;
    if (line != 0) out += fmt::format(":{}", line);
    if (column != 0) out += fmt::format(":{}", column);
    out += ": ";
  } else if (line != 0) {
    out += column != 0 ? fmt::format("line {}, column {}: ", line, column)
                       : fmt::format("line {}: ", line);
  } else if (column != 0) {
    out += fmt::format("column {}: ", column);
  }
  out += message;
  return out;
}

Error Error::located(std::string_view where_, std::size_t line_, std::size_t column_offset) const {
  Error e = *this;
  if (e.where.empty()) {
    e.where = std::string(where_);
    if (e.line == 0) e.line = line_;
    if (column_offset != 0 && e.column != 0) e.column += column_offset;
  }
  return e;
}

Error Error::with_context(std::string frame) const {
  Error e = *this;
  e.context.push_back(std::move(frame));
  return e;
}

Error Error::with_code(ErrorCode code_) const {
  Error e = *this;
  e.code = code_;
  return e;
}

Error Error::with_hint(std::string hint) const {
  Error e = *this;
  e.hints.push_back(std::move(hint));
  return e;
}

}  // namespace gpulock::core
