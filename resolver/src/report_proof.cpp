// The Reporter's proof: the brief proof's plan (which derivations it states as facts), the
// numbered lines of doc/solver.md §Error Reporting, and the hints.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report_impl.h"

namespace gpulock::resolver::reporting {

// --- the brief proof ---------------------------------------------------------------------

std::size_t Reporter::size_of(std::size_t i, std::map<std::size_t, std::size_t>& memo) const {
  if (leaf(i)) return 0;
  if (auto it = memo.find(i); it != memo.end()) return it->second;
  std::size_t n = 1 + size_of(node(i).cause1, memo) + size_of(node(i).cause2, memo);
  memo[i] = n;
  return n;
}

bool Reporter::holds_deciding(std::size_t i, std::map<std::size_t, bool>& memo) const {
  if (deciding_.contains(i)) return true;
  if (leaf(i)) return false;
  if (auto it = memo.find(i); it != memo.end()) return it->second;
  bool b = holds_deciding(node(i).cause1, memo) || holds_deciding(node(i).cause2, memo);
  memo[i] = b;
  return b;
}

// Walks the path to the deciding fact (or, where none decides, the smaller side) and states
// every other derivation of two or more lines as a fact.
void Reporter::plan_trim(std::size_t root) {
  std::map<std::size_t, std::size_t> sizes;
  std::map<std::size_t, bool> holds;
  std::size_t i = root;
  while (!leaf(i)) {
    std::size_t c1 = node(i).cause1;
    std::size_t c2 = node(i).cause2;
    bool d1 = !leaf(c1);
    bool d2 = !leaf(c2);
    if (!d1 && !d2) return;
    if (d1 != d2) {
      i = d1 ? c1 : c2;
      continue;
    }
    bool h1 = holds_deciding(c1, holds);
    bool h2 = holds_deciding(c2, holds);
    std::size_t keep = c1;
    std::size_t other = c2;
    if (h1 != h2) {
      keep = h1 ? c1 : c2;
      other = h1 ? c2 : c1;
    } else if (size_of(c2, sizes) < size_of(c1, sizes)) {
      keep = c2;
      other = c1;
    }
    if (size_of(other, sizes) >= 2) asserted_.insert(other);
    i = keep;
  }
}

// --- the proof's lines and hints --------------------------------------------------------

std::optional<std::size_t> Reporter::line_of(std::size_t i) const {
  auto it = refs_.find(i);
  if (it == refs_.end()) return std::nullopt;
  return it->second;
}

void Reporter::write(std::size_t i, std::string line, bool numbered) {
  if (numbered && !refs_.contains(i)) {
    ++count_;
    line += " (" + std::to_string(count_) + ")";
    refs_[i] = count_;
  }
  lines_.push_back(std::move(line));
}

bool Reporter::single_line(std::size_t i) const {
  const auto& n = node(i);
  return is_external(n.cause1) && is_external(n.cause2);
}

// pub's _isCollapsible: a derived cause that can be folded into the next line.
bool Reporter::collapsible(std::size_t i) const {
  const auto& n = node(i);
  if (n.shared_id) return false;
  bool e1 = is_external(n.cause1);
  bool e2 = is_external(n.cause2);
  if (e1 == e2) return false;
  std::size_t complex = e1 ? n.cause2 : n.cause1;
  return !refs_.contains(complex);
}

// doc/solver.md §Error Reporting, steps 1-3.
void Reporter::visit(std::size_t i, bool conclusion_line) {
  if (refs_.contains(i)) return;  // already explained, with a line number
  const auto& n = node(i);
  bool numbered = conclusion_line || n.shared_id.has_value();
  std::string concl = conclusion(i);
  std::size_t c1 = n.cause1;
  std::size_t c2 = n.cause2;
  bool e1 = is_external(c1);
  bool e2 = is_external(c2);

  if (!e1 && !e2) {
    auto l1 = line_of(c1);
    auto l2 = line_of(c2);
    if (l1 && l2) {  // 1.i
      write(i,
            "Because " + conclusion(c1) + " (" + std::to_string(*l1) + ") and " + conclusion(c2) +
                " (" + std::to_string(*l2) + "), " + concl + ".",
            numbered);
    } else if (l1 || l2) {  // 1.ii
      std::size_t with = l1 ? c1 : c2;
      std::size_t without = l1 ? c2 : c1;
      visit(without, false);
      write(i,
            "And because " + conclusion(with) + " (" + std::to_string(*line_of(with)) + "), " +
                concl + ".",
            numbered);
    } else if (single_line(c1) || single_line(c2)) {  // 1.iii.a
      std::size_t first = single_line(c2) ? c1 : c2;
      std::size_t second = single_line(c2) ? c2 : c1;
      visit(first, false);
      if (auto l = line_of(second)) {
        // `second` was shared and got explained inside `first`.
        write(i,
              "And because " + conclusion(second) + " (" + std::to_string(*l) + "), " + concl + ".",
              numbered);
      } else {
        visit(second, false);
        write(i, "Thus, " + concl + ".", numbered);
      }
    } else {  // 1.iii.b
      visit(c1, /*conclusion=*/true);
      std::size_t n1 = *line_of(c1);
      if (auto n2 = line_of(c2)) {
        write(i,
              "Because " + conclusion(c1) + " (" + std::to_string(n1) + ") and " + conclusion(c2) +
                  " (" + std::to_string(*n2) + "), " + concl + ".",
              numbered);
      } else {
        lines_.emplace_back();
        visit(c2, false);
        write(i, "And because " + conclusion(c1) + " (" + std::to_string(n1) + "), " + concl + ".",
              numbered);
      }
    }
    return;
  }
  if (e1 != e2) {
    std::size_t derived = e1 ? c2 : c1;
    std::size_t external = e1 ? c1 : c2;
    if (auto l = line_of(derived)) {  // 2.i
      write(i,
            "Because " + conclusion(derived) + " (" + std::to_string(*l) + ") and " +
                fact(external).text + ", " + concl + ".",
            numbered);
    } else if (collapsible(derived)) {  // 2.ii
      const auto& dn = node(derived);
      bool de1 = is_external(dn.cause1);
      std::size_t prior_derived = de1 ? dn.cause2 : dn.cause1;
      std::size_t prior_external = de1 ? dn.cause1 : dn.cause2;
      visit(prior_derived, false);
      write(i, "And because " + facts_and(prior_external, external) + ", " + concl + ".", numbered);
    } else {  // 2.iii
      visit(derived, false);
      write(i, "And because " + fact(external).text + ", " + concl + ".", numbered);
    }
    return;
  }
  // 3: both external.
  write(i, "Because " + facts_and(c1, c2) + ", " + concl + ".", numbered);
}

std::vector<std::string> Reporter::hints() const {
  std::vector<std::string> out;
  auto add = [&](std::string h) {
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(std::move(h));
  };
  std::vector<const PackageInfo*> seen;
  auto see = [&](const PackageInfo& p) {
    if (p.is_root) return;
    for (const auto* s : seen)
      if (s->name == p.name) return;
    seen.push_back(&p);
  };
  for (const auto& n : tree_.nodes) {
    for (const auto& t : n.terms)
      see(t.package());
    if (n.kind != NodeKind::Unavailable || n.terms.empty()) continue;
    const Term& t = n.terms[0];
    std::string versions;
    for (const auto& v : t.versions.versions()) {
      if (!versions.empty()) versions += ", ";
      versions += v.to_string();
    }
    const std::string name = t.package().display_name();
    if (n.reason.kind == UnavailableKind::PrereleaseDisallowed) {
      add("pre-releases of " + name + " would satisfy the requirements (" + versions +
          "), but pre-releases are disallowed (try --prerelease allow)");
    } else if (n.reason.kind == UnavailableKind::Yanked && n.reason.message.empty()) {
      add("yanked versions of " + name + " (" + versions +
          ") are used only when a requirement pins them exactly with ==");
    } else if (n.reason.kind == UnavailableKind::Yanked) {
      add(name + " " + versions + ", which " + n.reason.message +
          ", is used only when a requirement pins it exactly with ==");
    }
  }
  for (const auto* p : seen) {
    for (auto& h : d_.package_hints(*p))
      add(std::move(h));
  }
  return out;
}

}  // namespace gpulock::resolver::reporting
