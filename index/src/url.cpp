#include "gpulock/index/url.h"

#include <filesystem>

#include <fmt/format.h>

#include "gpulock/core/text.h"

namespace gpulock::index {
namespace {

bool is_alpha(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool iequals_prefix(std::string_view text, std::string_view prefix) noexcept {
  return core::iequals(text.substr(0, prefix.size()), prefix);
}

// RFC 3986 §5.2.4.
std::string remove_dot_segments(std::string_view path) {
  // A dot segment starts the path or follows a '/': a path with neither (a file name's dots
  // are inside a segment) has none.
  if (!path.starts_with('.') && path.find("/.") == std::string_view::npos) return std::string(path);
  std::string out;
  out.reserve(path.size());
  std::string_view in = path;
  while (!in.empty()) {
    if (in.starts_with("../")) {
      in.remove_prefix(3);
    } else if (in.starts_with("./")) {
      in.remove_prefix(2);
    } else if (in.starts_with("/./")) {
      in.remove_prefix(2);
    } else if (in == "/.") {
      in = "/";
    } else if (in.starts_with("/../") || in == "/..") {
      if (in == "/..") {
        in = "/";
      } else {
        in.remove_prefix(3);
      }
      auto slash = out.rfind('/');
      out.erase(slash == std::string::npos ? 0 : slash);
    } else if (in == "." || in == "..") {
      in = {};
    } else {
      std::size_t start = in.front() == '/' ? 1 : 0;
      std::size_t next = in.find('/', start);
      if (next == std::string_view::npos) next = in.size();
      out.append(in.substr(0, next));
      in.remove_prefix(next);
    }
  }
  return out;
}

std::string compose(std::string_view scheme, bool has_authority, std::string_view authority,
                    std::string_view path, bool has_query, std::string_view query,
                    bool has_fragment, std::string_view fragment) {
  std::string out;
  out.reserve(scheme.size() + authority.size() + path.size() + query.size() + fragment.size() + 8);
  if (!scheme.empty()) {
    out.append(scheme);
    out.push_back(':');
  }
  if (has_authority) {
    out.append("//");
    out.append(authority);
  }
  out.append(path);
  if (has_query) {
    out.push_back('?');
    out.append(query);
  }
  if (has_fragment) {
    out.push_back('#');
    out.append(fragment);
  }
  return out;
}

// The directory a relative path reference merges with (RFC 3986 §5.2.3): "/" for an authority
// with an empty path, else the base's path up to its last '/' (empty when it has none).
std::string_view base_directory(const UrlParts& b) noexcept {
  if (b.has_authority && b.path.empty()) return "/";
  auto slash = b.path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : b.path.substr(0, slash + 1);
}

// The authority as written (userinfo@host).
std::string_view authority_of(std::string_view url, const UrlParts& p) {
  if (!p.has_authority) return {};
  const char* begin = p.userinfo.empty() ? p.host.data() : p.userinfo.data();
  const char* end = p.host.data() + p.host.size();
  if (p.host.empty() && p.userinfo.empty()) return {};
  (void)url;
  return {begin, static_cast<std::size_t>(end - begin)};
}

}  // namespace

UrlParts split_url(std::string_view url) noexcept {
  UrlParts p;
  std::string_view rest = url;
  // scheme
  if (!rest.empty() && is_alpha(rest.front())) {
    std::size_t i = 1;
    while (i < rest.size() && (is_alpha(rest[i]) || is_digit(rest[i]) || rest[i] == '+' ||
                               rest[i] == '-' || rest[i] == '.')) {
      ++i;
    }
    if (i < rest.size() && rest[i] == ':') {
      p.scheme = rest.substr(0, i);
      rest.remove_prefix(i + 1);
    }
  }
  // fragment
  if (auto hash = rest.find('#'); hash != std::string_view::npos) {
    p.has_fragment = true;
    p.fragment = rest.substr(hash + 1);
    rest = rest.substr(0, hash);
  }
  // query
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    p.has_query = true;
    p.query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  // authority
  if (rest.starts_with("//")) {
    p.has_authority = true;
    rest.remove_prefix(2);
    std::size_t end = rest.find('/');
    if (end == std::string_view::npos) end = rest.size();
    std::string_view authority = rest.substr(0, end);
    if (auto at = authority.rfind('@'); at != std::string_view::npos) {
      p.userinfo = authority.substr(0, at);
      p.host = authority.substr(at + 1);
    } else {
      p.host = authority;
    }
    rest.remove_prefix(end);
  }
  p.path = rest;
  return p;
}

std::string resolve_url(std::string_view base, std::string_view ref) {
  UrlParts r = split_url(ref);
  if (!r.scheme.empty()) {
    // Fast path: absolute URLs without dot segments are returned as they are.
    if (r.path.find("/.") == std::string_view::npos) return std::string(ref);
    return compose(r.scheme, r.has_authority, authority_of(ref, r), remove_dot_segments(r.path),
                   r.has_query, r.query, r.has_fragment, r.fragment);
  }
  UrlParts b = split_url(base);
  if (r.has_authority) {
    return compose(b.scheme, true, authority_of(ref, r), remove_dot_segments(r.path), r.has_query,
                   r.query, r.has_fragment, r.fragment);
  }
  std::string_view b_authority = authority_of(base, b);
  if (r.path.empty()) {
    return compose(b.scheme, b.has_authority, b_authority, b.path, r.has_query || b.has_query,
                   r.has_query ? r.query : b.query, r.has_fragment, r.fragment);
  }
  std::string path;
  if (r.path.front() == '/') {
    path = remove_dot_segments(r.path);
  } else {
    std::string merged(base_directory(b));
    merged.append(r.path);
    path = remove_dot_segments(merged);
  }
  return compose(b.scheme, b.has_authority, b_authority, path, r.has_query, r.query, r.has_fragment,
                 r.fragment);
}

namespace {

// A path with no dot segment ("." or ".." as a whole segment), as remove_dot_segments judges it.
bool no_dot_segment(std::string_view path) noexcept {
  return !path.starts_with('.') && path.find("/.") == std::string_view::npos;
}

}  // namespace

UrlResolver::UrlResolver(std::string_view base) : base_(base) {
  UrlParts b = split_url(base_);
  prefix_ = compose(b.scheme, b.has_authority, authority_of(base_, b), {}, false, {}, false, {});
  dir_ = base_directory(b);
  fast_ = dir_.starts_with('/') && no_dot_segment(dir_);
}

std::string UrlResolver::resolve(std::string_view ref) const {
  const auto hash = ref.find('#');
  std::string_view path = ref.substr(0, hash);
  // Two memchr scans: find_first_of would test each byte against the set one call at a time.
  if (!fast_ || path.empty() || path.starts_with("//") ||
      path.find('?') != std::string_view::npos || path.find(':') != std::string_view::npos) {
    return resolve_url(base_, ref);
  }
  std::string_view dir = dir_;
  if (path.front() != '/') {
    // Leading "./" and "../" segments: "../" drops the last segment of the base's directory
    // (never the root), as remove_dot_segments does on the merged path.
    while (true) {
      if (path.starts_with("./")) {
        path.remove_prefix(2);
      } else if (path.starts_with("../")) {
        path.remove_prefix(3);
        if (dir.size() > 1) dir = dir.substr(0, dir.rfind('/', dir.size() - 2) + 1);
      } else {
        break;
      }
    }
    if (path.empty()) return resolve_url(base_, ref);
  } else {
    dir = {};
  }
  if (!no_dot_segment(path)) return resolve_url(base_, ref);
  std::string out;
  const std::string_view fragment =
      hash == std::string_view::npos ? std::string_view() : ref.substr(hash);
  out.reserve(prefix_.size() + dir.size() + path.size() + fragment.size());
  out.append(prefix_);
  out.append(dir);
  out.append(path);
  out.append(fragment);
  return out;
}

std::string_view strip_fragment(std::string_view url) noexcept {
  auto hash = url.find('#');
  return hash == std::string_view::npos ? url : url.substr(0, hash);
}

std::string redact_url(std::string_view url) {
  UrlParts p = split_url(url);
  if (!p.has_authority || p.userinfo.empty()) return std::string(url);
  std::string replacement;
  if (auto colon = p.userinfo.find(':'); colon != std::string_view::npos) {
    replacement = std::string(p.userinfo.substr(0, colon)) + ":****";
  } else {
    replacement = "****";
  }
  auto start = static_cast<std::size_t>(p.userinfo.data() - url.data());
  std::string out(url.substr(0, start));
  out += replacement;
  out.append(url.substr(start + p.userinfo.size()));
  return out;
}

std::string strip_credentials(std::string_view url) {
  UrlParts p = split_url(url);
  if (!p.has_authority || p.userinfo.empty()) return std::string(url);
  auto start = static_cast<std::size_t>(p.userinfo.data() - url.data());
  std::string out(url.substr(0, start));
  out.append(url.substr(start + p.userinfo.size() + 1));
  return out;
}

std::string redact_text(std::string_view text) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    auto sep = text.find("://", pos);
    if (sep == std::string_view::npos) break;
    std::size_t auth_start = sep + 3;
    std::size_t auth_end = auth_start;
    while (auth_end < text.size()) {
      char c = text[auth_end];
      if (c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '\n' || c == '"' ||
          c == '\'' || c == '<' || c == '>') {
        break;
      }
      ++auth_end;
    }
    std::string_view authority = text.substr(auth_start, auth_end - auth_start);
    auto at = authority.rfind('@');
    out.append(text.substr(pos, auth_start - pos));
    if (at != std::string_view::npos) {
      std::string_view userinfo = authority.substr(0, at);
      if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
        out.append(userinfo.substr(0, colon));
        out.append(":****");
      } else {
        out.append("****");
      }
      out.append(authority.substr(at));
    } else {
      out.append(authority);
    }
    pos = auth_end;
  }
  out.append(text.substr(pos));
  return out;
}

std::string url_host(std::string_view url) {
  UrlParts p = split_url(url);
  std::string_view host = p.host;
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    host = host.substr(0, close == std::string_view::npos ? host.size() : close + 1);
  } else if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  std::string out(host);
  for (char& c : out)
    c = core::ascii_lower(c);
  return out;
}

std::string percent_decode(std::string_view text) {
  if (text.find('%') == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string percent_encode_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(path.size());
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (is_alpha(ch) || is_digit(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' ||
        ch == '/') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string url_basename(std::string_view url) {
  UrlParts p = split_url(url);
  std::string_view path = p.path;
  auto slash = path.rfind('/');
  if (slash != std::string_view::npos) path = path.substr(slash + 1);
  return percent_decode(path);
}

bool is_file_url(std::string_view url) noexcept {
  return iequals_prefix(url, "file:");
}

bool is_http_url(std::string_view url) noexcept {
  return iequals_prefix(url, "http://") || iequals_prefix(url, "https://");
}

core::Result<std::string> file_url_to_path(std::string_view url) {
  UrlParts p = split_url(url);
  if (!is_file_url(url)) {
    return core::fail_at(core::ErrorCode::InvalidInput, "not a file:// URL", redact_url(url));
  }
  if (p.has_authority && !p.host.empty() && url_host(url) != "localhost") {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("file:// URL with a remote host '{}' is not supported", p.host),
        redact_url(url));
  }
  std::string path = percent_decode(p.path);
  if (path.empty() || path.front() != '/') {
    return core::fail_at(core::ErrorCode::InvalidInput, "file:// URL without an absolute path",
                         redact_url(url));
  }
  return path;
}

std::string path_to_file_url(std::string_view path) {
  std::error_code ec;
  std::filesystem::path p(path);
  std::filesystem::path abs = p.is_absolute() ? p : std::filesystem::absolute(p, ec);
  std::string text = abs.lexically_normal().string();
  if (!path.empty() && path.back() == '/' && (text.empty() || text.back() != '/')) text += '/';
  return "file://" + percent_encode_path(text);
}

std::string url_from_user_input(std::string_view text) {
  UrlParts p = split_url(text);
  // A scheme of one letter is a Windows drive, not a URL; a path has no scheme at all.
  if (p.scheme.size() > 1) return std::string(text);
  return path_to_file_url(text);
}

}  // namespace gpulock::index
