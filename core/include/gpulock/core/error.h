#pragma once
/// @file
/// gpulock's error vocabulary. Every fallible library call returns `Result<T>`
/// (`std::expected<T, Error>`); no exception crosses a module boundary. The CLI alone turns an
/// Error into a message and an exit code (DESIGN.md §Commands, exit codes).

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulock::core {

/// What went wrong, coarse enough for the CLI to pick an exit code and a hint.
enum class ErrorCode {
  // Invalid input: text a user or a file gave us (exit 3).
  InvalidVersion,      ///< not a PEP 440 version
  InvalidSpecifier,    ///< not a PEP 440 version specifier
  InvalidMarker,       ///< not a PEP 508 environment marker
  InvalidRequirement,  ///< not a PEP 508 requirement
  InvalidName,         ///< not a valid project name (PEP 508 §Names)
  InvalidFilename,     ///< not a valid wheel (PEP 427) or sdist filename
  InvalidTag,          ///< not a valid platform/compatibility tag
  InvalidMetadata,     ///< core metadata (METADATA, PKG-INFO) malformed
  InvalidInput,        ///< any other input file (requirements file, pyproject, JSON)
  InvalidLockfile,     ///< pylock.toml that breaks PEP 751
  // Usage (exit 2).
  Usage,  ///< a flag or argument the user gave is wrong
  // Index and network (exit 4).
  Network,       ///< connection failed, DNS, TLS, reset, after retries
  Http,          ///< an HTTP status that is an error (5xx after retries, 4xx other than not-found)
  Auth,          ///< 401/403 (other than a PyTorch index's 403 for a missing project)
  Timeout,       ///< connect/low-speed/overall timeout
  HashMismatch,  ///< a downloaded file does not have the hash the index or lock gave
  IndexFormat,   ///< an index page (PEP 503 HTML / PEP 691 JSON) is malformed
  NotFound,      ///< a file/URL that must exist does not
  Offline,       ///< --offline and the cache lacks what is needed
  // Local I/O.
  Io,  ///< reading or writing a local file failed
  // Everything else.
  Cancelled,  ///< the caller asked to stop (Ctrl-C)
  Internal,   ///< a bug
};

/// A short stable name for a code, e.g. "invalid-version" (used in --json output).
std::string_view error_code_name(ErrorCode code) noexcept;

/// One error. `message` is one line without a trailing period, written for a user.
/// `where` names the file or URL it concerns (credentials redacted), `line`/`column` are
/// 1-based positions inside it (0 = unknown). For errors from a parser of a single string
/// (Version::parse, Marker::parse, ...), `where` is empty and `column` is the 1-based position
/// of the offending character in that string.
/// `context` lists outer frames, innermost first ("while reading requirements.txt").
struct Error {
  ErrorCode code = ErrorCode::Internal;
  std::string message;
  std::string where;
  std::size_t line = 0;
  std::size_t column = 0;
  std::vector<std::string> context;
  /// Optional advice, printed by the CLI as `hint:` lines after the error line.
  std::vector<std::string> hints;

  /// "where:line:column: message" with absent parts left out.
  [[nodiscard]] std::string to_string() const;

  /// Returns a copy located in a file/URL: sets `where` and `line` when not already set, and,
  /// when `column_offset` is given, shifts `column` by it (for a string found at that column).
  [[nodiscard]] Error located(std::string_view where_, std::size_t line_ = 0,
                              std::size_t column_offset = 0) const;
  /// Returns a copy with one more context frame.
  [[nodiscard]] Error with_context(std::string frame) const;
  /// Returns a copy with one more hint.
  [[nodiscard]] Error with_hint(std::string hint) const;
  /// Returns a copy with another code (a parser's InvalidVersion is a Usage error when the text
  /// came from a flag).
  [[nodiscard]] Error with_code(ErrorCode code_) const;
};

template <class T>
using Result = std::expected<T, Error>;

/// For calls that return nothing on success.
using Status = std::expected<void, Error>;

/// Text from input quoted for an error message: non-printable bytes escaped as \xNN and
/// anything beyond `max_bytes` cut with "...", so a 10 MB or binary input never floods a
/// message. Returns the text wrapped in single quotes.
[[nodiscard]] std::string quote_for_message(std::string_view text, std::size_t max_bytes = 80);

/// The one way to build an Error: never a positional `Error{...}` (it would break silently when
/// a field is added) nor field by field. Hints and frames go on with `with_hint`,
/// `with_context` and `located`; `fail` and `fail_at` wrap the same for a `return`.
[[nodiscard]] inline Error make_error(ErrorCode code, std::string message, std::string where = {},
                                      std::size_t line = 0, std::size_t column = 0) {
  Error e;
  e.code = code;
  e.message = std::move(message);
  e.where = std::move(where);
  e.line = line;
  e.column = column;
  return e;
}

/// `return fail(ErrorCode::InvalidVersion, "...", column);` from a function returning Result<T>.
[[nodiscard]] inline std::unexpected<Error> fail(ErrorCode code, std::string message,
                                                 std::size_t column = 0) {
  return std::unexpected<Error>(make_error(code, std::move(message), {}, 0, column));
}

/// Same, with a file/URL and line.
[[nodiscard]] inline std::unexpected<Error> fail_at(ErrorCode code, std::string message,
                                                    std::string where, std::size_t line = 0,
                                                    std::size_t column = 0) {
  return std::unexpected<Error>(
      make_error(code, std::move(message), std::move(where), line, column));
}

}  // namespace gpulock::core
