// PEP 503 HTML project pages (and find-links pages): a small tokenizer that reads what the
// Simple API puts in HTML (<a> with attributes, <meta>, <base>) and skips the rest. It accepts
// what browsers accept (any case, quoted or bare attribute values, entities) and fails only
// where the page cannot be read: a tag, comment or quoted value that never ends.

#include <charconv>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/core/text.h"
#include "gpulock/index/parse.h"
#include "gpulock/index/url.h"

#include "page_builder.h"

namespace gpulock::index {
namespace {

// HTML's ASCII whitespace (no \v).
constexpr std::string_view kHtmlSpace = " \t\n\r\f";

// A character reference's code point as UTF-8; NUL, surrogates and values past U+10FFFF
// become U+FFFD (HTML's rule).
void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  core::append_utf8(out, cp);
}

struct NamedEntity {
  std::string_view name;
  std::uint32_t code_point;
};
constexpr NamedEntity kEntities[] = {
    {"amp", '&'},    {"lt", '<'},     {"gt", '>'},   {"quot", '"'},   {"apos", '\''},
    {"nbsp", 0xA0},  {"equals", '='}, {"plus", '+'}, {"num", '#'},    {"percnt", '%'},
    {"sol", '/'},    {"colon", ':'},  {"semi", ';'}, {"comma", ','},  {"period", '.'},
    {"excl", '!'},   {"quest", '?'},  {"lpar", '('}, {"rpar", ')'},   {"tilde", '~'},
    {"lowbar", '_'}, {"hyphen", '-'}, {"ast", '*'},  {"commat", '@'},
};

// HTML character references: named (the common ones) and numeric; unknown ones stay as written.
std::string decode_entities(std::string_view text) {
  if (text.find('&') == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c != '&') {
      out.push_back(c);
      ++i;
      continue;
    }
    auto semi = text.find(';', i + 1);
    if (semi == std::string_view::npos || semi - i > 12) {
      out.push_back(c);
      ++i;
      continue;
    }
    std::string_view body = text.substr(i + 1, semi - i - 1);
    bool done = false;
    if (body.size() >= 2 && body[0] == '#') {
      std::uint32_t cp = 0;
      std::string_view digits = body.substr(1);
      int base = 10;
      if (!digits.empty() && (digits[0] == 'x' || digits[0] == 'X')) {
        digits.remove_prefix(1);
        base = 16;
      }
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cp, base);
      if (ec == std::errc{} && ptr == digits.data() + digits.size() && !digits.empty()) {
        append_utf8(out, cp);
        done = true;
      }
    } else {
      for (const auto& e : kEntities) {
        if (body == e.name) {
          append_utf8(out, e.code_point);
          done = true;
          break;
        }
      }
    }
    if (done) {
      i = semi + 1;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

// `text` with its character references decoded: `text` itself when it has none (nearly
// always), else decoded into `buffer`, which the caller reuses from one value to the next.
std::string_view decoded(std::string_view text, std::string& buffer) {
  if (text.find('&') == std::string_view::npos) return text;
  buffer = decode_entities(text);
  return buffer;
}

struct Attribute {
  std::string_view name;  // as written; compare with iequals
  std::string_view raw;   // undecoded value
  bool has_value = false;
};

class HtmlPageParser {
 public:
  HtmlPageParser(std::string_view html, std::string_view page_url, const PageFilter& filter,
                 bool release)
      : html_(html),
        read_(html, release),
        page_url_(page_url),
        base_url_(page_url),
        classifier_(filter) {}

  core::Result<ProjectPage> parse() {
    if (html_.find('\0') != std::string_view::npos) {
      return error(html_.find('\0'), "binary data, not an HTML page");
    }
    page_.api_version = "1.0";
    // Room for the files at once (a PEP 503 anchor takes ~200-400 bytes): growing the vector
    // by doubling moves every file and holds the old and the new at once.
    page_.files.reserve(html_.size() / 192 + 4);
    bool saw_tag = false;
    std::size_t pos = 0;
    const std::size_t n = html_.size();
    while (pos < n) {
      read_.passed(pos);
      const char* lt = static_cast<const char*>(std::memchr(html_.data() + pos, '<', n - pos));
      if (!lt) break;
      pos = static_cast<std::size_t>(lt - html_.data());
      std::string_view rest = html_.substr(pos);
      if (rest.starts_with("<!--")) {
        auto end = html_.find("-->", pos + 4);
        if (end == std::string_view::npos) return error(pos, "unterminated comment '<!--'");
        pos = end + 3;
        continue;
      }
      if (rest.starts_with("<!") || rest.starts_with("<?") || rest.starts_with("</")) {
        auto end = html_.find('>', pos + 2);
        if (end == std::string_view::npos) return error(pos, "unterminated tag");
        saw_tag = true;
        pos = end + 1;
        continue;
      }
      std::size_t name_end = pos + 1;
      while (name_end < n && ((html_[name_end] >= 'a' && html_[name_end] <= 'z') ||
                              (html_[name_end] >= 'A' && html_[name_end] <= 'Z') ||
                              (html_[name_end] >= '0' && html_[name_end] <= '9'))) {
        ++name_end;
      }
      if (name_end == pos + 1) {  // "<" in text
        ++pos;
        continue;
      }
      saw_tag = true;
      std::string_view tag = html_.substr(pos + 1, name_end - pos - 1);
      std::size_t tag_start = pos;
      attributes_.clear();
      auto end = read_attributes(name_end);
      if (!end) return std::unexpected(end.error());
      pos = *end;
      if (core::iequals(tag, "a")) {
        // The link text runs to the next tag (</a>).
        const char* next = static_cast<const char*>(std::memchr(html_.data() + pos, '<', n - pos));
        std::size_t text_end = next ? static_cast<std::size_t>(next - html_.data()) : n;
        anchor(html_.substr(pos, text_end - pos), tag_start);
        pos = text_end;
      } else if (core::iequals(tag, "meta")) {
        if (auto s = meta(tag_start); !s) return std::unexpected(s.error());
      } else if (core::iequals(tag, "base")) {
        if (const Attribute* href = find("href")) {
          base_url_ = resolve_url(page_url_, core::trim(decode_entities(href->raw), kHtmlSpace));
        }
      } else if (core::iequals(tag, "script") || core::iequals(tag, "style")) {
        std::string closing = "</" + std::string(tag);
        std::size_t close = pos;
        while (true) {
          close = html_.find("</", close);
          if (close == std::string_view::npos)
            return error(tag_start, fmt::format("unterminated <{}> element", tag));
          if (core::iequals(html_.substr(close, closing.size()), closing)) break;
          close += 2;
        }
        pos = close;
      }
    }
    if (!saw_tag && !core::trim(html_, kHtmlSpace).empty())
      return error(0, "not an HTML page (no tags)");
    if (anchors_without_href_ > 0) {
      page_.warnings.push_back(fmt::format("ignored {} link{} without href", anchors_without_href_,
                                           anchors_without_href_ == 1 ? "" : "s"));
    }
    classifier_.finish(page_);
    page_.found = true;
    return std::move(page_);
  }

 private:
  // Reads attributes from `pos` (just after the tag name) to the closing '>', returns the
  // position after it.
  core::Result<std::size_t> read_attributes(std::size_t pos) {
    const std::size_t n = html_.size();
    const std::size_t tag_start = html_.rfind('<', pos);
    while (true) {
      while (pos < n && (detail::is_html_space(html_[pos]) || html_[pos] == '/'))
        ++pos;
      if (pos >= n) return error(tag_start, "unterminated tag (the page ends inside it)");
      if (html_[pos] == '>') return pos + 1;
      std::size_t name_start = pos;
      while (pos < n && !detail::is_html_space(html_[pos]) && html_[pos] != '=' &&
             html_[pos] != '>' && !(html_[pos] == '/' && pos + 1 < n && html_[pos + 1] == '>')) {
        ++pos;
      }
      Attribute attr;
      attr.name = html_.substr(name_start, pos - name_start);
      while (pos < n && detail::is_html_space(html_[pos]))
        ++pos;
      if (pos < n && html_[pos] == '=') {
        ++pos;
        while (pos < n && detail::is_html_space(html_[pos]))
          ++pos;
        if (pos >= n) return error(tag_start, "unterminated tag (the page ends inside it)");
        char quote = html_[pos];
        if (quote == '"' || quote == '\'') {
          auto close = html_.find(quote, pos + 1);
          if (close == std::string_view::npos) {
            return error(pos, fmt::format("unterminated attribute value for '{}'", attr.name));
          }
          attr.raw = html_.substr(pos + 1, close - pos - 1);
          pos = close + 1;
        } else {
          std::size_t value_start = pos;
          while (pos < n && !detail::is_html_space(html_[pos]) && html_[pos] != '>')
            ++pos;
          attr.raw = html_.substr(value_start, pos - value_start);
        }
        attr.has_value = true;
      }
      attributes_.push_back(attr);
    }
  }

  const Attribute* find(std::string_view name) const noexcept {
    for (const auto& a : attributes_) {
      if (core::iequals(a.name, name)) return &a;
    }
    return nullptr;
  }

  core::Status meta(std::size_t tag_start) {
    const Attribute* name = find("name");
    const Attribute* content = find("content");
    if (!name || !content) return {};
    if (!core::iequals(core::trim(name->raw, kHtmlSpace), "pypi:repository-version")) return {};
    std::string version(core::trim(decode_entities(content->raw), kHtmlSpace));
    page_.api_version = version;
    std::string_view v = version;
    auto dot = v.find('.');
    std::string_view major_text = v.substr(0, dot);
    unsigned major = 0, minor = 0;
    auto [p1, e1] =
        std::from_chars(major_text.data(), major_text.data() + major_text.size(), major);
    bool ok = e1 == std::errc{} && p1 == major_text.data() + major_text.size();
    if (ok && dot != std::string_view::npos) {
      std::string_view minor_text = v.substr(dot + 1);
      auto [p2, e2] =
          std::from_chars(minor_text.data(), minor_text.data() + minor_text.size(), minor);
      ok = e2 == std::errc{} && p2 == minor_text.data() + minor_text.size();
    }
    if (!ok) {
      return error(tag_start, fmt::format("invalid pypi:repository-version {}",
                                          core::quote_for_message(version)));
    }
    if (major != 1) {
      return error(tag_start, fmt::format("unsupported repository API version {} (gpulock reads "
                                          "1.x, PEP 629)",
                                          version));
    }
    if (minor > 4) {
      page_.warnings.push_back(fmt::format(
          "repository API version {} is newer than 1.4; reading it as 1.4 (PEP 629)", version));
    }
    return {};
  }

  void anchor(std::string_view text, std::size_t tag_start) {
    const Attribute* href = find("href");
    if (!href || !href->has_value) {
      ++anchors_without_href_;
      return;
    }
    DistFile& file = page_.files.emplace_back();
    std::string full =
        resolve_url(base_url_, core::trim(decoded(href->raw, href_buffer_), kHtmlSpace));
    UrlParts parts = split_url(full);
    if (parts.has_fragment && !parts.fragment.empty()) {
      detail::add_hash_pair(parts.fragment, file, false);
    }
    std::string_view url = strip_fragment(full);
    std::string filename = url_basename(url);
    if (filename.empty()) filename = std::string(core::trim(decode_entities(text), kHtmlSpace));
    std::string_view requires_python;
    std::string yanked_reason;

    for (const auto& a : attributes_) {
      if (core::iequals(a.name, "data-requires-python")) {
        requires_python = core::trim(decoded(a.raw, requires_python_buffer_), kHtmlSpace);
      } else if (core::iequals(a.name, "data-yanked")) {
        file.set_yanked(true);
        yanked_reason = detail::printable_index_text(decode_entities(a.raw));
      } else if (core::iequals(a.name, "data-core-metadata")) {
        core_metadata(file, a, tag_start);
        saw_core_metadata_ = true;
      } else if (core::iequals(a.name, "data-upload-time")) {
        std::string value = decode_entities(a.raw);
        auto time = parse_timestamp(core::trim(value, kHtmlSpace));
        file.set_upload_time(time);
        if (!time && !bad_upload_time_) {
          bad_upload_time_ = true;
          page_.warnings.push_back(fmt::format("line {}: ignoring invalid data-upload-time {}",
                                               read_.line_of(tag_start),
                                               core::quote_for_message(value)));
        }
      } else if (core::iequals(a.name, "data-size")) {
        std::uint64_t size = 0;
        std::string_view v = core::trim(a.raw, kHtmlSpace);
        auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), size);
        if (ec == std::errc{} && ptr == v.data() + v.size()) file.set_size(size);
      }
    }
    file.set_text(filename, url, requires_python, yanked_reason);
    // PEP 714: the legacy name counts only when the new one is absent.
    if (!saw_core_metadata_) {
      if (const Attribute* legacy = find("data-dist-info-metadata")) {
        core_metadata(file, *legacy, tag_start);
      }
    }
    saw_core_metadata_ = false;
    if (!classifier_.accept(file)) page_.files.pop_back();
  }

  void core_metadata(DistFile& file, const Attribute& a, std::size_t tag_start) {
    std::string value(core::trim(decode_entities(a.raw), kHtmlSpace));
    file.clear_core_metadata_hashes();
    if (!a.has_value || core::iequals(value, "true") || value.empty()) {
      file.set_core_metadata(true);
      return;
    }
    if (core::iequals(value, "false")) {
      file.set_core_metadata(false);
      return;
    }
    if (detail::add_hash_pair(value, file, true)) {
      file.set_core_metadata(true);
      return;
    }
    file.set_core_metadata(true);  // advertised, with a hash we cannot read: fetch, do not verify
    if (!bad_core_metadata_) {
      bad_core_metadata_ = true;
      page_.warnings.push_back(fmt::format("line {}: ignoring unreadable {} value {}",
                                           read_.line_of(tag_start), a.name,
                                           core::quote_for_message(value)));
    }
  }

  std::unexpected<core::Error> error(std::size_t offset, std::string message) const {
    return core::fail_at(core::ErrorCode::IndexFormat,
                         fmt::format("invalid HTML project page: {}", message),
                         redact_url(page_url_), read_.line_of(offset));
  }

  std::string_view html_;
  detail::ReadBytes read_;
  std::string page_url_;
  std::string base_url_;
  detail::FileClassifier classifier_;
  ProjectPage page_;
  std::vector<Attribute> attributes_;
  std::size_t anchors_without_href_ = 0;
  // Reused by each anchor for its decoded href and data-requires-python (decoded).
  std::string href_buffer_;
  std::string requires_python_buffer_;
  bool saw_core_metadata_ = false;
  bool bad_upload_time_ = false;
  bool bad_core_metadata_ = false;
};

}  // namespace

core::Result<ProjectPage> parse_html_page(std::string_view html, std::string_view page_url,
                                          const PageFilter& filter) {
  HtmlPageParser parser(html, page_url, filter, false);
  return parser.parse();
}

namespace detail {
core::Result<ProjectPage> parse_html_page_releasing(std::string& html, std::string_view page_url,
                                                    const PageFilter& filter) {
  HtmlPageParser parser(html, page_url, filter, true);
  return parser.parse();
}
}  // namespace detail

}  // namespace gpulock::index
