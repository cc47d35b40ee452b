#pragma once
// RECORD files (PEP 376 / "Recording installed projects"; PEP 427 §The .dist-info directory):
// Python csv rows of path, `sha256=<urlsafe base64, no padding>`, size. Shared by the native
// installer (install_wheel.cpp), the sync's verification and `check --env --deep`.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulock::app::record {

struct Row {
  std::string path;  ///< '/'-separated, relative to the site-packages directory
  std::string hash;  ///< "sha256=..." or empty
  std::string size;  ///< decimal or empty
};

/// The fields of one CSV line (quotes as Python's csv module writes them).
[[nodiscard]] std::vector<std::string> csv_fields(const std::string& line);

/// The rows of a RECORD text (blank lines skipped).
[[nodiscard]] std::vector<Row> parse(std::string_view text);

/// The rows of `dist_info/RECORD`; nullopt when it cannot be read.
[[nodiscard]] std::optional<std::vector<Row>> read(const std::filesystem::path& dist_info);

/// Rows as Python's csv.writer writes them (minimal quoting, "\r\n" line ends), in the given
/// order.
[[nodiscard]] std::string write(const std::vector<Row>& rows);

/// Hex sha256 as RECORD's "sha256=..." value, without the prefix.
[[nodiscard]] std::string hex_to_urlsafe_b64(std::string_view hex);

/// One installed file against its row. Empty: it matches (or the row has no hash);
/// else "missing", or "modified (...)".
[[nodiscard]] std::string verify_file(const std::filesystem::path& file, const Row& row);

}  // namespace gpulock::app::record
