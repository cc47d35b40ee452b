// GPU product names to compute capability (gpu/inventory.h compute_capability_of_name), for
// inventories that name a GPU without stating its capability (the nvidia-smi table, -L, XML,
// /proc). The rows are data copied from shared/data/gpu-names.md (NVIDIA's "CUDA GPUs: compute
// capability" page and the CUDA C++ Programming Guide, transcribed December 2026).
//
// Matching (as gpu-names.md says): the name is lowercased, dashes, underscores and parentheses
// become spaces, and the words `nvidia`, `geforce`, `tesla`, `quadro` and `jetson` are dropped;
// a row's words must be the name's first words (the longest row wins: "rtx 6000 ada" over
// "rtx 6000"). A name cut with "..." matches when its words, the last one a prefix, lead to
// rows of one capability only.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/text.h"
#include "gpulock/gpu/inventory.h"

namespace gpulock::gpu {
namespace {

struct NameRow {
  std::string_view words;  ///< normalized leading words
  std::uint32_t major;
  std::uint32_t minor;
};

// Source: shared/data/gpu-names.md (one row per product family there).
constexpr std::array kNames{
    NameRow{"gb10", 12, 1},
    NameRow{"rtx 5090", 12, 0},
    NameRow{"rtx 5080", 12, 0},
    NameRow{"rtx 5070", 12, 0},
    NameRow{"rtx 5060", 12, 0},
    NameRow{"rtx 5050", 12, 0},
    NameRow{"rtx pro 6000", 12, 0},
    NameRow{"rtx pro 5000", 12, 0},
    NameRow{"rtx pro 4500", 12, 0},
    NameRow{"rtx pro 4000", 12, 0},
    NameRow{"thor", 11, 0},
    NameRow{"agx thor", 11, 0},
    NameRow{"b300", 10, 3},
    NameRow{"gb300", 10, 3},
    NameRow{"b200", 10, 0},
    NameRow{"b100", 10, 0},
    NameRow{"gb200", 10, 0},
    NameRow{"h100", 9, 0},
    NameRow{"h200", 9, 0},
    NameRow{"h800", 9, 0},
    NameRow{"h20", 9, 0},
    NameRow{"gh200", 9, 0},
    NameRow{"rtx 4090", 8, 9},
    NameRow{"rtx 4080", 8, 9},
    NameRow{"rtx 4070", 8, 9},
    NameRow{"rtx 4060", 8, 9},
    NameRow{"rtx 4050", 8, 9},
    NameRow{"rtx 6000 ada", 8, 9},
    NameRow{"rtx 5880 ada", 8, 9},
    NameRow{"rtx 5000 ada", 8, 9},
    NameRow{"rtx 4500 ada", 8, 9},
    NameRow{"rtx 4000 ada", 8, 9},
    NameRow{"rtx 4000 sff ada", 8, 9},
    NameRow{"rtx 2000 ada", 8, 9},
    NameRow{"l4", 8, 9},
    NameRow{"l40", 8, 9},
    NameRow{"l40s", 8, 9},
    NameRow{"l20", 8, 9},
    NameRow{"agx orin", 8, 7},
    NameRow{"orin", 8, 7},
    NameRow{"rtx 3090", 8, 6},
    NameRow{"rtx 3080", 8, 6},
    NameRow{"rtx 3070", 8, 6},
    NameRow{"rtx 3060", 8, 6},
    NameRow{"rtx 3050", 8, 6},
    NameRow{"rtx a6000", 8, 6},
    NameRow{"rtx a5500", 8, 6},
    NameRow{"rtx a5000", 8, 6},
    NameRow{"rtx a4500", 8, 6},
    NameRow{"rtx a4000", 8, 6},
    NameRow{"rtx a2000", 8, 6},
    NameRow{"a40", 8, 6},
    NameRow{"a16", 8, 6},
    NameRow{"a10", 8, 6},
    NameRow{"a10g", 8, 6},
    NameRow{"a2", 8, 6},
    NameRow{"a100", 8, 0},
    NameRow{"a800", 8, 0},
    NameRow{"a30", 8, 0},
    NameRow{"t4", 7, 5},
    NameRow{"rtx 2080", 7, 5},
    NameRow{"rtx 2070", 7, 5},
    NameRow{"rtx 2060", 7, 5},
    NameRow{"gtx 1660", 7, 5},
    NameRow{"gtx 1650", 7, 5},
    NameRow{"titan rtx", 7, 5},
    NameRow{"rtx 8000", 7, 5},
    NameRow{"rtx 6000", 7, 5},
    NameRow{"rtx 5000", 7, 5},
    NameRow{"rtx 4000", 7, 5},
    NameRow{"t1000", 7, 5},
    NameRow{"t600", 7, 5},
    NameRow{"t400", 7, 5},
    NameRow{"agx xavier", 7, 2},
    NameRow{"xavier", 7, 2},
    NameRow{"v100", 7, 0},
    NameRow{"titan v", 7, 0},
    NameRow{"gv100", 7, 0},
    NameRow{"tx2", 6, 2},
    NameRow{"gtx 1080", 6, 1},
    NameRow{"gtx 1070", 6, 1},
    NameRow{"gtx 1060", 6, 1},
    NameRow{"gtx 1050", 6, 1},
    NameRow{"gt 1030", 6, 1},
    NameRow{"titan xp", 6, 1},
    NameRow{"titan x pascal", 6, 1},
    NameRow{"p40", 6, 1},
    NameRow{"p4", 6, 1},
    NameRow{"p6000", 6, 1},
    NameRow{"p5000", 6, 1},
    NameRow{"p4000", 6, 1},
    NameRow{"p2000", 6, 1},
    NameRow{"p1000", 6, 1},
    NameRow{"p620", 6, 1},
    NameRow{"p600", 6, 1},
    NameRow{"p400", 6, 1},
    NameRow{"p100", 6, 0},
    NameRow{"gp100", 6, 0},
    NameRow{"nano", 5, 3},
    NameRow{"tx1", 5, 3},
    NameRow{"gtx 980", 5, 2},
    NameRow{"gtx 970", 5, 2},
    NameRow{"gtx 960", 5, 2},
    NameRow{"gtx 950", 5, 2},
    NameRow{"gtx titan x", 5, 2},
    NameRow{"m60", 5, 2},
    NameRow{"m40", 5, 2},
    NameRow{"m6", 5, 2},
    NameRow{"m6000", 5, 2},
    NameRow{"m5000", 5, 2},
    NameRow{"m4000", 5, 2},
    NameRow{"gtx 750", 5, 0},
    NameRow{"k2200", 5, 0},
    NameRow{"k620", 5, 0},
    NameRow{"k80", 3, 7},
    NameRow{"k40", 3, 5},
    NameRow{"k20", 3, 5},
    NameRow{"gtx 780", 3, 5},
    NameRow{"gtx titan", 3, 5},
    NameRow{"gtx 680", 3, 0},
    NameRow{"gtx 670", 3, 0},
    NameRow{"gtx 660", 3, 0},
    NameRow{"k10", 3, 0},
};

constexpr std::array<std::string_view, 5> kDropped{"nvidia", "geforce", "tesla", "quadro",
                                                   "jetson"};

std::vector<std::string> words_of(std::string_view text, bool& cut) {
  cut = false;
  std::string_view t = core::trim(text.substr(0, std::min<std::size_t>(text.size(), 256)));
  if (t.ends_with("...")) {
    cut = true;
    t.remove_suffix(3);
  } else if (t.ends_with("\xe2\x80\xa6")) {  // U+2026, an ellipsis
    cut = true;
    t.remove_suffix(3);
  }
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    bool dropped = false;
    for (auto d : kDropped)
      dropped = dropped || word == d;
    if (!dropped) words.push_back(word);
    word.clear();
  };
  for (char c : t) {
    if (c == ' ' || c == '-' || c == '_' || c == '(' || c == ')' || c == '\t' || c == ',') {
      flush();
    } else {
      word.push_back(core::ascii_lower(c));
    }
  }
  // A cut name's last word is a prefix; dropped words are dropped whole only.
  if (cut && !word.empty()) {
    words.push_back(word);
    word.clear();
  }
  flush();
  return words;
}

std::vector<std::string_view> row_words(std::string_view row) {
  std::vector<std::string_view> words;
  while (!row.empty()) {
    auto sp = row.find(' ');
    words.push_back(row.substr(0, sp));
    if (sp == std::string_view::npos) break;
    row.remove_prefix(sp + 1);
  }
  return words;
}

// Does the row match the name's words? `cut`: the last word may be a prefix of the row's word,
// and the row may be longer than the name.
bool matches(const std::vector<std::string_view>& row, const std::vector<std::string>& name,
             bool cut) {
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i >= name.size()) return cut;
    const bool last = i + 1 == name.size();
    if (cut && last) return row[i].starts_with(name[i]);
    if (row[i] != name[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<ComputeCapability> compute_capability_of_name(std::string_view name) {
  bool cut = false;
  const auto words = words_of(name, cut);
  if (words.empty()) return std::nullopt;
  std::size_t best_len = 0;
  std::optional<ComputeCapability> best;
  bool ambiguous = false;
  for (const auto& row : kNames) {
    const auto rw = row_words(row.words);
    if (!matches(rw, words, cut)) continue;
    const ComputeCapability cc{row.major, row.minor};
    // Uncut: the longest row wins. Cut: every row that matches must agree, unless a row covers
    // every word the name has (the name continues past it: "rtx pro 6000 blac...").
    const bool covers = rw.size() <= words.size() && (!cut || rw.size() < words.size());
    if (!cut || covers) {
      if (rw.size() > best_len) {
        best_len = rw.size();
        best = cc;
        ambiguous = false;
      }
      continue;
    }
    if (best_len == 0) {
      if (best && *best != cc) ambiguous = true;
      if (!best) best = cc;
    }
  }
  if (ambiguous && best_len == 0) return std::nullopt;
  return best;
}

}  // namespace gpulock::gpu
