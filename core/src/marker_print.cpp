// Marker printing: str(Marker), with values escaped so that they read back the same.

#include <string>

#include "gpulock/core/marker.h"

#include "marker_node.h"

namespace gpulock::core {

using namespace marker_impl;

namespace {

using Node = MarkerNode;

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

std::string Marker::to_string() const {
  if (!root_) return {};
  return format_node(*root_);
}

}  // namespace gpulock::core
