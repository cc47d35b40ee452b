// PEP 503 HTML project pages (and find-links pages): a small tokenizer that reads what the
// Simple API puts in HTML (<a> with attributes, <meta>, <base>) and skips the rest. It accepts
// what browsers accept (any case, quoted or bare attribute values, entities) and fails only
// where the page cannot be read: a tag, comment or quoted value that never ends.

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include "gpulock/core/text.h"
#include "gpulock/index/parse.h"
#include "gpulock/index/url.h"

#include "html_stream.h"
#include "page_builder.h"
#include "page_stream.h"

namespace gpulock::index {
namespace {

// HTML's ASCII whitespace (no \v).
constexpr std::string_view kHtmlSpace = " \t\n\r\f";

// A feed's first NUL byte (kNoNul when none) and the '\n' bytes before it, 16 bytes at a time:
// the one pass over each feed that finds a binary page also counts the lines of the bytes the
// stream drops (the caller's bytes are gone after the feed, and std::count in a second pass
// over a huge page read whole was ~5% of its parse).
constexpr std::size_t kNoNul = std::string_view::npos;
struct ScannedBytes {
  std::size_t nul = kNoNul;
  std::size_t newlines = 0;
};
ScannedBytes scan_bytes(std::string_view text) noexcept {
  std::size_t count = 0;
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  bool nul = false;
  while (!nul && text.size() - i >= 16) {
    // Up to 255 blocks summed bytewise (each lane counts at most 255), then widened; a block
    // with a NUL is left to the byte loop.
    const std::size_t blocks = std::min<std::size_t>((text.size() - i) / 16, 255);
    __m128i sums = zero;
    for (std::size_t b = 0; b < blocks; ++b, i += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
      if (_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, zero)) != 0) {
        nul = true;
        break;
      }
      sums = _mm_sub_epi8(sums, _mm_cmpeq_epi8(bytes, newline));
    }
    const __m128i wide = _mm_sad_epu8(sums, zero);
    count += static_cast<std::size_t>(_mm_cvtsi128_si64(wide)) +
             static_cast<std::size_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(wide, wide)));
  }
#endif
  for (; i < text.size(); ++i) {
    if (text[i] == '\0') return {i, count};
    count += text[i] == '\n';
  }
  return {kNoNul, count};
}

// The '\n' bytes of `text`, which has no NUL (a stream holds none: the first ends the page).
std::size_t count_newlines(std::string_view text) noexcept {
  return scan_bytes(text).newlines;
}

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

// What a step of the tokenizer did: read its token (Done), found its token unfinished at the end
// of the bytes it has (Need: it runs again from the token's start once more bytes came), or
// failed (the error is kept).
enum class Step { Done, Need, Fail };

// The tokenizer reads a window of the page: the bytes fed and not read yet. A feed with nothing
// held is read where it is (parse_html_page's one feed copies nothing); the unfinished token at
// its end, if any, is copied to `held_`, and the next feed is appended there. A step never acts
// on a token before the token is complete: one that runs out of bytes waits for the next feed,
// and at finish() runs once more with "no more bytes", as reading the whole page did at its end.
class HtmlPageStream final : public detail::PageStream {
 public:
  HtmlPageStream(std::string_view page_url, const PageFilter& filter)
      : filter_(filter),
        page_url_(page_url),
        base_url_(page_url),
        resolver_(base_url_),
        classifier_(filter_) {
    page_.api_version = "1.0";
  }

  void feed(std::string_view bytes) override;
  void expect(std::uint64_t bytes) override {
    detail::reserve_files(page_.files, bytes);
    reserved_ = true;
  }
  core::Result<ProjectPage> finish() override;
  [[nodiscard]] detail::HeldBytes held() const noexcept {
    return {held_.size() - start_, held_.capacity()};
  }

 private:
  static constexpr std::size_t kNone = std::string_view::npos;

  std::size_t run(std::size_t pos);
  Step token(std::size_t& pos);
  Step element(std::string_view tag, std::size_t tag_start, std::size_t end, std::size_t& pos);
  Step script(std::string_view tag, std::size_t tag_start, std::size_t end, std::size_t& pos);
  Step read_attributes(std::size_t tag_start, std::size_t& pos);
  const Attribute* find(std::string_view name) const noexcept {
    for (const auto& a : attributes_) {
      if (core::iequals(a.name, name)) return &a;
    }
    return nullptr;
  }
  core::Status meta(std::size_t tag_start);
  void anchor(std::string_view text, std::size_t tag_start);
  void core_metadata(DistFile& file, const Attribute& a, std::size_t tag_start);

  // Where the scan of the token at `token` (in the window) starts: `from`, or past what an
  // earlier try at the same token already scanned.
  std::size_t resume(std::size_t token, std::size_t from) const noexcept {
    if (hint_token_ == w_base_ + token) return std::max(from, hint_ - w_base_);
    return from;
  }
  // The token at `token` is unfinished; its scan goes on at `scanned` next time.
  Step wait(std::size_t token, std::size_t scanned) noexcept {
    hint_token_ = w_base_ + token;
    hint_ = w_base_ + scanned;
    return Step::Need;
  }
  // '\n' in the window before `offset`.
  std::size_t newlines_to(std::size_t offset) const noexcept {
    return count_newlines(w_.substr(0, offset));
  }
  std::size_t line_of(std::size_t offset) const noexcept {
    return 1 + w_lines_ + newlines_to(offset);
  }
  core::Error error_at_line(std::size_t line, std::string message) const {
    return core::make_error(core::ErrorCode::IndexFormat,
                            fmt::format("invalid HTML project page: {}", message),
                            redact_url(page_url_), line);
  }
  std::unexpected<core::Error> error(std::size_t offset, std::string message) const {
    return std::unexpected(error_at_line(line_of(offset), std::move(message)));
  }
  Step fail(std::size_t offset, std::string message) {
    error_ = error_at_line(line_of(offset), std::move(message));
    return Step::Fail;
  }
  // After the window's first `consumed` bytes were read: drops them from `held_`, once they are
  // at least half of it, or all of it when all was read.
  void compact(std::size_t consumed);
  // The page failed: nothing more is read, only counted (a NUL byte later still wins).
  void drop_window();

  PageFilter filter_;
  std::string page_url_;
  std::string base_url_;
  UrlResolver resolver_;  // base_url_ split once, for the anchors' relative URLs
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
  bool saw_tag_ = false;
  bool saw_text_ = false;  // a byte other than whitespace
  bool reserved_ = false;
  std::optional<core::Error> error_;   // the first error reading the page
  std::optional<core::Error> binary_;  // a NUL byte: wins over any other error

  // The bytes held between feeds: [0, start_) read, [start_, size) not yet.
  std::string held_;
  std::size_t start_ = 0;
  std::size_t held_base_ = 0;   // the page offset of held_[0]
  std::size_t held_lines_ = 0;  // '\n' in the page before it
  // The window being read: held_ or a fed chunk.
  std::string_view w_;
  std::size_t w_base_ = 0;
  std::size_t w_lines_ = 0;
  bool final_ = false;  // no more bytes: finish()
  // How far an earlier try at an unfinished token scanned (page offsets).
  std::size_t hint_token_ = kNone;
  std::size_t hint_ = 0;
};

void HtmlPageStream::feed(std::string_view bytes) {
  if (binary_ || bytes.empty()) return;
  const ScannedBytes scanned = scan_bytes(bytes);
  if (scanned.nul != kNoNul) {
    const std::size_t lines = held_lines_ + count_newlines(held_) + scanned.newlines;
    binary_ = error_at_line(lines + 1, "binary data, not an HTML page");
    held_ = std::string();
    start_ = 0;
    return;
  }
  if (!saw_text_) saw_text_ = bytes.find_first_not_of(kHtmlSpace) != std::string_view::npos;
  if (error_) {
    held_lines_ += scanned.newlines;
    held_base_ += bytes.size();
    return;
  }
  if (!reserved_) expect(bytes.size());  // a page read in one piece
  if (start_ == held_.size()) {          // nothing held: read the chunk where it is
    held_.clear();
    start_ = 0;
    w_ = bytes;
    w_base_ = held_base_;
    w_lines_ = held_lines_;
    const std::size_t read = run(0);
    if (error_) return drop_window();
    held_.assign(bytes.substr(read));
    held_lines_ += scanned.newlines - count_newlines(held_);
    held_base_ += read;
  } else {
    held_.append(bytes);
    w_ = held_;
    w_base_ = held_base_;
    w_lines_ = held_lines_;
    const std::size_t read = run(start_);
    if (error_) return drop_window();
    compact(read);
  }
}

core::Result<ProjectPage> HtmlPageStream::finish() {
  if (binary_) return std::unexpected(*binary_);
  if (!error_) {
    final_ = true;
    w_ = held_;
    w_base_ = held_base_;
    w_lines_ = held_lines_;
    run(start_);
  }
  if (error_) return std::unexpected(*error_);
  if (!saw_tag_ && saw_text_) {
    return std::unexpected(error_at_line(1, "not an HTML page (no tags)"));
  }
  if (anchors_without_href_ > 0) {
    page_.warnings.push_back(fmt::format("ignored {} link{} without href", anchors_without_href_,
                                         anchors_without_href_ == 1 ? "" : "s"));
  }
  classifier_.finish(page_);
  page_.found = true;
  return std::move(page_);
}

void HtmlPageStream::compact(std::size_t consumed) {
  if (consumed == held_.size()) {
    held_lines_ += count_newlines(held_);
    held_base_ += held_.size();
    held_.clear();
    start_ = 0;
  } else if (consumed >= held_.size() - consumed) {
    held_lines_ += newlines_to(consumed);
    held_base_ += consumed;
    held_.erase(0, consumed);
    start_ = 0;
  } else {
    start_ = consumed;
  }
}

void HtmlPageStream::drop_window() {
  held_lines_ = w_lines_ + newlines_to(w_.size());
  held_base_ = w_base_ + w_.size();
  held_ = std::string();
  start_ = 0;
}

// Reads tokens from `pos`; returns where the unread bytes start (the window's size when all
// was read, else the start of an unfinished token or of the one that failed).
std::size_t HtmlPageStream::run(std::size_t pos) {
  const std::size_t n = w_.size();
  while (pos < n) {
    const char* lt = static_cast<const char*>(std::memchr(w_.data() + pos, '<', n - pos));
    if (!lt) return n;
    pos = static_cast<std::size_t>(lt - w_.data());
    const std::size_t at = pos;
    if (token(pos) != Step::Done) return at;
  }
  return n;
}

// The token at `pos` (a '<').
Step HtmlPageStream::token(std::size_t& pos) {
  const std::size_t n = w_.size();
  std::string_view rest = w_.substr(pos);
  // "<", "<!" or "<!-" may still become a comment.
  if (!final_ && rest.size() < 4 && std::string_view("<!--").starts_with(rest)) return Step::Need;
  if (rest.starts_with("<!--")) {
    auto end = w_.find("-->", resume(pos, pos + 4));
    if (end == std::string_view::npos) {
      if (!final_) return wait(pos, std::max(pos + 4, n - 2));
      return fail(pos, "unterminated comment '<!--'");
    }
    pos = end + 3;
    return Step::Done;
  }
  if (rest.starts_with("<!") || rest.starts_with("<?") || rest.starts_with("</")) {
    auto end = w_.find('>', resume(pos, pos + 2));
    if (end == std::string_view::npos) {
      if (!final_) return wait(pos, n);
      return fail(pos, "unterminated tag");
    }
    saw_tag_ = true;
    pos = end + 1;
    return Step::Done;
  }
  std::size_t name_end = pos + 1;
  while (name_end < n && ((w_[name_end] >= 'a' && w_[name_end] <= 'z') ||
                          (w_[name_end] >= 'A' && w_[name_end] <= 'Z') ||
                          (w_[name_end] >= '0' && w_[name_end] <= '9'))) {
    ++name_end;
  }
  if (name_end == n && !final_) return Step::Need;  // the name may go on
  if (name_end == pos + 1) {                        // "<" in text
    ++pos;
    return Step::Done;
  }
  saw_tag_ = true;
  std::string_view tag = w_.substr(pos + 1, name_end - pos - 1);
  const std::size_t tag_start = pos;
  attributes_.clear();
  std::size_t end = name_end;
  if (Step s = read_attributes(tag_start, end); s != Step::Done) return s;
  return element(tag, tag_start, end, pos);
}

// A complete start tag (`end` just after its '>'), with what follows it that belongs to it.
Step HtmlPageStream::element(std::string_view tag, std::size_t tag_start, std::size_t end,
                             std::size_t& pos) {
  const std::size_t n = w_.size();
  if (core::iequals(tag, "a")) {
    // The link text runs to the next tag (</a>).
    const std::size_t from = resume(tag_start, end);
    const char* next = static_cast<const char*>(std::memchr(w_.data() + from, '<', n - from));
    if (!next && !final_) return wait(tag_start, n);
    std::size_t text_end = next ? static_cast<std::size_t>(next - w_.data()) : n;
    anchor(w_.substr(end, text_end - end), tag_start);
    pos = text_end;
    return Step::Done;
  }
  if (core::iequals(tag, "script") || core::iequals(tag, "style")) {
    return script(tag, tag_start, end, pos);
  }
  if (core::iequals(tag, "meta")) {
    if (auto s = meta(tag_start); !s) {
      error_ = s.error();
      return Step::Fail;
    }
  } else if (core::iequals(tag, "base")) {
    if (const Attribute* href = find("href")) {
      base_url_ = resolve_url(page_url_, core::trim(decode_entities(href->raw), kHtmlSpace));
      resolver_ = UrlResolver(base_url_);
    }
  }
  pos = end;
  return Step::Done;
}

// A <script> or <style> element: skipped to its closing tag.
Step HtmlPageStream::script(std::string_view tag, std::size_t tag_start, std::size_t end,
                            std::size_t& pos) {
  const std::size_t n = w_.size();
  std::string closing = "</" + std::string(tag);
  std::size_t close = resume(tag_start, end);
  while (true) {
    close = w_.find("</", close);
    if (close == std::string_view::npos) {
      if (!final_) return wait(tag_start, std::max(end, n - 1));
      return fail(tag_start, fmt::format("unterminated <{}> element", tag));
    }
    if (!final_ && n - close < closing.size()) return wait(tag_start, close);
    if (core::iequals(w_.substr(close, closing.size()), closing)) break;
    close += 2;
  }
  pos = close;
  return Step::Done;
}

// Reads attributes from `pos` (just after the tag name) to the closing '>'; `pos` is then
// after it. Need when the window ends first (before finish()): a name or a bare value cut by
// the end of the window is read again, with the whole tag, once more bytes came.
Step HtmlPageStream::read_attributes(std::size_t tag_start, std::size_t& pos) {
  const std::size_t n = w_.size();
  const auto end_of_bytes = [&] {
    if (!final_) return Step::Need;
    return fail(tag_start, "unterminated tag (the page ends inside it)");
  };
  while (true) {
    while (pos < n && (detail::is_html_space(w_[pos]) || w_[pos] == '/'))
      ++pos;
    if (pos >= n) return end_of_bytes();
    if (w_[pos] == '>') {
      ++pos;
      return Step::Done;
    }
    std::size_t name_start = pos;
    while (pos < n && !detail::is_html_space(w_[pos]) && w_[pos] != '=' && w_[pos] != '>' &&
           !(w_[pos] == '/' && pos + 1 < n && w_[pos + 1] == '>')) {
      ++pos;
    }
    Attribute attr;
    attr.name = w_.substr(name_start, pos - name_start);
    while (pos < n && detail::is_html_space(w_[pos]))
      ++pos;
    if (pos < n && w_[pos] == '=') {
      ++pos;
      while (pos < n && detail::is_html_space(w_[pos]))
        ++pos;
      if (pos >= n) return end_of_bytes();
      char quote = w_[pos];
      if (quote == '"' || quote == '\'') {
        auto close = w_.find(quote, pos + 1);
        if (close == std::string_view::npos) {
          if (!final_) return Step::Need;
          return fail(pos, fmt::format("unterminated attribute value for '{}'", attr.name));
        }
        attr.raw = w_.substr(pos + 1, close - pos - 1);
        pos = close + 1;
      } else {
        std::size_t value_start = pos;
        while (pos < n && !detail::is_html_space(w_[pos]) && w_[pos] != '>')
          ++pos;
        attr.raw = w_.substr(value_start, pos - value_start);
      }
      attr.has_value = true;
    }
    attributes_.push_back(attr);
  }
}

core::Status HtmlPageStream::meta(std::size_t tag_start) {
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
  auto [p1, e1] = std::from_chars(major_text.data(), major_text.data() + major_text.size(), major);
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

void HtmlPageStream::anchor(std::string_view text, std::size_t tag_start) {
  const Attribute* href = find("href");
  if (!href || !href->has_value) {
    ++anchors_without_href_;
    return;
  }
  DistFile& file = page_.files.emplace_back();
  std::string full = resolver_.resolve(core::trim(decoded(href->raw, href_buffer_), kHtmlSpace));
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
                                             line_of(tag_start), core::quote_for_message(value)));
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

void HtmlPageStream::core_metadata(DistFile& file, const Attribute& a, std::size_t tag_start) {
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
                                         line_of(tag_start), a.name,
                                         core::quote_for_message(value)));
  }
}

}  // namespace

core::Result<ProjectPage> parse_html_page(std::string_view html, std::string_view page_url,
                                          const PageFilter& filter) {
  HtmlPageStream stream(page_url, filter);
  stream.feed(html);
  return stream.finish();
}

namespace detail {

std::unique_ptr<PageStream> html_page_stream(std::string_view page_url, const PageFilter& filter) {
  return std::make_unique<HtmlPageStream>(page_url, filter);
}

HeldBytes html_stream_held(const PageStream& stream) noexcept {
  return static_cast<const HtmlPageStream&>(stream).held();
}

}  // namespace detail

}  // namespace gpulock::index
