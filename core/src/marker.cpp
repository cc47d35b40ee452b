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
//
// The tree (MarkerNode) is in marker_node.h; this file holds its operations (mentions_extra,
// conjunction); marker_parse.cpp parses, marker_eval.cpp evaluates, marker_print.cpp prints.
#include "gpulock/core/marker.h"

#include <cstdint>
#include <memory>

#include "marker_node.h"

namespace gpulock::core {

using namespace marker_impl;

bool Marker::mentions_extra() const noexcept {
  if (!root_) return false;
  for (const auto& c : root_->cmps) {
    if ((c.lhs.is_var && c.lhs.var == Var::Extra) || (c.rhs.is_var && c.rhs.var == Var::Extra)) {
      return true;
    }
  }
  return false;
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
