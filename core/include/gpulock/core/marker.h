#pragma once
/// @file
/// PEP 508 environment markers (canonical spec: packaging.python.org, "Dependency
/// specifiers", §Environment Markers), including PEP 751's set variables `extras` and
/// `dependency_groups`.
///
/// Comparison: PEP 440 version comparison when the operator is a version operator and both
/// sides are valid versions (packaging builds a Specifier from `op + rhs`), Python string
/// comparison otherwise; `in` / `not in` are substring tests on strings and membership on the
/// set variables. Where packaging 23.x differs from the PEP text, Marker follows packaging and
/// marker.cpp documents each case.

#include <memory>
#include <string>
#include <string_view>

#include "gpulock/core/environment.h"
#include "gpulock/core/error.h"

namespace gpulock::core {

struct MarkerNode;    // the expression tree, defined in marker_node.h (core/src)
struct MarkerAccess;  // core/src internals (Requirement::parse)

class Marker {
 public:
  /// The always-true marker (no expression).
  Marker() = default;

  /// Parses `python_version >= "3.9" and (platform_machine == 'x86_64' or extra == "gpu")`.
  /// Either side of a comparison may be the variable. Quoted strings are Python literals
  /// (escapes such as `\x41` are decoded, as packaging's ast.literal_eval does). Deep nesting
  /// is fine: the parser does not recurse per parenthesis (10,000 levels return a result, not a
  /// stack overflow). The whole text must be a marker (packaging 23.0 silently ignores text
  /// after a complete marker; gpulock reports it).
  /// Errors: InvalidMarker, column of the offending token (1-based).
  [[nodiscard]] static Result<Marker> parse(std::string_view text);

  /// True if there is no expression (matches everything).
  [[nodiscard]] bool empty() const noexcept { return root_ == nullptr; }

  /// Evaluates against a target. `extra` is the value of the `extra` variable (the extra whose
  /// dependencies are being computed; empty when none), compared after PEP 685 normalization.
  /// Errors: InvalidMarker for comparisons packaging refuses to evaluate (e.g. `~=` between
  /// strings that are not versions); the message names the comparison.
  [[nodiscard]] Result<bool> evaluate(const Environment& env, std::string_view extra = {}) const;

  /// Like evaluate(), treating an evaluation error as false (a dependency whose marker cannot
  /// be evaluated is not installed).
  [[nodiscard]] bool matches(const Environment& env, std::string_view extra = {}) const;

  /// True if the expression mentions the `extra` variable anywhere.
  [[nodiscard]] bool mentions_extra() const noexcept;

  /// Normalized text in packaging's style (str(Marker)): `python_version >= "3.9" and extra ==
  /// "gpu"`: double quotes, single spaces, `os.name` spelled `os_name`, every parenthesized
  /// group of more than one comparison kept in parentheses, redundant ones around a single
  /// comparison or the whole marker dropped. Values are not escaped (as in packaging).
  [[nodiscard]] std::string to_string() const;

  /// `a and b` (either may be empty).
  [[nodiscard]] static Marker conjunction(const Marker& a, const Marker& b);

 private:
  friend struct MarkerAccess;
  // Immutable, shared between copies. The tree is stored flat (arrays indexed by integers, not
  // pointers), so copying, evaluating, printing and destroying it never recurse.
  std::shared_ptr<const MarkerNode> root_;
};

}  // namespace gpulock::core
