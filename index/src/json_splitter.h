#pragma once
// A PEP 691 page split as it arrives (json_page.cpp's stream): each element of a top-level
// "files" array goes to the caller as soon as its last byte is in, and everything else becomes
// the page's skeleton, in which each such element is the placeholder `0` followed by as many
// newlines as the element spanned. The skeleton is then an ordinary JSON document with the lines
// of the page (an error in it is reported at the page's line), and a few bytes per file.
//
// The splitter only finds boundaries: strings (with their escapes) and brackets. It checks
// nothing else. Whatever it does not expect (a root that is not an object, a "files" array with
// an empty element, a bracket closed twice) ends the splitting: the rest of the page, including
// the unfinished element, goes into the skeleton as written, where the JSON parser reports it as
// it would have in the whole page.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpulock::index::detail {

class JsonSplitter {
 public:
  /// Extra bytes readable past an element's end (simdjson's padding).
  static constexpr std::size_t kPadding = 64;

  struct Element {
    std::string_view text;  ///< the element as written, without the whitespace around it
    std::size_t readable;   ///< bytes readable from text.data(): at least text.size() + kPadding
    std::size_t index;      ///< its index in its "files" array
    std::size_t gap_lines;  ///< newlines between its end and the ',' or ']' after it
  };
  /// Called for each element, in page order; the text stays valid only during the call.
  class Sink {
   public:
    virtual ~Sink() = default;
    virtual void element(const Element& e) = 0;
  };

  /// The page's next bytes.
  void feed(std::string_view bytes, Sink& sink);
  /// After the last feed: what was not split (an unfinished element or key) joins the skeleton.
  void finish();

  /// The skeleton so far (whole after finish()).
  [[nodiscard]] const std::string& skeleton() const noexcept { return skeleton_; }
  [[nodiscard]] std::string& skeleton() noexcept { return skeleton_; }
  /// For each split "files" array, in page order, how many of its first elements are
  /// placeholders in the skeleton (the rest, after splitting ended, are as written).
  [[nodiscard]] const std::vector<std::size_t>& arrays() const noexcept { return arrays_; }
  /// What is not split is kept up to this size; past it the page is refused (overflowed()).
  static constexpr std::size_t kMaxRest = std::size_t{64} << 20;
  /// More than kMaxRest bytes were not split: the skeleton lacks them.
  [[nodiscard]] bool overflowed() const noexcept { return overflow_; }
  /// Where splitting ended: the line, and whether the root object had closed there.
  [[nodiscard]] std::size_t rest_line() const noexcept;
  [[nodiscard]] bool root_closed() const noexcept { return root_closed_; }
  /// Bytes held for an unfinished element (for tests: stays near the largest element).
  [[nodiscard]] std::size_t held() const noexcept { return window_.size(); }

 private:
  enum class At : unsigned char {
    Start,      // before the root '{'
    Key,        // in the root object: before a key (or '}')
    Colon,      // after a root key
    Value,      // after ':'
    RootValue,  // in a root value that is not split, to its ',' or the root's '}'
    Element,    // in a split array: before an element (or ']')
    InElement,  // in an element, to the ',' or ']' that ends it
    Rest,       // not splitting: everything to the skeleton
  };

  void scan(Sink& sink);
  // Skips the string whose content starts at pos_ (in_string_); false when the window ends first.
  bool skip_string();
  // Whole 64-byte blocks of an element at once (strings by their quotes' parity), to the byte
  // that ends it, a block with a backslash, or the window's last partial block.
  void skip_blocks() noexcept;
  void end_element(Sink& sink);
  void give_up(bool root_closed);
  void keep_rest(std::string_view bytes);
  void copy_to_skeleton(std::size_t to);
  void compact();

  std::string window_;  // bytes not yet copied or split, from keep_ (or pos_) on
  std::string skeleton_;
  std::vector<std::size_t> arrays_;
  std::size_t pos_ = 0;       // next byte to scan (window offset)
  std::size_t copied_ = 0;    // window bytes before this are in the skeleton or split
  std::size_t keep_ = kNone;  // start of the element or key being read (held until done)
  std::size_t depth_ = 0;     // brackets open
  At at_ = At::Start;
  bool in_string_ = false;
  bool key_is_files_ = false;
  bool overflow_ = false;
  bool root_closed_ = false;
  bool blank_ = false;         // the last byte kept after the root was a space
  std::size_t rest_from_ = 0;  // where the bytes not split begin in the skeleton
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
};

}  // namespace gpulock::index::detail
