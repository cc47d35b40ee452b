// Marker parsing: packaging's tokens (DEFAULT_RULES), its quoted-string literals, and its
// recursive descent parser, then the normalisation of extras and the cached specifiers.

#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"

#include "marker_internal.h"
#include "marker_node.h"
#include "text_util.h"

namespace gpulock::core {

using namespace marker_impl;

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

void cache_specs(Node& node) {
  for (auto& c : node.cmps) {
    if (c.lhs.is_var && !c.rhs.is_var && is_version_op(c.op) && is_version_var(c.lhs.var)) {
      c.spec = make_spec(c.op, c.rhs.value);
      c.spec_cached = true;
    }
  }
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

}  // namespace gpulock::core
