#pragma once
/// @file
/// Synthetic index pages for the parse benchmarks, shaped like pypi.org's (PEP 691 JSON with
/// absolute files.pythonhosted.org URLs, PEP 503 HTML with the PEP 592/658/714 attributes).

#include <cstddef>
#include <string>

namespace gpulock::bench {

/// A PEP 691 JSON project page for `project` of at least `min_bytes` bytes: versions
/// 1.0.0, 1.0.1, ... each with an sdist and wheels for cp39 - cp314 on eight platforms.
[[nodiscard]] std::string synthetic_json_page(std::size_t min_bytes,
                                              const std::string& project = "numpy");

/// The same files as a PEP 503 HTML page.
[[nodiscard]] std::string synthetic_html_page(std::size_t min_bytes,
                                              const std::string& project = "numpy");

}  // namespace gpulock::bench
