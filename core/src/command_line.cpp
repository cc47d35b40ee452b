#include "gpulock/core/command_line.h"

#include <algorithm>
#include <cctype>

namespace gpulock::core {

std::string shell_quote(std::string_view arg) {
  bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(arg);
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> split_command(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      in_word = true;
      auto end = line.find('\'', i + 1);
      if (end == std::string_view::npos) end = line.size();
      word.append(line.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '\\' && i + 1 < line.size()) {
      in_word = true;
      word += line[++i];
    } else {
      in_word = true;
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string command_with(std::string_view line, std::span<const FlagEdit> edits) {
  std::vector<std::string> words = split_command(line);
  for (const auto& e : edits) {
    if (e.op == FlagEdit::Op::Add) continue;
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (words[i] == e.flag) {
        if (!e.value.empty()) ++i;  // its value
        continue;
      }
      if (words[i].starts_with(e.flag + "=")) continue;
      kept.push_back(std::move(words[i]));
    }
    words = std::move(kept);
  }
  for (const auto& e : edits) {
    if (e.op == FlagEdit::Op::Remove) continue;
    words.push_back(e.flag);
    if (!e.value.empty()) words.push_back(e.value);
  }
  std::string out;
  for (const auto& w : words)
    out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

}  // namespace gpulock::core
