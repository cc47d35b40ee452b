// PEP 508 dependency specifiers with pypa/packaging 23.0 semantics (packaging/_parser.py,
// requirements.py).
//
// packaging behaviours followed where the PEP text differs or is silent:
//  - The name is packaging's IDENTIFIER token `\b[a-zA-Z0-9][a-zA-Z0-9._-]*\b`, which also
//    accepts names the PEP's name rule does not, such as "name_" (a trailing '.' or '-' is
//    left for the next token and then fails).
//  - Whitespace between tokens is [ \t]; the end of input may be followed by one "\n".
//  - A specifier list may end with a comma (`name>=1,`), extras may be empty (`name[]`).
//  - After `@`, the URL is every character up to a space or tab (a ';' right after the URL is
//    part of it); a marker needs whitespace before its ';'.
//  - URL check (urllib.parse in Python 3.11): a file: URL must survive urlunparse(urlparse())
//    unchanged (so `file:/x`, `FILE:///x` and `file:///x?` are invalid); any other URL needs a
//    scheme and a network location. Brackets in the netloc must hold an IPv6 address or an
//    IPvFuture literal.
//  - The marker is parsed like Marker::parse but followed by the end check of the requirement.
//  - str() (packaging 26.3): `name[a,b]<2,>=1; marker`, and `name @ url ; marker`.
//  - Nothing may follow the requirement, not even a final newline (packaging 26.3's END is \Z).
// Deliberate differences: non-ASCII netlocs are not NFKC-checked; see also version.cpp,
// specifier.cpp and marker.cpp.
#include "gpulock/core/requirement.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpulock/core/name.h"

#include "marker_internal.h"
#include "specifier_internal.h"
#include "text_util.h"

namespace gpulock::core {

namespace {

Error req_error(std::string_view text, std::size_t pos, std::string_view what) {
  return make_error(ErrorCode::InvalidRequirement,
                    fmt::format("invalid requirement {}: {}", quote_for_message(text), what), {}, 0,
                    pos + 1);
}

// IDENTIFIER: \b[a-zA-Z0-9][a-zA-Z0-9._-]*\b, the longest match (backtracking to a boundary).
std::size_t match_identifier(std::string_view s, std::size_t p) noexcept {
  if (p >= s.size() || !detail::is_alnum(s[p]) || !detail::word_boundary(s, p)) {
    return std::string_view::npos;
  }
  std::size_t e = p + 1;
  while (e < s.size() && (detail::is_alnum(s[e]) || s[e] == '.' || s[e] == '_' || s[e] == '-'))
    ++e;
  while (e > p && !detail::word_boundary(s, e))
    --e;
  return e > p ? e : std::string_view::npos;
}

bool at_end(std::string_view s, std::size_t p) noexcept {
  return p == s.size();
}

// ---------------------------------------------------------------------------------------------
// URL validation, a port of what packaging 23.0 asks of urllib.parse (Python 3.11).

bool is_hex(char c) noexcept {
  return detail::is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool is_ipv4(std::string_view s) noexcept {
  int parts = 0;
  std::size_t i = 0;
  while (true) {
    std::size_t start = i;
    while (i < s.size() && detail::is_digit(s[i]))
      ++i;
    std::size_t len = i - start;
    if (len == 0 || len > 3) return false;
    if (len > 1 && s[start] == '0') return false;  // ipaddress rejects leading zeros
    if (std::stoi(std::string(s.substr(start, len))) > 255) return false;
    ++parts;
    if (i == s.size()) break;
    if (s[i] != '.') return false;
    ++i;
  }
  return parts == 4;
}

// ipaddress.IPv6Address: hex groups of 1-4 digits, at most one "::", an optional IPv4 tail and
// an optional %scope.
bool is_ipv6(std::string_view s) noexcept {
  std::size_t pct = s.find('%');
  if (pct != std::string_view::npos) {
    if (pct + 1 == s.size()) return false;
    s = s.substr(0, pct);
  }
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t c = s.find(':', start);
    parts.push_back(
        s.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start));
    if (c == std::string_view::npos) break;
    start = c + 1;
  }
  if (parts.size() < 3) return false;
  std::size_t groups_needed = 8;
  if (parts.back().find('.') != std::string_view::npos) {
    if (!is_ipv4(parts.back())) return false;
    parts.back() = "0";
    parts.push_back("0");
  }
  if (parts.size() > groups_needed + 1) return false;
  std::size_t skip = std::string_view::npos;
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    if (parts[i].empty()) {
      if (skip != std::string_view::npos) return false;
      skip = i;
    }
  }
  std::size_t lo = 0, hi = parts.size();
  if (skip != std::string_view::npos) {
    if (parts.front().empty()) {
      if (skip != 1) return false;
      lo = 1;
    }
    if (parts.back().empty()) {
      if (skip != parts.size() - 2) return false;
      hi = parts.size() - 1;
    }
    std::size_t explicit_groups = (skip - lo) + (hi - skip - 1);
    if (explicit_groups >= groups_needed) return false;
  } else {
    if (parts.size() != groups_needed) return false;
  }
  for (std::size_t i = lo; i < hi; ++i) {
    if (i == skip) continue;
    if (parts[i].empty() || parts[i].size() > 4) return false;
    if (!std::all_of(parts[i].begin(), parts[i].end(), is_hex)) return false;
  }
  return true;
}

bool bracketed_netloc_ok(std::string_view netloc) {
  std::size_t at = netloc.rfind('@');
  std::string_view host_port = at == std::string_view::npos ? netloc : netloc.substr(at + 1);
  std::string_view hostname;
  std::size_t open = host_port.find('[');
  if (open != std::string_view::npos) {
    if (open != 0) return false;
    std::string_view bracketed = host_port.substr(1);
    std::size_t close = bracketed.find(']');
    hostname = bracketed.substr(0, close);
    std::string_view port = close == std::string_view::npos ? "" : bracketed.substr(close + 1);
    if (!port.empty() && port[0] != ':') return false;
  } else {
    hostname = host_port.substr(0, host_port.find(':'));
  }
  if (!hostname.empty() && hostname[0] == 'v') {
    // \Av[a-fA-F0-9]+\..+\Z
    std::size_t i = 1;
    while (i < hostname.size() && is_hex(hostname[i]))
      ++i;
    return i > 1 && i + 1 < hostname.size() && hostname[i] == '.' &&
           hostname.find('\n', i) == std::string_view::npos;
  }
  return is_ipv6(hostname);
}

bool url_ok(std::string_view url) {
  static constexpr std::string_view kSchemeChars =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.";
  std::string u;
  std::size_t lead = 0;
  while (lead < url.size() && static_cast<unsigned char>(url[lead]) <= 0x20)
    ++lead;
  for (std::size_t i = lead; i < url.size(); ++i) {
    if (url[i] != '\t' && url[i] != '\r' && url[i] != '\n') u.push_back(url[i]);
  }
  std::string scheme;
  std::string_view rest = u;
  std::size_t colon = u.find(':');
  if (colon != std::string::npos && colon > 0 && detail::is_alpha(u[0]) &&
      std::all_of(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(colon),
                  [](char c) { return kSchemeChars.find(c) != std::string_view::npos; })) {
    for (std::size_t i = 0; i < colon; ++i)
      scheme.push_back(detail::to_lower(u[i]));
    rest = std::string_view(u).substr(colon + 1);
  }
  std::string_view netloc;
  if (rest.substr(0, 2) == "//") {
    std::size_t delim = rest.find_first_of("/?#", 2);
    netloc = rest.substr(2, delim == std::string_view::npos ? std::string_view::npos : delim - 2);
    rest = delim == std::string_view::npos ? std::string_view() : rest.substr(delim);
    bool has_open = netloc.find('[') != std::string_view::npos;
    bool has_close = netloc.find(']') != std::string_view::npos;
    if (has_open != has_close) return false;
    if (has_open && !bracketed_netloc_ok(netloc)) return false;
  }
  if (scheme != "file") return !scheme.empty() && !netloc.empty();
  std::string_view fragment, query;
  if (std::size_t hash = rest.find('#'); hash != std::string_view::npos) {
    fragment = rest.substr(hash + 1);
    rest = rest.substr(0, hash);
  }
  if (std::size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  // urlunsplit: "file" is in uses_netloc.
  std::string path(rest);
  if (!netloc.empty() || path.substr(0, 2) != "//") {
    if (!path.empty() && path[0] != '/') path.insert(path.begin(), '/');
    path = "//" + std::string(netloc) + path;
  }
  std::string rebuilt = scheme + ":" + path;
  // append() rather than `"?" + std::string(...)`: GCC 12 warns (-Wrestrict) on the latter.
  if (!query.empty()) rebuilt.append("?").append(query);
  if (!fragment.empty()) rebuilt.append("#").append(fragment);
  return rebuilt == url;
}

// The extras at text[p], a '[' (packaging's _parse_extras): each kept once in `req.extras`, `p`
// moved past the closing ']' and the whitespace after it.
Status parse_extras(std::string_view text, std::size_t& p, Requirement& req) {
  std::size_t open = p;
  p = detail::skip_ws(text, p + 1);
  if (std::size_t e = match_identifier(text, p); e != std::string_view::npos) {
    req.extras.emplace_back(text.substr(p, e - p));
    p = e;
    while (true) {
      p = detail::skip_ws(text, p);
      if (match_identifier(text, p) != std::string_view::npos) {
        return std::unexpected(req_error(text, p, "expected a comma between extra names"));
      }
      if (p >= text.size() || text[p] != ',') break;
      p = detail::skip_ws(text, p + 1);
      std::size_t x = match_identifier(text, p);
      if (x == std::string_view::npos) {
        return std::unexpected(req_error(text, p, "expected an extra name after the comma"));
      }
      std::string extra(text.substr(p, x - p));
      if (std::find(req.extras.begin(), req.extras.end(), extra) == req.extras.end()) {
        req.extras.push_back(std::move(extra));
      }
      p = x;
    }
  }
  p = detail::skip_ws(text, p);
  if (p >= text.size() || text[p] != ']') {
    return std::unexpected(
        req_error(text, p, fmt::format("expected ']' to close the '[' at column {}", open + 1)));
  }
  p = detail::skip_ws(text, p + 1);
  return {};
}

// The marker from text[marker_from] (after the ';') to the end of `text`, in `req.marker`; its
// errors name the requirement.
Status parse_requirement_marker(std::string_view text, std::size_t marker_from, Requirement& req) {
  std::size_t p = marker_from;
  auto marker = MarkerAccess::parse_at(text, p);
  if (!marker) {
    // "invalid marker '<text>': what" -> "invalid requirement '<text>': invalid marker: what"
    Error e = std::move(marker.error());
    std::string prefix = fmt::format("invalid marker {}: ", quote_for_message(text));
    if (e.message.compare(0, prefix.size(), prefix) == 0) {
      e.message = fmt::format("invalid requirement {}: invalid marker: {}", quote_for_message(text),
                              e.message.substr(prefix.size()));
    }
    return std::unexpected(std::move(e));
  }
  req.marker = std::move(*marker);
  p = detail::skip_ws(text, p);
  if (!at_end(text, p)) {
    return std::unexpected(req_error(text, p, "expected 'and', 'or' or the end of the marker"));
  }
  return {};
}

}  // namespace

Result<Requirement> Requirement::parse(std::string_view text) {
  Requirement req;
  std::size_t p = detail::skip_ws(text, 0);
  std::size_t name_end = match_identifier(text, p);
  if (name_end == std::string_view::npos) {
    return std::unexpected(req_error(text, p, "expected a package name at the start"));
  }
  req.name = std::string(text.substr(p, name_end - p));
  p = detail::skip_ws(text, name_end);

  if (p < text.size() && text[p] == '[') {
    if (auto st = parse_extras(text, p, req); !st) return std::unexpected(std::move(st.error()));
  }

  std::size_t marker_from = std::string_view::npos;
  std::size_t url_pos = 0;
  std::string spec_text;
  std::vector<std::size_t> spec_pos;  // position in `text` of each byte of spec_text
  if (p < text.size() && text[p] == '@') {
    p = detail::skip_ws(text, p + 1);
    std::size_t e = p;
    while (e < text.size() && text[e] != ' ' && text[e] != '\t')
      ++e;
    if (e == p) return std::unexpected(req_error(text, p, "expected a URL after '@'"));
    req.url = std::string(text.substr(p, e - p));
    url_pos = p;
    p = e;
    if (!at_end(text, p)) {
      p = detail::skip_ws(text, p);  // the URL stopped at a space or tab
      if (!at_end(text, p)) {
        if (text[p] != ';') {
          return std::unexpected(req_error(text, p, "expected the end or ';' after the URL"));
        }
        marker_from = p + 1;
      }
    }
  } else {
    // specifier: '(' WS? version_many WS? ')' | version_many
    std::size_t open = std::string_view::npos;
    if (p < text.size() && text[p] == '(') {
      open = p;
      p = detail::skip_ws(text, p + 1);
    }
    std::size_t last_start = std::string_view::npos;
    std::size_t last_end = std::string_view::npos;
    while (true) {
      std::size_t e = detail::match_specifier_token(text, p);
      if (e == std::string_view::npos) break;
      last_start = p;
      last_end = e;
      for (std::size_t k = p; k < e; ++k) {
        spec_text.push_back(text[k]);
        spec_pos.push_back(k);
      }
      p = detail::skip_ws(text, e);
      if (p >= text.size() || text[p] != ',') break;
      spec_text.push_back(',');
      spec_pos.push_back(p);
      p = detail::skip_ws(text, p + 1);
    }
    p = detail::skip_ws(text, p);
    // A clause that stops short (`>=1.0+local`) or does not tokenize at all (`~=1`, a number
    // above 2^64-1): report what SpecifierSet::parse says about it, up to the next , ; or ).
    auto explain_clause = [&]() -> std::optional<Error> {
      std::size_t at = p;
      if (p == last_end) {
        at = last_start;
      } else if (p >= text.size() ||
                 std::string_view("<>=!~").find(text[p]) == std::string_view::npos) {
        return std::nullopt;
      }
      std::size_t stop = std::min(text.find_first_of(";),", at), text.size());
      auto s = SpecifierSet::parse(text.substr(at, stop - at));
      if (s) return std::nullopt;
      Error e = s.error();
      e.message = fmt::format("invalid requirement {}: {}", quote_for_message(text), e.message);
      if (e.column != 0) e.column += at;
      return e;
    };
    if (open != std::string_view::npos) {
      if (p >= text.size() || text[p] != ')') {
        if (auto e = explain_clause()) return std::unexpected(std::move(*e));
        return std::unexpected(req_error(
            text, p, fmt::format("expected ')' to close the '(' at column {}", open + 1)));
      }
      p = detail::skip_ws(text, p + 1);
    }
    if (!at_end(text, p)) {
      if (text[p] != ';') {
        if (auto e = explain_clause()) return std::unexpected(std::move(*e));
        return std::unexpected(req_error(
            text, p,
            spec_text.empty() ? "expected a version specifier, ';' or the end"
                              : "expected ',', ';' or the end after the version specifier"));
      }
      marker_from = p + 1;
    }
  }

  if (marker_from != std::string_view::npos) {
    if (auto st = parse_requirement_marker(text, marker_from, req); !st) {
      return std::unexpected(std::move(st.error()));
    }
  }
  // As packaging: the grammar first, then the URL, then the specifiers.
  if (!req.url.empty() && !url_ok(req.url)) {
    return std::unexpected(
        req_error(text, url_pos, fmt::format("invalid URL {}", quote_for_message(req.url))));
  }
  auto set = SpecifierSet::parse(spec_text);
  if (!set) {
    Error e = set.error();
    std::size_t c = e.column;
    e.column = c == 0 ? 0 : (c - 1 < spec_pos.size() ? spec_pos[c - 1] + 1 : text.size() + 1);
    e.message = fmt::format("invalid requirement {}: {}", quote_for_message(text), e.message);
    return std::unexpected(std::move(e));
  }
  req.specifier = std::move(*set);
  return req;
}

std::string Requirement::normalized_name() const {
  return normalize_name(name);
}

std::string Requirement::to_string() const {
  std::string out = name;
  if (!extras.empty()) {
    std::vector<std::string> sorted = extras;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    out += "[";
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (i) out += ",";
      out += sorted[i];
    }
    out += "]";
  }
  out += specifier.to_string();
  if (!url.empty()) {
    out += " @ ";
    out += url;
    if (!marker.empty()) out += " ";
  }
  if (!marker.empty()) {
    out += "; ";
    out += marker.to_string();
  }
  return out;
}

}  // namespace gpulock::core
