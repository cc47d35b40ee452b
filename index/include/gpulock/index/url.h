#pragma once
/// @file
/// URL helpers for index pages (RFC 3986): reference resolution, fragments, percent-encoding,
/// file:// URLs and credential redaction. Credentials in URLs (`https://user:token@host/`) are
/// used for requests but never printed or stored: everything that leaves the index module
/// (errors, events, cache entries, lock URLs) goes through `redact_url`.

#include <string>
#include <string_view>

#include "gpulock/core/error.h"

namespace gpulock::index {

/// The parts of an absolute or relative URL reference (RFC 3986 §3). Views into the input.
struct UrlParts {
  std::string_view scheme;     ///< without ':'; empty for a relative reference
  bool has_authority = false;  ///< "//" present
  std::string_view userinfo;   ///< without '@'; empty if none
  std::string_view host;       ///< with the port, e.g. "127.0.0.1:8080"; IPv6 in brackets
  std::string_view path;
  bool has_query = false;
  std::string_view query;  ///< without '?'
  bool has_fragment = false;
  std::string_view fragment;  ///< without '#'
};

/// Splits a URL reference (RFC 3986 appendix B); never fails.
[[nodiscard]] UrlParts split_url(std::string_view url) noexcept;

/// RFC 3986 §5.2 reference resolution (`/whl/cu124/torch-...whl` against
/// `https://download.pytorch.org/whl/cu124/torch/` -> `https://download.pytorch.org/whl/...`),
/// including dot-segment removal. An absolute `ref` is returned with dot segments removed.
[[nodiscard]] std::string resolve_url(std::string_view base, std::string_view ref);

/// resolve_url against one base, for a page's many links. The base is split once. A reference
/// that is a plain path is joined without resolve_url's temporaries:
/// - relative, after any `../` and `./` segments, or absolute (`/...`);
/// - with no query, no `:` and no other dot segment;
/// - with or without a `#fragment`.
/// Anything else goes to resolve_url. The result is always resolve_url(base, ref)'s.
class UrlResolver {
 public:
  explicit UrlResolver(std::string_view base);
  [[nodiscard]] std::string resolve(std::string_view ref) const;

 private:
  std::string base_;
  std::string prefix_;  ///< the base's `scheme:` and `//authority`, as resolve_url writes them
  std::string dir_;     ///< the base's path up to its last '/' (the fast path's base)
  bool fast_ = false;   ///< dir_ starts with '/' and has no dot segment
};

/// The URL without its `#fragment`.
[[nodiscard]] std::string_view strip_fragment(std::string_view url) noexcept;

/// `user:pass@` replaced: `https://user:****@host/` (password hidden), `https://****@host/`
/// (a lone user name is often a token). URLs without credentials are returned unchanged.
[[nodiscard]] std::string redact_url(std::string_view url);

/// The URL with its `user:pass@` removed (as a lock records index URLs): for comparing URLs
/// that may differ only in credentials. URLs without credentials are returned unchanged.
[[nodiscard]] std::string strip_credentials(std::string_view url);

/// Redacts every URL with credentials found anywhere in `text` (for third-party messages).
[[nodiscard]] std::string redact_text(std::string_view text);

/// Lowercase host without port and credentials (`Download.PyTorch.org:443` ->
/// `download.pytorch.org`).
[[nodiscard]] std::string url_host(std::string_view url);

/// `%2B` -> `+`; invalid escapes are kept as written.
[[nodiscard]] std::string percent_decode(std::string_view text);

/// Percent-encodes bytes outside RFC 3986 unreserved characters and `/` (for file:// paths).
[[nodiscard]] std::string percent_encode_path(std::string_view path);

/// The last path segment, percent-decoded (`.../torch-2.5.1%2Bcu124-...whl#sha256=..` ->
/// `torch-2.5.1+cu124-...whl`).
[[nodiscard]] std::string url_basename(std::string_view url);

/// True for `file:` URLs.
[[nodiscard]] bool is_file_url(std::string_view url) noexcept;
/// True for `http:` and `https:` URLs.
[[nodiscard]] bool is_http_url(std::string_view url) noexcept;

/// `file:///abs/path` or `file://localhost/abs/path` -> `/abs/path` (percent-decoded).
/// Errors: InvalidInput for a remote host or a relative path.
[[nodiscard]] core::Result<std::string> file_url_to_path(std::string_view url);

/// A local path (made absolute against the working directory) -> `file:///...`.
/// A trailing '/' of `path` is kept.
[[nodiscard]] std::string path_to_file_url(std::string_view path);

/// Turns what a user typed for an index (`https://...`, `file:///...`, or a local path) into a
/// URL. Local paths become file:// URLs.
[[nodiscard]] std::string url_from_user_input(std::string_view text);

}  // namespace gpulock::index
