// PEP 691 JSON project pages with simdjson On-Demand, read as they arrive (page_stream.h): each
// element of "files" is its own small document, read into owned structs as soon as the splitter
// (json_splitter.h) has it; the rest of the page, the skeleton, is one document read at the end.
//
// BEWARE: On-Demand rules. The document is a forward-only iterator over the padded buffer:
//  - each value can be read once, and only while its parent is current: read a field's value
//    before moving to the next field, never keep a `value`/`object` across iterations;
//  - a field that is not read is skipped automatically when the loop advances;
//  - string_views from get_string() point into the parser's string buffer, which the next
//    document reuses: copy them into owned strings before the parser parses anything else;
//  - the input buffer needs SIMDJSON_PADDING readable bytes past its end and must stay alive
//    (and unmodified) for as long as the document is iterated;
//  - an error inside a value poisons the iterator: stop and report it.

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "gpulock/core/text.h"
#include "gpulock/index/parse.h"
#include "gpulock/index/url.h"

#include "json_splitter.h"
#include "page_builder.h"
#include "page_stream.h"

namespace gpulock::index {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

constexpr std::string_view kSha256 = "sha256";
// Pages up to this size share a per-thread simdjson parser; larger ones get their own.
constexpr std::size_t kSharedParserMax = std::size_t{16} << 20;

// Where the parser is, for error messages: "files[12].hashes.sha256".
struct JsonPath {
  const char* top = nullptr;
  std::size_t index = 0;
  bool in_array = false;
  std::string_view field;
  std::string_view sub;

  [[nodiscard]] std::string str() const {
    std::string out = top ? top : "(root)";
    if (in_array) out += fmt::format("[{}]", index);
    if (!field.empty()) {
      out += '.';
      out += field;
    }
    if (!sub.empty()) {
      out += '.';
      out += sub;
    }
    return out;
  }
};

// A page's JSON as it arrives: the splitter hands over each element of "files" as soon as it is
// in, which is read at once (into the page, or into the failure that whole-page reading would
// have reported at that element), and keeps the rest as the skeleton, read at the end with the
// elements' outcomes replayed at their placeholders: the checks run in page order, as they did
// over the whole page.
class JsonPageStream final : public detail::PageStream, private detail::JsonSplitter::Sink {
 public:
  JsonPageStream(std::string_view page_url, const PageFilter& filter)
      : page_url_(page_url), resolver_(page_url_), filter_(filter), classifier_(filter_) {}

  void feed(std::string_view bytes) override {
    if (!reserved_) expect(bytes.size());  // a page read in one piece
    splitter_.feed(bytes, *this);
  }
  void expect(std::uint64_t bytes) override {
    detail::reserve_files(page_.files, bytes);
    reserved_ = true;
  }

  core::Result<ProjectPage> finish() override {
    splitter_.finish();
    if (splitter_.overflowed()) {
      // Over 64 MiB that are not a PEP 691 page's structure (a gzip bomb's zeros, a page with
      // something else appended): refused without reading them.
      const std::size_t line = splitter_.rest_line();
      return core::fail_at(
          core::ErrorCode::IndexFormat,
          splitter_.root_closed()
              ? fmt::format("invalid PEP 691 page: over {} MiB follow the JSON object, which "
                            "ends on line {}",
                            detail::JsonSplitter::kMaxRest >> 20, line)
              : fmt::format("invalid PEP 691 page: not valid JSON at line {} (over {} MiB follow "
                            "that were not read)",
                            line, detail::JsonSplitter::kMaxRest >> 20),
          redact_url(page_url_), line);
    }
    std::string& skeleton = splitter_.skeleton();
    skeleton.reserve(skeleton.size() + simdjson::SIMDJSON_PADDING);
    text_ = {skeleton, 1, 0};
    return parse(
        simdjson::padded_string_view(skeleton.data(), skeleton.size(), skeleton.capacity()));
  }

  // For tests: bytes held for an unfinished element.
  [[nodiscard]] std::size_t held() const noexcept { return splitter_.held(); }

 private:
  // The strings of one file object, until it is read.
  struct FileText {
    std::string_view filename, url, requires_python, yanked_reason;
  };
  // What a document is in the page, for error lines: its text and the line it starts on.
  struct DocText {
    std::string_view text;
    std::size_t first_line = 1;  // 0: an element's, counted when needed
    std::size_t gap_lines = 0;   // to the next token after it in the page
  };
  // The first element whose reading failed, with the error that goes out when the skeleton's
  // reading reaches its placeholder; a warning an element gave, likewise.
  struct AtElement {
    std::size_t array = 0, index = 0;
  };

  static od::parser& parser_for(std::size_t size, std::optional<od::parser>& own) {
    // One parser per thread: it keeps its buffers between documents. A huge one gets its own,
    // whose buffers (4 bytes of structural index per byte, partly touched) go with it rather
    // than staying resident for the rest of the run.
    thread_local od::parser shared_parser;
    return size > kSharedParserMax ? own.emplace() : shared_parser;
  }

  void element(const detail::JsonSplitter::Element& e) override {
    std::optional<od::parser> own;
    od::parser& parser = parser_for(e.text.size(), own);
    od::document doc;
    simdjson::padded_string_view view(e.text.data(), e.text.size(), e.readable);
    if (auto err = parser.iterate(view).get(doc)) {
      // As the whole page's first pass would have: before anything else, without a line.
      if (!invalid_) invalid_ = err;
      return;
    }
    if (failure_) return;  // only an invalid byte can still change the answer
    const AtElement at{splitter_.arrays().size() - 1, e.index};
    const std::size_t warnings = page_.warnings.size();
    path_ = {};
    path_.top = "files";
    path_.in_array = true;
    path_.index = e.index;
    text_ = {e.text, 0, e.gap_lines};  // its first line is counted only if it fails (fail())
    auto failed = read_file(doc);
    if (failed) {
      failure_ = std::move(failed);
      failure_at_ = at;
    } else if (page_.warnings.size() > warnings) {
      element_warning_ = std::move(page_.warnings.back());
      page_.warnings.pop_back();
      warning_at_ = at;
    }
  }

  // One element of "files": into the page (or dropped by the filter), or the failure.
  std::optional<core::Error> read_file(od::document& doc) {
    od::object object;
    expected_ = "expected an object";
    error_code err = doc.get_object().get(object);
    DistFile* file = nullptr;
    FileText text;
    if (!err) {
      file = &page_.files.emplace_back();
      err = parse_file(object, *file, text);
    }
    const char* after = nullptr;
    if (!err && !doc.current_location().get(after)) err = simdjson::TAPE_ERROR;  // a second value
    if (err) return error(doc, err, expected_).error();
    if (std::string missing = keep_file(*file, text); !missing.empty())
      return fail(doc, missing).error();
    return std::nullopt;
  }

  // A file object read whole: its text stored and the filter asked (the page's last file, which
  // it may drop); what it lacks instead ("files[3]: missing 'url'"), or "".
  std::string keep_file(DistFile& file, const FileText& text) {
    if (text.filename.empty()) return fmt::format("{}: missing 'filename'", path_.str());
    if (text.url.empty()) return fmt::format("{}: missing 'url'", path_.str());
    file.set_text(text.filename, text.url, text.requires_python, text.yanked_reason);
    if (!classifier_.accept(file)) page_.files.pop_back();
    return {};
  }

  core::Result<ProjectPage> parse(simdjson::padded_string_view view) {
    std::optional<od::parser> own;
    od::parser& parser = parser_for(view.length(), own);
    od::document doc;
    error_code err = parser.iterate(view).get(doc);
    if (!err && invalid_) err = invalid_;
    if (err) {
      // The document never started, so it has no location; a document that ends early is
      // reported at its last line.
      std::size_t line = 0;
      if (err == simdjson::UNCLOSED_STRING || err == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
        line = 1 + detail::count_newlines(text_.text);
      }
      return core::fail_at(
          core::ErrorCode::IndexFormat,
          fmt::format("invalid PEP 691 page: not valid JSON ({})", simdjson::error_message(err)),
          redact_url(page_url_), line);
    }
    od::object root;
    if (auto e = doc.get_object().get(root)) {
      return fail(doc, e == simdjson::INCORRECT_TYPE
                           ? "not a JSON object"
                           : fmt::format("not valid JSON ({})", simdjson::error_message(e)));
    }
    page_.api_version = "1.0";
    for (auto field_result : root) {
      path_ = {};
      od::field field;
      if (auto e = std::move(field_result).get(field)) return error(doc, e, "not valid JSON");
      od::raw_json_string key = field.key();
      od::value value = field.value();
      error_code e = simdjson::SUCCESS;
      if (key == "files") {
        path_.top = "files";
        e = parse_files(value);
        if (replayed_failure_) return std::unexpected(std::move(*failure_));
      } else if (key == "meta") {
        path_.top = "meta";
        e = parse_meta(value);
      } else if (key == "name") {
        path_.top = "name";
        std::string_view name;
        e = value.get_string().get(name);
        if (!e) page_.name.assign(name);
      } else if (key == "versions") {
        path_.top = "versions";
        e = parse_versions(value);
      }
      if (e) return error(doc, e, expected_);
      if (!fatal_.empty()) return fail(doc, fatal_);
    }
    classifier_.finish(page_);
    page_.found = true;
    return std::move(page_);
  }

  // A "files" array of the skeleton: its first elements were read as they arrived (their
  // outcomes replayed here, in order), the rest are read now.
  error_code parse_files(od::value& value) {
    od::array array;
    expected_ = "expected an array";
    SIMDJSON_TRY(value.get_array().get(array));
    const std::size_t number = arrays_seen_++;
    const auto& arrays = splitter_.arrays();
    const std::size_t split = number < arrays.size() ? arrays[number] : 0;
    path_.in_array = true;
    path_.index = 0;
    for (auto item : array) {
      path_.field = {};
      if (path_.index < split) {
        if (failure_ && failure_at_.array == number && failure_at_.index == path_.index) {
          replayed_failure_ = true;
          return simdjson::SUCCESS;
        }
        if (element_warning_ && warning_at_.array == number && warning_at_.index == path_.index) {
          page_.warnings.push_back(std::move(*element_warning_));
          element_warning_.reset();
        }
        ++path_.index;
        continue;
      }
      od::object object;
      expected_ = "expected an object";
      SIMDJSON_TRY(item.get_object().get(object));
      // Built in place, strings collected as views and stored once the object is read.
      DistFile& file = page_.files.emplace_back();
      FileText text;
      SIMDJSON_TRY(parse_file(object, file, text));
      fatal_ = keep_file(file, text);
      if (!fatal_.empty()) return simdjson::SUCCESS;
      ++path_.index;
    }
    path_.in_array = false;
    path_.field = {};
    return simdjson::SUCCESS;
  }

 private:
  error_code parse_meta(od::value& value) {
    od::object meta;
    expected_ = "expected an object";
    SIMDJSON_TRY(value.get_object().get(meta));
    for (auto field_result : meta) {
      od::field field;
      SIMDJSON_TRY(std::move(field_result).get(field));
      if (field.key() == "api-version") {
        path_.field = "api-version";
        expected_ = "expected a string";
        std::string_view v;
        SIMDJSON_TRY(field.value().get_string().get(v));
        page_.api_version.assign(v);
        check_api_version();
        path_.field = {};
      }
    }
    return simdjson::SUCCESS;
  }

  void check_api_version() {
    std::string_view v = page_.api_version;
    auto dot = v.find('.');
    std::string_view major_text = v.substr(0, dot);
    std::string_view minor_text =
        dot == std::string_view::npos ? std::string_view{} : v.substr(dot + 1);
    unsigned major = 0, minor = 0;
    auto [p1, e1] =
        std::from_chars(major_text.data(), major_text.data() + major_text.size(), major);
    auto [p2, e2] =
        std::from_chars(minor_text.data(), minor_text.data() + minor_text.size(), minor);
    if (e1 != std::errc{} || p1 != major_text.data() + major_text.size() ||
        (dot != std::string_view::npos &&
         (e2 != std::errc{} || p2 != minor_text.data() + minor_text.size()))) {
      fatal_ = fmt::format("meta.api-version: invalid repository API version {}",
                           core::quote_for_message(v));
      return;
    }
    if (major != 1) {
      fatal_ = fmt::format(
          "meta.api-version: unsupported repository API version {} (gpulock reads 1.x, PEP 629)",
          v);
      return;
    }
    if (minor > 4) {
      page_.warnings.push_back(fmt::format(
          "repository API version {} is newer than 1.4; reading it as 1.4 (PEP 629)", v));
    }
  }

  error_code parse_versions(od::value& value) {
    od::array array;
    expected_ = "expected an array";
    SIMDJSON_TRY(value.get_array().get(array));
    path_.in_array = true;
    path_.index = 0;
    for (auto item : array) {
      std::string_view v;
      expected_ = "expected a string";
      SIMDJSON_TRY(item.get_string().get(v));
      page_.versions.emplace_back(v);
      ++path_.index;
    }
    path_.in_array = false;
    return simdjson::SUCCESS;
  }

  // A string value without copying: a view of the page bytes between the quotes when the string
  // has no escapes (nearly always), else unescaped into the parser's string buffer. Either
  // stays valid while the document is iterated. Reading the raw token keeps simdjson from
  // writing every string of a huge page into its string buffer.
  static error_code get_text(od::value& value, std::string_view& out) {
    std::string_view token = value.raw_json_token();
    if (token.empty() || token.front() != '"') return simdjson::INCORRECT_TYPE;
    // The token runs to the closing quote, then any spaces before the next token.
    std::size_t end = token.size();
    while (end > 1 && token[end - 1] != '"')
      --end;
    std::string_view inner = token.substr(1, end - 2);
    if (end >= 2 && inner.find('\\') == std::string_view::npos) {
      out = inner;
      return simdjson::SUCCESS;
    }
    return value.get_string().get(out);
  }

  error_code parse_hashes(od::value& value, DistFile& file, bool core_metadata) {
    od::object object;
    expected_ = "expected an object";
    SIMDJSON_TRY(value.get_object().get(object));
    for (auto field_result : object) {
      od::field field;
      SIMDJSON_TRY(std::move(field_result).get(field));
      std::string_view algo;
      if (field.key() == "sha256") {
        algo = kSha256;  // nearly every hash: no unescaping, no lowercasing of the key
      } else {
        SIMDJSON_TRY(field.unescaped_key().get(algo));
      }
      path_.sub = algo;
      // Hash names as the HTML parser accepts them (hashlib names: letters, digits, '-', '_').
      expected_ = "expected a hash name of letters, digits, '-' and '_'";
      if (algo.empty()) return simdjson::INCORRECT_TYPE;
      for (char c : algo) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        if (!ok) return simdjson::INCORRECT_TYPE;
      }
      if (algo.data() != kSha256.data()) {
        detail::assign_lower(algo_lower_, algo);
        algo = algo_lower_;
      }
      std::string_view hex;
      expected_ = "expected a string";
      SIMDJSON_TRY(get_text(field.value(), hex));
      // PEP 691: hex digests. The HTML parser drops a fragment that is not hex; here, as for a
      // value of the wrong type, the page is refused rather than a digest that can never match
      // being kept (and written into a lock).
      expected_ = "expected a hexadecimal digest";
      if (algo.data() == kSha256.data() && hex.size() == 64) {
        // Nearly every digest: decoded straight from the page to its 32 bytes.
        std::array<std::uint8_t, 32> digest;
        if (!detail::decode_hex32(hex, digest)) return simdjson::INCORRECT_TYPE;
        if (core_metadata) {
          file.add_core_metadata_sha256(digest);
        } else {
          file.add_sha256(digest);
        }
        path_.sub = {};
        continue;
      }
      if (!detail::all_hex(hex)) return simdjson::INCORRECT_TYPE;
      detail::assign_lower(hex_lower_, hex);
      if (core_metadata) {
        file.add_core_metadata_hash(algo, hex_lower_);
      } else {
        file.add_hash(algo, hex_lower_);
      }
      path_.sub = {};
    }
    return simdjson::SUCCESS;
  }

  // core-metadata / dist-info-metadata: false | true | {algo: hex}.
  error_code parse_core_metadata(od::value& value, DistFile& file) {
    od::json_type type;
    SIMDJSON_TRY(value.type().get(type));
    if (type == od::json_type::boolean) {
      bool b = false;
      SIMDJSON_TRY(value.get_bool().get(b));
      file.set_core_metadata(b);
      file.clear_core_metadata_hashes();
      return simdjson::SUCCESS;
    }
    if (type == od::json_type::null) {
      file.set_core_metadata(false);
      return simdjson::SUCCESS;
    }
    expected_ = "expected a boolean or an object of hashes";
    if (type != od::json_type::object) return simdjson::INCORRECT_TYPE;
    file.set_core_metadata(true);
    file.clear_core_metadata_hashes();
    return parse_hashes(value, file, true);
  }

  error_code parse_file(od::object& object, DistFile& file, FileText& out) {
    bool saw_core_metadata = false;
    for (auto field_result : object) {
      od::field field;
      SIMDJSON_TRY(std::move(field_result).get(field));
      od::raw_json_string key = field.key();
      od::value& value = field.value();
      std::string_view text;
      if (key == "filename") {
        path_.field = "filename";
        expected_ = "expected a string";
        SIMDJSON_TRY(get_text(value, out.filename));
      } else if (key == "url") {
        path_.field = "url";
        expected_ = "expected a string";
        SIMDJSON_TRY(get_text(value, text));
        out.url = absolute_url(text);
      } else if (key == "hashes") {
        path_.field = "hashes";
        SIMDJSON_TRY(parse_hashes(value, file, false));
      } else if (key == "requires-python") {
        path_.field = "requires-python";
        bool is_null = false;
        SIMDJSON_TRY(value.is_null().get(is_null));
        if (!is_null) {
          expected_ = "expected a string or null";
          SIMDJSON_TRY(get_text(value, out.requires_python));
        }
      } else if (key == "core-metadata") {
        path_.field = "core-metadata";
        saw_core_metadata = true;
        SIMDJSON_TRY(parse_core_metadata(value, file));
      } else if (key == "dist-info-metadata" || key == "data-dist-info-metadata") {
        // PEP 714: read the new key when present; the old one is a fallback.
        path_.field = "dist-info-metadata";
        if (!saw_core_metadata) {
          SIMDJSON_TRY(parse_core_metadata(value, file));
        }
      } else if (key == "yanked") {
        path_.field = "yanked";
        od::json_type type;
        SIMDJSON_TRY(value.type().get(type));
        if (type == od::json_type::boolean) {
          bool b = false;
          SIMDJSON_TRY(value.get_bool().get(b));
          file.set_yanked(b, {});
          // A key given twice counts as its last value: a reason read before goes with it.
          out.yanked_reason = {};
        } else if (type == od::json_type::string) {
          SIMDJSON_TRY(get_text(value, text));
          file.set_yanked(true, {});
          reason_ = detail::printable_index_text(text);
          out.yanked_reason = reason_;
        } else if (type != od::json_type::null) {
          expected_ = "expected a boolean or a string";
          return simdjson::INCORRECT_TYPE;
        }
      } else if (key == "size") {
        path_.field = "size";
        bool is_null = false;
        SIMDJSON_TRY(value.is_null().get(is_null));
        if (!is_null) {
          std::uint64_t size = 0;
          expected_ = "expected a non-negative integer";
          SIMDJSON_TRY(value.get_uint64().get(size));
          file.set_size(size);
        }
      } else if (key == "upload-time") {
        path_.field = "upload-time";
        bool is_null = false;
        SIMDJSON_TRY(value.is_null().get(is_null));
        if (!is_null) {
          expected_ = "expected a string or null";
          SIMDJSON_TRY(get_text(value, text));
          auto time = parse_timestamp(text);
          file.set_upload_time(time);
          if (!time && !bad_upload_time_) {
            bad_upload_time_ = true;
            page_.warnings.push_back(fmt::format(
                "{}: ignoring invalid upload-time {} (expected yyyy-mm-ddThh:mm:ss.ffffffZ)",
                path_.str(), core::quote_for_message(text)));
          }
        }
      }
      path_.field = {};
    }
    return simdjson::SUCCESS;
  }

  // The file URL to store: a view of `text` when it is already absolute and plain, else
  // resolved into url_ (valid until the next file's URL).
  std::string_view absolute_url(std::string_view text) {
    // An absolute http(s) URL without a fragment and without dot segments ("/." never
    // occurs) is kept as is; anything else goes through strip_fragment and resolve_url.
    if ((text.starts_with("https://") || text.starts_with("http://")) &&
        plain_absolute_tail(text)) {
      return text;
    }
    std::string_view no_fragment = strip_fragment(text);
    if (no_fragment.starts_with("https://") || no_fragment.starts_with("http://")) {
      if (no_fragment.find("/.") == std::string_view::npos) return no_fragment;
    }
    url_ = resolver_.resolve(no_fragment);
    return url_;
  }

  // True when `text` has no '#' and no "/." : one pass, 16 bytes at a time.
  static bool plain_absolute_tail(std::string_view text) noexcept {
    using V16 = signed char __attribute__((vector_size(16)));
    const char* p = text.data();
    const std::size_t n = text.size();
    std::size_t i = 0;
    // Each step reads p[i .. i+16] (17 bytes), all inside the text.
    for (; i + 17 <= n; i += 16) {
      V16 a, b;
      std::memcpy(&a, p + i, 16);
      std::memcpy(&b, p + i + 1, 16);
      V16 hit = (a == '#') | ((a == '/') & (b == '.'));
      std::uint64_t lo, hi;
      std::memcpy(&lo, &hit, 8);
      std::memcpy(&hi, reinterpret_cast<const char*>(&hit) + 8, 8);
      if (lo | hi) return false;
    }
    for (; i < n; ++i) {
      if (p[i] == '#') return false;
      if (p[i] == '/' && i + 1 < n && p[i + 1] == '.') return false;
    }
    return true;
  }

  core::Result<ProjectPage> error(od::document& doc, error_code err, std::string_view expected) {
    std::string what;
    if (err == simdjson::INCORRECT_TYPE || err == simdjson::NUMBER_OUT_OF_RANGE ||
        err == simdjson::NUMBER_ERROR) {
      what = fmt::format("{}: {}", path_.str(), expected);
    } else if (path_.top) {
      what = fmt::format("{}: not valid JSON ({})", path_.str(), simdjson::error_message(err));
    } else {
      what = fmt::format("not valid JSON ({})", simdjson::error_message(err));
    }
    return fail(doc, what);
  }

  // At the document's current place; an element read to its end: at the token after it.
  core::Result<ProjectPage> fail(od::document& doc, std::string_view what) {
    std::string_view text = text_.text;
    std::size_t offset = text.size();
    std::size_t gap = text_.gap_lines;
    const char* location = nullptr;
    if (!doc.current_location().get(location) && location >= text.data() &&
        location <= text.data() + text.size()) {
      offset = static_cast<std::size_t>(location - text.data());
      gap = 0;
    }
    // An element begins on the line after the skeleton's newlines so far.
    const std::size_t first =
        text_.first_line != 0 ? text_.first_line : 1 + detail::count_newlines(splitter_.skeleton());
    const std::size_t line = first + detail::count_newlines(text.substr(0, offset)) + gap;
    return core::fail_at(core::ErrorCode::IndexFormat,
                         fmt::format("invalid PEP 691 page: {}", what), redact_url(page_url_),
                         line);
  }

  std::string page_url_;
  UrlResolver resolver_;  // the page's URL split once, for its files' relative URLs
  PageFilter filter_;
  detail::JsonSplitter splitter_;
  DocText text_;
  detail::FileClassifier classifier_;
  ProjectPage page_;
  JsonPath path_;
  const char* expected_ = "";
  std::string fatal_;
  bool bad_upload_time_ = false;
  bool reserved_ = false;
  // The elements' outcomes (element()) and their replay (parse_files).
  error_code invalid_ = simdjson::SUCCESS;
  std::optional<core::Error> failure_;
  AtElement failure_at_;
  std::optional<std::string> element_warning_;
  AtElement warning_at_;
  std::size_t arrays_seen_ = 0;
  bool replayed_failure_ = false;
  // Scratch for one file (FileText may point into them).
  std::string url_, reason_, algo_lower_, hex_lower_;
};

}  // namespace

core::Result<ProjectPage> parse_json_page(std::string_view json, std::string_view page_url,
                                          const PageFilter& filter) {
  JsonPageStream stream(page_url, filter);
  stream.feed(json);
  return stream.finish();
}

namespace detail {
std::unique_ptr<PageStream> json_page_stream(std::string_view page_url, const PageFilter& filter) {
  return std::make_unique<JsonPageStream>(page_url, filter);
}
}  // namespace detail

PageFormat page_format_for_content_type(std::string_view content_type) noexcept {
  using core::iequals;
  std::string_view t = content_type.substr(0, content_type.find(';'));
  t = core::trim(t, " \t");
  if (iequals(t, "application/vnd.pypi.simple.v1+json")) return PageFormat::Json;
  if (iequals(t, "application/vnd.pypi.simple.v1+html") || iequals(t, "text/html")) {
    return PageFormat::Html;
  }
  return PageFormat::Unknown;
}

}  // namespace gpulock::index
