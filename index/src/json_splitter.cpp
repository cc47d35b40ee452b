#include "json_splitter.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "page_builder.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpulock::index::detail {
namespace {

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The bytes an element's scan stops at: strings, brackets and the comma.
constexpr std::array<bool, 256> kStops = [] {
  std::array<bool, 256> t{};
  for (char c : std::string_view("\"{}[],"))
    t[static_cast<unsigned char>(c)] = true;
  return t;
}();

// One 64-byte block: bit i set where byte i is a quote, a backslash, or a bracket or comma.
struct BlockBits {
  std::uint64_t quote = 0, backslash = 0, stop = 0;
};

BlockBits classify(const char* p) noexcept {
  BlockBits bits;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  const __m128i comma = _mm_set1_epi8(','), case_bit = _mm_set1_epi8(0x20);
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i folded = _mm_or_si128(v, case_bit);  // '[' -> '{', ']' -> '}'
    const auto mask = [k](__m128i m) {
      return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(m)) & 0xffffu)
             << (16 * k);
    };
    bits.quote |= mask(_mm_cmpeq_epi8(v, quote));
    bits.backslash |= mask(_mm_cmpeq_epi8(v, backslash));
    bits.stop |=
        mask(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)),
                          _mm_cmpeq_epi8(v, comma)));
  }
#else
  for (unsigned i = 0; i < 64; ++i) {
    const char c = p[i];
    const std::uint64_t bit = std::uint64_t{1} << i;
    if (c == '"') bits.quote |= bit;
    if (c == '\\') bits.backslash |= bit;
    if (c == '{' || c == '}' || c == '[' || c == ']' || c == ',') bits.stop |= bit;
  }
#endif
  return bits;
}

// Bit i set when an odd number of the bits 0..i are set: inside a string, from its opening quote.
std::uint64_t prefix_xor(std::uint64_t x) noexcept {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

}  // namespace

void JsonSplitter::feed(std::string_view bytes, Sink& sink) {
  if (at_ == At::Rest) {
    keep_rest(bytes);
    return;
  }
  const std::size_t need = window_.size() + bytes.size() + kPadding;
  if (window_.capacity() < need) window_.reserve(std::max(need, 2 * window_.capacity()));
  window_.append(bytes);
  scan(sink);
  if (at_ != At::Rest) compact();
}

void JsonSplitter::finish() {
  if (at_ != At::Rest) give_up(false);
}

bool JsonSplitter::skip_string() {
  const char* base = window_.data();
  const std::size_t n = window_.size();
  while (pos_ < n) {
    const void* hit = std::memchr(base + pos_, '"', n - pos_);
    if (hit == nullptr) break;
    const auto quote = static_cast<std::size_t>(static_cast<const char*>(hit) - base);
    std::size_t run = quote;
    while (run > 0 && base[run - 1] == '\\')
      --run;
    pos_ = quote + 1;
    if ((quote - run) % 2 == 0) {
      in_string_ = false;
      return true;
    }
  }
  // Not closed yet: the next scan starts at the trailing backslashes, which the next byte
  // may be escaped by (the byte before them is not a backslash, so they are all there is).
  std::size_t end = n;
  while (end > pos_ && base[end - 1] == '\\')
    --end;
  pos_ = end;
  return false;
}

void JsonSplitter::scan(Sink& sink) {
  const std::size_t n = window_.size();
  while (pos_ < n) {
    if (in_string_) {
      if (!skip_string()) break;
      if (at_ == At::Key) {
        std::string_view key(window_.data() + keep_ + 1, pos_ - keep_ - 2);
        key_is_files_ = key == "files";
        keep_ = kNone;
        at_ = At::Colon;
      }
      continue;
    }
    const char c = window_[pos_];
    switch (at_) {
      case At::Start:
      case At::Key:
      case At::Colon:
      case At::Element:
        if (is_space(c)) {
          ++pos_;
          continue;
        }
        if (at_ == At::Start && c == '{') {
          depth_ = 1;
          at_ = At::Key;
        } else if (at_ == At::Key && c == '"') {
          keep_ = pos_;
          in_string_ = true;
        } else if (at_ == At::Colon && c == ':') {
          at_ = At::Value;
        } else if (at_ == At::Element && c == ']') {
          depth_ = 1;
          at_ = At::RootValue;
        } else if (at_ == At::Element && c != ',') {
          copy_to_skeleton(pos_);
          keep_ = pos_;
          at_ = At::InElement;
          continue;
        } else {
          const bool closed = at_ == At::Key && c == '}';
          if (closed) ++pos_;
          give_up(closed);  // the root closed, or what is not expected
          return;
        }
        ++pos_;
        continue;
      case At::Value:
        if (is_space(c)) {
          ++pos_;
        } else if (c == '[' && key_is_files_) {
          ++pos_;
          depth_ = 2;
          arrays_.push_back(0);
          at_ = At::Element;
        } else {
          at_ = At::RootValue;
        }
        continue;
      case At::RootValue:
        ++pos_;
        if (c == '"') {
          in_string_ = true;
        } else if (c == '{' || c == '[') {
          ++depth_;
        } else if (c == '}' || c == ']') {
          if (--depth_ == 0) {
            give_up(true);  // the root closed: what follows is not split
            return;
          }
        } else if (c == ',' && depth_ == 1) {
          at_ = At::Key;
        }
        continue;
      case At::InElement: {
        skip_blocks();
        if (in_string_) continue;  // the blocks ended inside a string
        // The bytes the blocks left: a file object's bytes outside its strings.
        const char* p = window_.data();
        while (pos_ < n && !kStops[static_cast<unsigned char>(p[pos_])])
          ++pos_;
        if (pos_ == n) break;
        const char s = p[pos_];
        if (s == '"') {
          ++pos_;
          in_string_ = true;
        } else if (s == '{' || s == '[') {
          ++depth_;
          ++pos_;
        } else if (depth_ > 2) {
          if (s != ',') --depth_;
          ++pos_;
        } else if (s == '}') {
          give_up(false);
          return;
        } else {
          end_element(sink);  // at its ',' or the array's ']', which the skeleton keeps
          at_ = s == ',' ? At::Element : At::RootValue;
          if (s == ']') depth_ = 1;
          ++pos_;
        }
        continue;
      }
      case At::Rest:
        return;
    }
  }
  if (at_ != At::InElement) copy_to_skeleton(pos_);
}

void JsonSplitter::skip_blocks() noexcept {
  const char* p = window_.data();
  const std::size_t n = window_.size();
  // A byte right after a backslash may be escaped: the scalar scan reads it.
  if (pos_ > 0 && p[pos_ - 1] == '\\') return;
  while (pos_ + 64 <= n) {
    const BlockBits bits = classify(p + pos_);
    if (bits.backslash != 0) return;  // escapes: the scalar scan (rare in a page)
    std::uint64_t in_string = prefix_xor(bits.quote);
    if (in_string_) in_string = ~in_string;
    std::uint64_t stops = bits.stop & ~in_string;
    while (stops != 0) {
      const int i = std::countr_zero(stops);
      stops &= stops - 1;
      const char c = p[pos_ + static_cast<std::size_t>(i)];
      if (c == '{' || c == '[') {
        ++depth_;
      } else if (depth_ > 2) {
        if (c != ',') --depth_;
      } else {
        pos_ += static_cast<std::size_t>(i);  // the element's end: the scalar scan takes it
        in_string_ = false;
        return;
      }
    }
    in_string_ = (in_string >> 63) != 0;
    pos_ += 64;
  }
}

void JsonSplitter::end_element(Sink& sink) {
  const char* p = window_.data();
  std::size_t end = pos_;
  while (end > keep_ && is_space(p[end - 1]))
    --end;
  const std::size_t gap = count_newlines(std::string_view(p + end, pos_ - end));
  Element e{std::string_view(p + keep_, end - keep_), window_.capacity() - keep_, arrays_.back(),
            gap};
  sink.element(e);
  ++arrays_.back();
  skeleton_.push_back('0');
  skeleton_.append(count_newlines(std::string_view(p + keep_, end - keep_)) + gap, '\n');
  copied_ = pos_;
  keep_ = kNone;
}

void JsonSplitter::give_up(bool root_closed) {
  // The root's own bytes (to its '}' when it closed) go as they are; only what follows is "rest".
  if (root_closed) copy_to_skeleton(pos_);
  root_closed_ = root_closed;
  rest_from_ = skeleton_.size();
  keep_rest(std::string_view(window_).substr(copied_));
  std::string().swap(window_);
  pos_ = copied_ = 0;
  keep_ = kNone;
  in_string_ = false;
  at_ = At::Rest;
}

void JsonSplitter::keep_rest(std::string_view bytes) {
  if (overflow_) return;
  if (root_closed_) {
    // After the root object only newlines (for lines) and tokens matter: a run of other spaces
    // is kept as one, so a page followed by megabytes of padding costs nothing.
    for (char c : bytes) {
      const bool blank = c == ' ' || c == '\t' || c == '\r';
      if (!blank || !blank_) skeleton_.push_back(blank ? ' ' : c);
      blank_ = blank;
      if (skeleton_.size() - rest_from_ > kMaxRest) break;
    }
  } else if (skeleton_.size() - rest_from_ + bytes.size() <= kMaxRest) {
    skeleton_.append(bytes);
    return;
  }
  // The page is refused: nothing more is kept (a gzip bomb's zeros).
  if (skeleton_.size() - rest_from_ > kMaxRest || !root_closed_) overflow_ = true;
}

std::size_t JsonSplitter::rest_line() const noexcept {
  return 1 + count_newlines(std::string_view(skeleton_).substr(0, rest_from_));
}

void JsonSplitter::copy_to_skeleton(std::size_t to) {
  if (to > copied_) {
    skeleton_.append(window_, copied_, to - copied_);
    copied_ = to;
  }
}

void JsonSplitter::compact() {
  std::size_t drop = std::min(copied_, pos_);
  if (keep_ != kNone) drop = std::min(drop, keep_);
  if (drop == 0) return;
  window_.erase(0, drop);
  pos_ -= drop;
  copied_ -= drop;
  if (keep_ != kNone) keep_ -= drop;
}

}  // namespace gpulock::index::detail
