// Marker evaluation against an environment (packaging 26.3's comparison rules).

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"

#include "marker_node.h"
#include "text_util.h"

namespace gpulock::core {

using namespace marker_impl;

namespace {

using Node = MarkerNode;

// ---------------------------------------------------------------------------------------------
// Evaluation.

std::optional<Var> string_var_by_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i <= static_cast<std::size_t>(Var::Extra); ++i) {
    if (kVarNames[i] == name) return static_cast<Var>(i);
  }
  return std::nullopt;
}

std::string_view var_value(Var v, const Environment& env, std::string_view extra) noexcept {
  switch (v) {
    case Var::PythonVersion:
      return env.python_version;
    case Var::PythonFullVersion:
      return env.python_full_version;
    case Var::OsName:
      return env.os_name;
    case Var::SysPlatform:
      return env.sys_platform;
    case Var::PlatformRelease:
      return env.platform_release;
    case Var::PlatformSystem:
      return env.platform_system;
    case Var::PlatformVersion:
      return env.platform_version;
    case Var::PlatformMachine:
      return env.platform_machine;
    case Var::PlatformPythonImplementation:
      return env.platform_python_implementation;
    case Var::ImplementationName:
      return env.implementation_name;
    case Var::ImplementationVersion:
      return env.implementation_version;
    case Var::VariantLabel:
      return env.variant_label;
    case Var::Extra:
      return extra;
    case Var::Extras:
    case Var::DependencyGroups:
    case Var::VariantProperties:
    case Var::VariantFeatures:
    case Var::VariantNamespaces:
      return {};
  }
  return {};
}

// packaging 26.3's _eval_op: a version variable is compared as a version when `op rhs` parses
// as a specifier (a left side that is not a version matches nothing); everything else, `extra`
// included, compares strings with packaging's table: `<` and `>` are false, `<=` and `>=` mean
// equal, `in` is a substring test, `~=` and `===` are an error.
Result<bool> eval_op(std::string_view lhs, MOp op, std::string_view rhs, bool version_var,
                     const std::optional<Specifier>* cached) {
  if (op == MOp::In || op == MOp::NotIn) {
    bool found = rhs.find(lhs) != std::string_view::npos;
    return op == MOp::In ? found : !found;
  }
  if (version_var) {
    std::optional<Specifier> computed;
    const std::optional<Specifier>& spec = cached ? *cached : (computed = make_spec(op, rhs));
    if (spec) return spec->contains_text(lhs, true);
  }
  switch (op) {
    case MOp::Lt:
    case MOp::Gt:
      return false;
    case MOp::Le:
    case MOp::Eq:
    case MOp::Ge:
      return lhs == rhs;
    case MOp::Ne:
      return lhs != rhs;
    default:
      return fail(
          ErrorCode::InvalidMarker,
          fmt::format("undefined comparison {} {} {}: '{}' needs versions on both sides",
                      quote_for_message(lhs), op_text(op), quote_for_message(rhs), op_text(op)));
  }
}

Result<bool> eval_set(const Node::Comparison& c, const std::set<std::string>& values) {
  if (c.lhs.is_var || (c.op != MOp::In && c.op != MOp::NotIn)) {
    return fail(ErrorCode::InvalidMarker, fmt::format("'{}' can only be used as: \"name\" in {}",
                                                      var_name(c.rhs.var), var_name(c.rhs.var)));
  }
  std::string wanted = normalize_name(c.lhs.value);
  bool found = false;
  for (const auto& v : values) {
    if (normalize_name(v) == wanted) {
      found = true;
      break;
    }
  }
  return c.op == MOp::In ? found : !found;
}

// PEP 825: `ns :: feature :: value` with the whitespace around `::` ignored.
std::string without_spaces_around_colons(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    auto at = text.find("::", i);
    if (at == std::string_view::npos) {
      out += text.substr(i);
      break;
    }
    std::string_view part = trim_right(text.substr(i, at - i), " \t");
    out += part;
    out += "::";
    i = at + 2;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
      ++i;
  }
  return out;
}

Result<bool> eval_variant_set(const Node::Comparison& c, const std::set<std::string>& values) {
  if (c.lhs.is_var || (c.op != MOp::In && c.op != MOp::NotIn)) {
    return fail(ErrorCode::InvalidMarker, fmt::format("'{}' can only be used as: \"value\" in {}",
                                                      var_name(c.rhs.var), var_name(c.rhs.var)));
  }
  std::string wanted = without_spaces_around_colons(c.lhs.value);
  bool found = false;
  for (const auto& v : values) {
    if (without_spaces_around_colons(v) == wanted) {
      found = true;
      break;
    }
  }
  return c.op == MOp::In ? found : !found;
}

Result<bool> eval_comparison(const Node::Comparison& c, const Environment& env,
                             std::string_view extra) {
  Var key;
  std::string_view lhs;
  std::string_view rhs;
  const std::optional<Specifier>* cached = nullptr;
  if (c.lhs.is_var) {
    key = c.lhs.var;
    if (is_set_var(key)) {
      return fail(ErrorCode::InvalidMarker, fmt::format("'{}' can only be used as: \"name\" in {}",
                                                        var_name(key), var_name(key)));
    }
    lhs = var_value(key, env, extra);
    rhs = c.rhs.text();
    if (c.spec_cached) cached = &c.spec;
  } else {
    lhs = c.lhs.value;
    if (c.rhs.is_var) {
      key = c.rhs.var;
      if (key == Var::Extras) return eval_set(c, env.extras);
      if (key == Var::DependencyGroups) return eval_set(c, env.dependency_groups);
      if (key == Var::VariantProperties) return eval_variant_set(c, env.variant_properties);
      if (key == Var::VariantFeatures) return eval_variant_set(c, env.variant_features);
      if (key == Var::VariantNamespaces) return eval_variant_set(c, env.variant_namespaces);
    } else {
      auto named = string_var_by_name(c.rhs.value);
      if (!named) {
        return fail(ErrorCode::InvalidMarker,
                    fmt::format("cannot evaluate {} {} {}: a comparison needs a marker variable",
                                quote_for_message(c.lhs.value), op_text(c.op),
                                quote_for_message(c.rhs.value)));
      }
      key = *named;  // packaging looks the right-hand text up as a variable name
    }
    rhs = var_value(key, env, extra);
  }
  if (key == Var::Extra) {
    // The literal was normalized by the parser; the requested extra is normalized here.
    std::string requested = normalize_name(extra);
    if (c.lhs.is_var) return eval_op(requested, c.op, rhs, false, cached);
    return eval_op(lhs, c.op, requested, false, cached);
  }
  if (key == Var::PythonFullVersion && !env.python_full_version.empty() &&
      env.python_full_version.back() == '+') {
    // An untagged CPython source build reports "3.11.1+"; packaging 26.3 reads it as
    // "3.11.1+local".
    std::string repaired = pep440_python_full_version(env.python_full_version);
    if (c.lhs.is_var) return eval_op(repaired, c.op, rhs, true, cached);
    return eval_op(lhs, c.op, repaired, true, cached);
  }
  return eval_op(lhs, c.op, rhs, is_version_var(key), cached);
}

}  // namespace

Result<bool> Marker::evaluate(const Environment& env, std::string_view extra) const {
  if (!root_) return true;
  const MarkerNode& node = *root_;
  std::vector<std::uint8_t> cmp_value(node.cmps.size());
  for (std::size_t i = 0; i < node.cmps.size(); ++i) {
    auto r = eval_comparison(node.cmps[i], env, extra);
    if (!r) return std::unexpected(std::move(r.error()));
    cmp_value[i] = *r ? 1 : 0;
  }
  std::vector<std::uint8_t> list_value(node.lists.size());
  for (std::size_t li = 0; li < node.lists.size(); ++li) {
    const auto& list = node.lists[li];
    bool any = false;  // any(all(group) for group in groups split at "or")
    bool all = true;
    for (std::uint32_t k = list.begin; k < list.end; ++k) {
      const auto& e = node.elems[k];
      switch (e.kind) {
        case MarkerNode::Elem::Cmp:
          all = all && cmp_value[e.index];
          break;
        case MarkerNode::Elem::Sub:
          all = all && list_value[e.index];
          break;
        case MarkerNode::Elem::Or:
          any = any || all;
          all = true;
          break;
        case MarkerNode::Elem::And:
          break;
      }
    }
    list_value[li] = (any || all) ? 1 : 0;
  }
  return list_value.back() != 0;
}

bool Marker::matches(const Environment& env, std::string_view extra) const {
  auto r = evaluate(env, extra);
  return r.has_value() && *r;
}

}  // namespace gpulock::core
