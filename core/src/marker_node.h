#pragma once
// The marker's expression tree (MarkerNode) and its variables and operators, shared by
// marker.cpp (the semantics, tree operations), marker_parse.cpp (tokens, parser),
// marker_eval.cpp (evaluation) and marker_print.cpp (printing).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/marker.h"
#include "gpulock/core/specifier.h"

#include "specifier_internal.h"

namespace gpulock::core {

namespace marker_impl {

enum class Var : std::uint8_t {
  PythonVersion,
  PythonFullVersion,
  OsName,
  SysPlatform,
  PlatformRelease,
  PlatformSystem,
  PlatformVersion,
  PlatformMachine,
  PlatformPythonImplementation,
  ImplementationName,
  ImplementationVersion,
  VariantLabel,  // PEP 825 (Draft)
  Extra,
  Extras,             // PEP 751
  DependencyGroups,   // PEP 751
  VariantProperties,  // PEP 825 (Draft)
  VariantFeatures,
  VariantNamespaces,
};

constexpr std::array<std::string_view, 19> kVarNames = {
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "variant_label",
    "extra",
    "extras",
    "dependency_groups",
    "variant_properties",
    "variant_features",
    "variant_namespaces",
};

inline std::string_view var_name(Var v) noexcept {
  return kVarNames[static_cast<std::size_t>(v)];
}
inline bool is_set_var(Var v) noexcept {
  return v == Var::Extras || v == Var::DependencyGroups || v == Var::VariantProperties ||
         v == Var::VariantFeatures || v == Var::VariantNamespaces;
}
// PEP 825's sets hold `ns :: feature :: value` strings, not names: never name-normalized.
inline bool is_variant_set_var(Var v) noexcept {
  return v == Var::VariantProperties || v == Var::VariantFeatures || v == Var::VariantNamespaces;
}

enum class MOp : std::uint8_t { Lt, Le, Eq, Ne, Ge, Gt, Compatible, Arbitrary, In, NotIn };

inline std::string_view op_text(MOp op) noexcept {
  switch (op) {
    case MOp::Lt:
      return "<";
    case MOp::Le:
      return "<=";
    case MOp::Eq:
      return "==";
    case MOp::Ne:
      return "!=";
    case MOp::Ge:
      return ">=";
    case MOp::Gt:
      return ">";
    case MOp::Compatible:
      return "~=";
    case MOp::Arbitrary:
      return "===";
    case MOp::In:
      return "in";
    case MOp::NotIn:
      return "not in";
  }
  return "==";
}

// packaging 26.3's MARKERS_REQUIRING_VERSION: only these are compared as versions.
inline bool is_version_var(Var v) noexcept {
  return v == Var::PythonVersion || v == Var::PythonFullVersion ||
         v == Var::ImplementationVersion || v == Var::PlatformRelease;
}

inline bool is_version_op(MOp op) noexcept {
  return op != MOp::In && op != MOp::NotIn;
}

inline std::optional<Specifier> make_spec(MOp op, std::string_view rhs) {
  std::string text(op_text(op));
  text += rhs;
  return detail::try_parse_specifier(text);
}

}  // namespace marker_impl

struct MarkerNode {
  struct Operand {
    bool is_var = false;
    marker_impl::Var var = marker_impl::Var::Extra;
    std::string value;  // the decoded literal when !is_var
    [[nodiscard]] std::string_view text() const noexcept {
      return is_var ? marker_impl::var_name(var) : std::string_view(value);
    }
  };
  struct Comparison {
    Operand lhs;
    marker_impl::MOp op = marker_impl::MOp::Eq;
    Operand rhs;
    // Specifier(op + rhs) computed once when the right side is a fixed literal.
    bool spec_cached = false;
    std::optional<Specifier> spec;
  };
  struct Elem {
    enum Kind : std::uint8_t { Cmp, Sub, And, Or } kind = Cmp;
    std::uint32_t index = 0;
  };
  struct List {
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
  };
  std::vector<Comparison> cmps;  // in text order
  std::vector<Elem> elems;       // each list's elements are contiguous
  std::vector<List> lists;       // in completion order: a sub-list comes before its parent
  // The root is lists.back().
};

}  // namespace gpulock::core
