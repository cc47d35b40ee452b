// PEP 508 environment markers with pypa/packaging 26.3 semantics (packaging/_tokenizer.py,
// _parser.py, markers.py), plus PEP 751's `extras` and `dependency_groups` set variables.
//
// packaging behaviours followed where the PEP text differs or is silent:
//  - Grammar as packaging's tokenizer: whitespace is [ \t] only; `and`/`or`/`in`/`not` and the
//    variable names need word boundaries (`"3"and os_name == "a"` is fine); `not in` needs
//    whitespace between the words; accepted variable spellings are exactly packaging's: the
//    PEP 508 names, `os.name`, `sys.platform`, `platform.version`, `platform.machine`,
//    `platform.python_implementation` and `python_implementation` (both mean
//    platform_python_implementation); `platform.release`/`platform.system` are not accepted.
//  - Quoted strings are Python literals evaluated with ast.literal_eval: escapes are decoded
//    (`'\x41'` is "A", `'\101'` is "A", backslash-newline is dropped, unknown escapes like `\d`
//    stay as written); a string ending in an odd backslash, holding a raw line break or a NUL
//    byte is an error.
//  - Comparison (packaging 26.3): for the version variables (python_version,
//    python_full_version, implementation_version, platform_release) packaging first tries
//    `Specifier(op + rhs)`; if that parses, the result is `spec.contains(lhs,
//    prereleases=True)`, false when the left side is not a version. So `python_version ==
//    "3.8.*"` is a wildcard match, and `python_version < "=3.8"` is `<=3.8`. Otherwise, and for
//    every other variable, strings are compared with packaging's table: `==`/`!=` compare,
//    `<=`/`>=` mean `==`, `<`/`>` are false, `in`/`not in` test substrings, `~=`/`===` are an
//    error (UndefinedComparison). A python_full_version ending in "+" (an untagged CPython
//    source build, "3.11.1+") is read as "3.11.1+local".
//  - Which side is "the variable": if the left side is a variable, its value is compared with
//    the right side's text, even when that is a variable too (then its *name* is used); if the
//    left side is a literal, the right side's text names the variable to look up, so
//    `"posix" == "os_name"` compares with os_name's value and `"a" == "b"` is an error.
//  - `extra` (PEP 685): the literal compared with it is normalized when parsed (and printed
//    so), the requested extra when evaluated; they are compared as strings, never as versions.
//  - Every comparison is evaluated (no short circuit), so an error anywhere makes the whole
//    marker an error, even behind a true `or`.
//  - str(Marker): values in double quotes, or single quotes when they hold a double quote.
// Deliberate differences from packaging 26.3:
//  - `extras` / `dependency_groups` (PEP 751): only as the right side of `in` / `not in` with
//    a literal on the left, compared after name normalization.
//  - A value that packaging would print so that it reads back as something else (a backslash
//    that starts an escape, a line break, a NUL byte, both quote characters: packaging raises on
//    the last) is printed with escapes, so printed markers always read back the same.
//  - `\N{name}` escapes are not supported (an error); Python looks the name up.
//  - Case-insensitive extra comparison lowercases ASCII only (Python's lower() is Unicode).
//  - Version numbers above 2^64-1 do not parse, so such comparisons fall back to strings.
#include "gpulock/core/marker.h"

#include <array>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/core/specifier.h"

#include "marker_internal.h"
#include "specifier_internal.h"
#include "text_util.h"

namespace gpulock::core {

namespace {

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

std::string_view var_name(Var v) noexcept {
  return kVarNames[static_cast<std::size_t>(v)];
}
bool is_set_var(Var v) noexcept {
  return v == Var::Extras || v == Var::DependencyGroups || v == Var::VariantProperties ||
         v == Var::VariantFeatures || v == Var::VariantNamespaces;
}
// PEP 825's sets hold `ns :: feature :: value` strings, not names: never name-normalized.
bool is_variant_set_var(Var v) noexcept {
  return v == Var::VariantProperties || v == Var::VariantFeatures || v == Var::VariantNamespaces;
}

enum class MOp : std::uint8_t { Lt, Le, Eq, Ne, Ge, Gt, Compatible, Arbitrary, In, NotIn };

std::string_view op_text(MOp op) noexcept {
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

}  // namespace

struct MarkerNode {
  struct Operand {
    bool is_var = false;
    Var var = Var::Extra;
    std::string value;  // the decoded literal when !is_var
    [[nodiscard]] std::string_view text() const noexcept {
      return is_var ? var_name(var) : std::string_view(value);
    }
  };
  struct Comparison {
    Operand lhs;
    MOp op = MOp::Eq;
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

namespace {

using Node = MarkerNode;

Error marker_error(std::string_view text, std::size_t pos, std::string_view what) {
  return make_error(ErrorCode::InvalidMarker,
                    fmt::format("invalid marker {}: {}", quote_for_message(text), what), {}, 0,
                    pos + 1);
}

// ---------------------------------------------------------------------------------------------
// Tokens (packaging's DEFAULT_RULES).

bool keyword_at(std::string_view s, std::size_t p, std::string_view word) noexcept {
  return s.substr(p, word.size()) == word && detail::word_boundary(s, p) &&
         detail::word_boundary(s, p + word.size());
}

struct VarMatch {
  Var var;
  std::size_t len;
};

// VARIABLE: \b(python_version|python_full_version|os[._]name|sys[._]platform|
// platform_(release|system)|platform[._](version|machine|python_implementation)|
// python_implementation|implementation_(name|version)|extra)\b, plus extras/dependency_groups.
std::optional<VarMatch> match_variable(std::string_view s, std::size_t p) noexcept {
  struct Spelling {
    std::string_view text;
    Var var;
  };
  static constexpr Spelling kSpellings[] = {
      {"python_version", Var::PythonVersion},
      {"python_full_version", Var::PythonFullVersion},
      {"os_name", Var::OsName},
      {"os.name", Var::OsName},
      {"sys_platform", Var::SysPlatform},
      {"sys.platform", Var::SysPlatform},
      {"platform_release", Var::PlatformRelease},
      {"platform_system", Var::PlatformSystem},
      {"platform_version", Var::PlatformVersion},
      {"platform.version", Var::PlatformVersion},
      {"platform_machine", Var::PlatformMachine},
      {"platform.machine", Var::PlatformMachine},
      {"platform_python_implementation", Var::PlatformPythonImplementation},
      {"platform.python_implementation", Var::PlatformPythonImplementation},
      {"python_implementation", Var::PlatformPythonImplementation},
      {"implementation_name", Var::ImplementationName},
      {"implementation_version", Var::ImplementationVersion},
      {"variant_label", Var::VariantLabel},
      {"variant_properties", Var::VariantProperties},
      {"variant_features", Var::VariantFeatures},
      {"variant_namespaces", Var::VariantNamespaces},
      {"extra", Var::Extra},
      {"extras", Var::Extras},
      {"dependency_groups", Var::DependencyGroups},
  };
  if (!detail::word_boundary(s, p)) return std::nullopt;
  for (const auto& sp : kSpellings) {
    if (s.substr(p, sp.text.size()) == sp.text && detail::word_boundary(s, p + sp.text.size())) {
      return VarMatch{sp.var, sp.text.size()};
    }
  }
  return std::nullopt;
}

std::optional<std::pair<MOp, std::size_t>> match_op(std::string_view s, std::size_t p) noexcept {
  static constexpr std::pair<std::string_view, MOp> kOps[] = {
      {"===", MOp::Arbitrary}, {"==", MOp::Eq}, {"~=", MOp::Compatible}, {"!=", MOp::Ne},
      {"<=", MOp::Le},         {">=", MOp::Ge}, {"<", MOp::Lt},          {">", MOp::Gt},
  };
  for (const auto& [text, op] : kOps) {
    if (s.substr(p, text.size()) == text) return std::make_pair(op, text.size());
  }
  return std::nullopt;
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// ast.literal_eval of the quoted token s[begin, end) (quotes included). Returns the position
// of the problem through `error_pos` on failure.
bool decode_literal(std::string_view s, std::size_t begin, std::size_t end, std::string& out,
                    std::size_t& error_pos, std::string& error) {
  out.clear();
  std::size_t i = begin + 1;
  std::size_t stop = end - 1;  // the closing quote
  if (std::size_t nul = s.substr(0, end).find('\0', begin); nul != std::string_view::npos) {
    error_pos = nul;
    error = "a quoted string cannot contain a NUL byte";
    return false;
  }
  while (i < stop) {
    // Copy the run of ordinary characters in one go.
    std::size_t special = s.substr(0, stop).find_first_of("\\\n\r", i);
    if (special == std::string_view::npos) special = stop;
    out.append(s.substr(i, special - i));
    i = special;
    if (i >= stop) break;
    char c = s[i];
    if (c == '\n' || c == '\r') {
      error_pos = i;
      error = "line break inside a quoted string";
      return false;
    }
    if (i + 1 >= stop) {
      error_pos = i;
      error = "the backslash escapes the closing quote: unterminated string";
      return false;
    }
    char n = s[i + 1];
    std::size_t esc = i;
    i += 2;
    switch (n) {
      case '\n':
        break;  // line continuation
      case '\r':
        if (i < stop && s[i] == '\n') ++i;
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case '"':
        out.push_back('"');
        break;
      case 'a':
        out.push_back('\a');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case 'x':
      case 'u':
      case 'U': {
        std::size_t digits = n == 'x' ? 2 : (n == 'u' ? 4 : 8);
        std::uint32_t cp = 0;
        for (std::size_t d = 0; d < digits; ++d) {
          int h = i + d < stop ? hex_value(s[i + d]) : -1;
          if (h < 0) {
            error_pos = esc;
            error = fmt::format("truncated \\{} escape", n);
            return false;
          }
          cp = cp * 16 + static_cast<std::uint32_t>(h);
        }
        if (cp > 0x10ffff) {
          error_pos = esc;
          error = "illegal Unicode character in \\U escape";
          return false;
        }
        i += digits;
        append_utf8(out, cp);
        break;
      }
      case 'N':
        error_pos = esc;
        error = "\\N{...} escapes are not supported";
        return false;
      default:
        if (n >= '0' && n <= '7') {
          std::uint32_t cp = static_cast<std::uint32_t>(n - '0');
          for (int d = 0; d < 2 && i < stop && s[i] >= '0' && s[i] <= '7'; ++d, ++i) {
            cp = cp * 8 + static_cast<std::uint32_t>(s[i] - '0');
          }
          append_utf8(out, cp);
        } else {
          // Unknown escape: Python keeps the backslash and the character.
          out.push_back('\\');
          i = esc + 1;
        }
        break;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Parser: packaging's recursive descent, run with an explicit stack of open parentheses.

struct Parser {
  std::string_view s;
  std::size_t p;
  Node& node;
  std::optional<Error> error;

  bool fail(std::size_t pos, std::string_view what) {
    error = marker_error(s, pos, what);
    return false;
  }

  bool parse_operand(Node::Operand& out) {
    if (auto v = match_variable(s, p)) {
      out.is_var = true;
      out.var = v->var;
      p += v->len;
      return true;
    }
    if (p < s.size() && (s[p] == '\'' || s[p] == '"')) {
      std::size_t close = s.find(s[p], p + 1);
      if (close != std::string_view::npos) {
        std::size_t err_pos = 0;
        std::string what;
        if (!decode_literal(s, p, close + 1, out.value, err_pos, what)) return fail(err_pos, what);
        out.is_var = false;
        p = close + 1;
        return true;
      }
      return fail(p, "unterminated quoted string");
    }
    return fail(p, "expected a marker variable or quoted string");
  }

  bool parse_item(Node::Comparison& c) {
    if (!parse_operand(c.lhs)) return false;
    p = detail::skip_ws(s, p);
    if (keyword_at(s, p, "in")) {
      c.op = MOp::In;
      p += 2;
    } else if (keyword_at(s, p, "not")) {
      p += 3;
      std::size_t q = detail::skip_ws(s, p);
      if (q == p) return fail(p, "expected whitespace after 'not'");
      p = q;
      if (!keyword_at(s, p, "in")) return fail(p, "expected 'in' after 'not'");
      c.op = MOp::NotIn;
      p += 2;
    } else if (auto op = match_op(s, p)) {
      c.op = op->first;
      p += op->second;
    } else {
      return fail(p,
                  "expected a marker operator, one of <=, <, !=, ==, >=, >, ~=, ===, in, not in");
    }
    p = detail::skip_ws(s, p);
    if (!parse_operand(c.rhs)) return false;
    p = detail::skip_ws(s, p);
    return true;
  }

  bool run() {
    struct Frame {
      std::size_t open_pos;
      std::size_t first_elem;  // index into `pending`
    };
    std::vector<Frame> frames;
    std::vector<Node::Elem> pending;
    frames.push_back({std::string_view::npos, 0});
    auto close_list = [&](const Frame& f) {
      Node::List list;
      list.begin = static_cast<std::uint32_t>(node.elems.size());
      node.elems.insert(node.elems.end(),
                        pending.begin() + static_cast<std::ptrdiff_t>(f.first_elem), pending.end());
      list.end = static_cast<std::uint32_t>(node.elems.size());
      pending.resize(f.first_elem);
      node.lists.push_back(list);
      return static_cast<std::uint32_t>(node.lists.size() - 1);
    };
    bool want_atom = true;
    while (true) {
      if (want_atom) {
        p = detail::skip_ws(s, p);
        if (p < s.size() && s[p] == '(') {
          frames.push_back({p, pending.size()});
          ++p;
          continue;
        }
        Node::Comparison c;
        if (!parse_item(c)) return false;
        node.cmps.push_back(std::move(c));
        pending.push_back({Node::Elem::Cmp, static_cast<std::uint32_t>(node.cmps.size() - 1)});
        want_atom = false;
        continue;
      }
      p = detail::skip_ws(s, p);
      if (keyword_at(s, p, "and") || keyword_at(s, p, "or")) {
        bool is_and = s[p] == 'a';
        pending.push_back({is_and ? Node::Elem::And : Node::Elem::Or, 0});
        p += is_and ? 3 : 2;
        want_atom = true;
        continue;
      }
      if (frames.size() == 1) break;
      if (p >= s.size() || s[p] != ')') {
        return fail(p, fmt::format("expected ')' to close the '(' at column {}",
                                   frames.back().open_pos + 1));
      }
      ++p;
      std::uint32_t sub = close_list(frames.back());
      frames.pop_back();
      pending.push_back({Node::Elem::Sub, sub});
    }
    close_list(frames.back());
    return true;
  }
};

// packaging 26.3's _normalize_extra_values: in every comparison of `extra` with a literal, and
// in every `"name" in extras` / `"name" in dependency_groups`, the literal is replaced by its
// normalized name (PEP 685), which is what str() prints and what evaluate() compares.
void normalize_extras(Node& node) {
  for (Node::Comparison& c : node.cmps) {
    if (c.lhs.is_var && c.lhs.var == Var::Extra && !c.rhs.is_var) {
      c.rhs.value = normalize_name(c.rhs.value);
    } else if (c.rhs.is_var && !c.lhs.is_var &&
               (c.rhs.var == Var::Extra ||
                (is_set_var(c.rhs.var) && !is_variant_set_var(c.rhs.var)))) {
      c.lhs.value = normalize_name(c.lhs.value);
    }
  }
}

// packaging 26.3's MARKERS_REQUIRING_VERSION: only these are compared as versions.
bool is_version_var(Var v) noexcept {
  return v == Var::PythonVersion || v == Var::PythonFullVersion ||
         v == Var::ImplementationVersion || v == Var::PlatformRelease;
}

bool is_version_op(MOp op) noexcept {
  return op != MOp::In && op != MOp::NotIn;
}

std::optional<Specifier> make_spec(MOp op, std::string_view rhs) {
  std::string text(op_text(op));
  text += rhs;
  return detail::try_parse_specifier(text);
}

void cache_specs(Node& node) {
  for (auto& c : node.cmps) {
    if (c.lhs.is_var && !c.rhs.is_var && is_version_op(c.op) && is_version_var(c.lhs.var)) {
      c.spec = make_spec(c.op, c.rhs.value);
      c.spec_cached = true;
    }
  }
}

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
    std::string_view part = text.substr(i, at - i);
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t'))
      part.remove_suffix(1);
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

// ---------------------------------------------------------------------------------------------
// Printing.

// Whether a backslash followed by `next` in a value would be read as an escape (or, for the
// characters escaped below, be followed by one).
bool starts_escape(char next) noexcept {
  using namespace std::string_view_literals;
  constexpr std::string_view kEscapes = "\0\n\r\\'\"abfnrtvxuUN01234567"sv;
  return kEscapes.find(next) != std::string_view::npos;
}

// packaging's Value.serialize: double quotes unless the value holds one, then single quotes,
// the value written as it is. That text is read back by the parser (packaging's tokenizer takes
// a quoted string up to the next quote of its kind, then ast.literal_eval), so where the raw
// value would be read as something else it is escaped in a way both read back: a backslash that
// would start an escape (or escape the closing quote) is doubled, a line break or NUL byte is
// written `\n`, `\r`, `\x00`, and a value holding both quote characters (packaging raises) has
// its double quotes written `\x22` (`\"` would end the token). Every other value prints as
// packaging prints it.
void append_operand(std::string& out, const Node::Operand& o) {
  if (o.is_var) {
    out += var_name(o.var);
    return;
  }
  const std::string& v = o.value;
  bool dq = v.find('"') != std::string::npos;
  bool sq = v.find('\'') != std::string::npos;
  char q = dq && !sq ? '\'' : '"';
  out.push_back(q);
  for (std::size_t i = 0; i < v.size(); ++i) {
    char ch = v[i];
    switch (ch) {
      case '\\':
        out += i + 1 == v.size() || starts_escape(v[i + 1]) ? "\\\\" : "\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\x00";
        break;
      case '"':
        out += q == '"' ? "\\x22" : "\"";
        break;
      default:
        out.push_back(ch);
    }
  }
  out.push_back(q);
}

std::string format_node(const Node& node) {
  struct Task {
    enum Kind : std::uint8_t { List, Cmp, Text } kind;
    std::uint32_t index;
    bool first;
    std::string_view text;
  };
  std::string out;
  std::vector<Task> stack;
  stack.push_back({Task::List, static_cast<std::uint32_t>(node.lists.size() - 1), true, {}});
  while (!stack.empty()) {
    Task t = stack.back();
    stack.pop_back();
    if (t.kind == Task::Text) {
      out += t.text;
      continue;
    }
    if (t.kind == Task::Cmp) {
      const auto& c = node.cmps[t.index];
      append_operand(out, c.lhs);
      out.push_back(' ');
      out += op_text(c.op);
      out.push_back(' ');
      append_operand(out, c.rhs);
      continue;
    }
    const Node::List& list = node.lists[t.index];
    if (list.end - list.begin == 1) {
      // A single atom: no parentheses of its own; `first` passes through (packaging resets it
      // to True here, which loses needed parentheses around `((a or b))`).
      const Node::Elem& e = node.elems[list.begin];
      if (e.kind == Node::Elem::Cmp) {
        stack.push_back({Task::Cmp, e.index, false, {}});
      } else {
        stack.push_back({Task::List, e.index, t.first, {}});
      }
      continue;
    }
    if (!t.first) stack.push_back({Task::Text, 0, false, ")"});
    for (std::uint32_t k = list.end; k-- > list.begin;) {
      const Node::Elem& e = node.elems[k];
      switch (e.kind) {
        case Node::Elem::Cmp:
          stack.push_back({Task::Cmp, e.index, false, {}});
          break;
        case Node::Elem::Sub:
          stack.push_back({Task::List, e.index, false, {}});
          break;
        case Node::Elem::And:
          stack.push_back({Task::Text, 0, false, "and"});
          break;
        case Node::Elem::Or:
          stack.push_back({Task::Text, 0, false, "or"});
          break;
      }
      if (k != list.begin) stack.push_back({Task::Text, 0, false, " "});
    }
    if (!t.first) stack.push_back({Task::Text, 0, false, "("});
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Result<Marker> MarkerAccess::parse_at(std::string_view text, std::size_t& pos) {
  auto node = std::make_shared<MarkerNode>();
  Parser parser{text, pos, *node, std::nullopt};
  if (!parser.run()) return std::unexpected(std::move(*parser.error));
  normalize_extras(*node);
  cache_specs(*node);
  pos = parser.p;
  Marker m;
  m.root_ = std::move(node);
  return m;
}

Result<Marker> Marker::parse(std::string_view text) {
  std::size_t pos = 0;
  auto m = MarkerAccess::parse_at(text, pos);
  if (!m) return m;
  // packaging 26.3's END token is \Z: not even a final newline may follow.
  bool at_end = pos == text.size();
  if (!at_end) {
    return std::unexpected(
        marker_error(text, pos, "expected 'and', 'or' or the end of the marker"));
  }
  return m;
}

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

bool Marker::mentions_extra() const noexcept {
  if (!root_) return false;
  for (const auto& c : root_->cmps) {
    if ((c.lhs.is_var && c.lhs.var == Var::Extra) || (c.rhs.is_var && c.rhs.var == Var::Extra)) {
      return true;
    }
  }
  return false;
}

std::string Marker::to_string() const {
  if (!root_) return {};
  return format_node(*root_);
}

Marker Marker::conjunction(const Marker& a, const Marker& b) {
  if (!a.root_) return b;
  if (!b.root_) return a;
  auto node = std::make_shared<MarkerNode>(*a.root_);
  const MarkerNode& nb = *b.root_;
  auto cmp_off = static_cast<std::uint32_t>(node->cmps.size());
  auto elem_off = static_cast<std::uint32_t>(node->elems.size());
  auto list_off = static_cast<std::uint32_t>(node->lists.size());
  node->cmps.insert(node->cmps.end(), nb.cmps.begin(), nb.cmps.end());
  for (auto e : nb.elems) {
    if (e.kind == MarkerNode::Elem::Cmp) e.index += cmp_off;
    if (e.kind == MarkerNode::Elem::Sub) e.index += list_off;
    node->elems.push_back(e);
  }
  for (auto l : nb.lists) {
    l.begin += elem_off;
    l.end += elem_off;
    node->lists.push_back(l);
  }
  // (a) and (b): a new root whose elements are the two old roots.
  MarkerNode::List root;
  root.begin = static_cast<std::uint32_t>(node->elems.size());
  node->elems.push_back({MarkerNode::Elem::Sub, list_off - 1});
  node->elems.push_back({MarkerNode::Elem::And, 0});
  node->elems.push_back(
      {MarkerNode::Elem::Sub, static_cast<std::uint32_t>(node->lists.size() - 1)});
  root.end = static_cast<std::uint32_t>(node->elems.size());
  node->lists.push_back(root);
  Marker m;
  m.root_ = std::move(node);
  return m;
}

}  // namespace gpulock::core
