#pragma once
/// @file
/// Aligned text columns for the commands' human output (`gpulock diff`, `gpulock probe`):
/// rows of cells, each column as wide as its widest cell, two spaces between columns, no
/// trailing spaces. Colour is applied per cell after the widths are computed on the plain text,
/// so a painted table lines up exactly like an unpainted one.

#include <string>
#include <string_view>
#include <vector>

#include "terminal.h"

namespace gpulock::cli {

/// The indent of a grouped report's lines under their section heading (`gpulock probe`).
inline constexpr std::string_view kSectionIndent = "  ";

using TableRows = std::vector<std::vector<std::string>>;
/// `styles[r][c]` colours cell c of row r; missing entries (short rows, no rows) are plain.
using TableStyles = std::vector<std::vector<Style>>;

/// The rows as aligned columns, each line starting with `indent` and ending in "\n". Rows may
/// have different numbers of cells; a column's width comes from the rows that have it.
[[nodiscard]] std::string render_table(const TableRows& rows, const TableStyles& styles,
                                       const Terminal& term, std::string_view indent = "");

/// A grouped report's section heading: `title` in bold on a line of its own.
[[nodiscard]] std::string section_heading(const Terminal& term, std::string_view title);

/// "<indent><label>: <text>\n" with the label painted, e.g. "  warning: ...", "    hint: ...".
[[nodiscard]] std::string labelled_line(const Terminal& term, Style style, std::string_view label,
                                        std::string_view text,
                                        std::string_view indent = kSectionIndent);

}  // namespace gpulock::cli
