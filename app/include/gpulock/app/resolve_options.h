#pragma once
/// @file
/// The option values of `gpulock resolve` that are app's concepts, as types (issue 21: parse
/// once, into types). Each has one parser, used by the CLI's validator, by resolve, and by
/// `check` reading a lock's record, and one spelling (`to_string`) for the lock and for
/// messages. The other typed options live with their concepts: `--prerelease` in resolver
/// (PrereleasePolicy), `--cuda-compat` and `--driver` in probe (CudaCompat, DriverSpec),
/// `--index` and `--index-for` in index (NamedIndex, IndexPin).
///
/// Errors are Usage errors worded "invalid --FLAG 'VALUE': expected ...".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpulock/core/civil_date.h"
#include "gpulock/core/error.h"
#include "gpulock/gpu/cuda_versions.h"

namespace gpulock::app {

/// `--index-strategy`: first-index (a package comes only from the first source that has it, the
/// torchtriton lesson) or unsafe-best-match (every source merged).
enum class IndexStrategy : std::uint8_t { FirstIndex, UnsafeBestMatch };
[[nodiscard]] core::Result<IndexStrategy> parse_index_strategy(std::string_view text);
[[nodiscard]] std::string_view index_strategy_name(IndexStrategy strategy) noexcept;

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

/// A nightly build date, UTC. `--nightly` takes one (YYYY-MM-DD) or `latest`; a nightly
/// version's dev tag carries one (`2.13.0.dev20260601+cu130` -> 2026-06-01); the lock's
/// snapshot records one. One type for the four places a date was a string (issue 21).
class NightlyDate {
 public:
  /// "YYYY-MM-DD" (month 1-12, day 1-31) or "latest". Errors: Usage.
  [[nodiscard]] static core::Result<NightlyDate> parse(std::string_view text);
  /// The date of a build tag "YYYYMMDD" (the digits after `.dev` in a nightly version); nullopt
  /// when `tag` is not eight digits of a valid month and day.
  [[nodiscard]] static std::optional<NightlyDate> from_build_tag(std::string_view tag);
  [[nodiscard]] static NightlyDate latest() { return NightlyDate(); }
  [[nodiscard]] static NightlyDate on(core::CivilDate date) { return NightlyDate(date); }

  [[nodiscard]] bool is_latest() const noexcept { return !date_; }
  /// The date; nullopt for `latest`.
  [[nodiscard]] const std::optional<core::CivilDate>& date() const noexcept { return date_; }
  /// "YYYY-MM-DD" or "latest".
  [[nodiscard]] std::string to_string() const;
  /// "YYYYMMDD" as in a version's dev tag ("" for `latest`).
  [[nodiscard]] std::string build_tag() const;

  friend bool operator==(const NightlyDate&, const NightlyDate&) = default;

 private:
  NightlyDate() = default;
  explicit NightlyDate(core::CivilDate date) : date_(date) {}
  std::optional<core::CivilDate> date_;
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
