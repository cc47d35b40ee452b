#include "table.h"

#include <algorithm>
#include <string>

namespace gpulock::cli {

std::string render_table(const TableRows& rows, const TableStyles& styles, const Terminal& term,
                         std::string_view indent) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line(indent);
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      const std::string& cell = rows[r][c];
      const Style s = r < styles.size() && c < styles[r].size() ? styles[r][c] : Style::Plain;
      line += term.paint(s, cell);
      if (c + 1 < rows[r].size()) line += std::string(width[c] - cell.size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string section_heading(const Terminal& term, std::string_view title) {
  return term.paint(Style::Bold, title) + "\n";
}

std::string labelled_line(const Terminal& term, Style style, std::string_view label,
                          std::string_view text, std::string_view indent) {
  std::string line(indent);
  line += term.paint(style, label);
  line += ": ";
  line += text;
  line += "\n";
  return line;
}

}  // namespace gpulock::cli
