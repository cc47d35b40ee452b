#pragma once
/// @file
/// The option values of `gpulock resolve` that are app's concepts, as types (issue 21: parse
/// once, into types). Each has one parser, used by the CLI's validator, by resolve, and by
/// `check` reading a lock's record, and one spelling (`to_string`) for the lock and for
/// messages. `--index-strategy` and `--nightly` are the catalog's (catalog/options.h, re-exported
/// here). The other typed options live with their concepts: `--prerelease` in resolver
/// (PrereleasePolicy), `--cuda-compat` and `--driver` in probe (CudaCompat, DriverSpec),
/// `--index` and `--index-for` in index (NamedIndex, IndexPin).
///
/// Errors are Usage errors worded "invalid --FLAG 'VALUE': expected ...".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpulock/catalog/options.h"
#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"

namespace gpulock::app {

// The catalog's options (catalog/options.h), with their parsers.
using catalog::index_strategy_name;
using catalog::IndexStrategy;
using catalog::NightlyDate;
using catalog::parse_index_strategy;

/// `--torch-backend`: auto (the best variant the driver runs), cpu, or one CUDA variant (cuXYZ:
/// "cu" and the digits of a CUDA version, cu118, cu124, cu130).
class TorchBackend {
 public:
  enum class Kind : std::uint8_t { Auto, Cpu, Cuda };

  [[nodiscard]] static TorchBackend automatic() { return TorchBackend(Kind::Auto, {}); }
  [[nodiscard]] static TorchBackend cpu() { return TorchBackend(Kind::Cpu, {}); }
  [[nodiscard]] static TorchBackend cuda(gpu::CudaVersion version) {
    return TorchBackend(Kind::Cuda, version);
  }
  [[nodiscard]] static core::Result<TorchBackend> parse(std::string_view text);

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// The CUDA version of a Cuda backend.
  [[nodiscard]] const std::optional<gpu::CudaVersion>& cuda_version() const noexcept {
    return cuda_;
  }
  /// "auto", "cpu" or the variant name ("cu124").
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const TorchBackend&, const TorchBackend&) = default;

 private:
  TorchBackend(Kind kind, std::optional<gpu::CudaVersion> cuda) : kind_(kind), cuda_(cuda) {}
  Kind kind_ = Kind::Auto;
  std::optional<gpu::CudaVersion> cuda_;
};

/// `--exclude-newer`: a date (YYYY-MM-DD, midnight UTC), an RFC 3339 timestamp, or a duration
/// back from now ("7d", "12h", "P7D"). Parsing checks the text; `cutoff(now)` gives the instant.
class ExcludeNewer {
 public:
  [[nodiscard]] static core::Result<ExcludeNewer> parse(std::string_view text);
  /// The cutoff, microseconds since the epoch: the instant given, or `now` minus the duration.
  [[nodiscard]] std::int64_t cutoff(std::int64_t now_micros) const noexcept {
    return relative_ ? now_micros - micros_ : micros_;
  }
  /// Relative to the time of the run ("7d").
  [[nodiscard]] bool relative() const noexcept { return relative_; }
  /// The text as given (the lock records it; its snapshot records the instant).
  [[nodiscard]] const std::string& to_string() const noexcept { return text_; }

  friend bool operator==(const ExcludeNewer&, const ExcludeNewer&) = default;

 private:
  std::string text_;
  bool relative_ = false;
  std::int64_t micros_ = 0;  ///< the instant, or the duration when relative
};

}  // namespace gpulock::app
