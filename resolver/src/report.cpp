// Error reporting after dart pub doc/solver.md §Error Reporting (and pub's
// lib/src/solver/failure.dart), with the sentence forms documented in report.h.

#include "gpulock/resolver/report.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpulock::resolver {
namespace {

std::string join_or(const std::vector<std::string>& parts, std::string_view word) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) out += (i + 1 == parts.size()) ? " " + std::string(word) + " " : ", ";
    out += parts[i];
  }
  return out;
}

std::string default_reason_text(const UnavailableReason& r) {
  if (!r.message.empty()) return r.message;
  switch (r.kind) {
    case UnavailableKind::NoCompatibleWheel:
      return "has no wheel for the target environment";
    case UnavailableKind::OnlySdist:
      return "has only a source distribution (building from source is not supported)";
    case UnavailableKind::OtherPlatforms:
      return "has wheels only for other platforms or Pythons";
    case UnavailableKind::RequiresPython:
      return "does not support the target Python";
    case UnavailableKind::Yanked:
      return "is yanked";
    case UnavailableKind::ExcludedNewer:
      return "was uploaded after the --exclude-newer cutoff";
    case UnavailableKind::MetadataError:
      return "has unreadable metadata";
    case UnavailableKind::PrereleaseDisallowed:
      return "is a pre-release and pre-releases are disallowed";
    case UnavailableKind::CudaTooNew:
      return "needs a newer CUDA than the driver supports";
    case UnavailableKind::GpuArchMissing:
      return "has no kernels for this GPU";
    case UnavailableKind::Other:
      return "cannot be used";
  }
  return "cannot be used";
}

// A fact (an external incompatibility) in words; `subject`/`verb`/`object` are set when the
// fact is a plainly worded dependency, so two of them can read "A depends on both B and C".
struct Fact {
  std::string text;
  std::string subject;
  std::string verb;
  std::string object;
};

class Reporter {
 public:
  Reporter(const DerivationTree& tree, const Describer& describer) : tree_(tree), d_(describer) {}

  Report run() {
    Report out;
    if (!tree_.nodes.empty()) {
      render();
      out.lines = lines_;
      out.headline = headline();
      if (proof_lines(out.lines) > kBriefMaxLines) {
        plan_trim(tree_.root);
        render();
        if (proof_lines(lines_) < proof_lines(out.lines)) {
          out.brief = std::move(lines_);
          out.brief.push_back(fmt_left_out(proof_lines(out.lines) - proof_lines(out.brief)));
        }
      }
      if (out.brief.empty()) out.brief = out.lines;
    }
    out.hints = hints();
    return out;
  }

 private:
  const DerivationNode& node(std::size_t i) const { return tree_.nodes[i]; }

  void render() {
    lines_.clear();
    refs_.clear();
    count_ = 0;
    std::size_t root = tree_.root;
    if (is_external(root)) {
      lines_.push_back("Because " + fact(root).text + ", version solving failed.");
    } else {
      visit(root, /*conclusion=*/false);
    }
  }

  static std::size_t proof_lines(const std::vector<std::string>& lines) {
    return static_cast<std::size_t>(
        std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return !l.empty(); }));
  }

  static std::string fmt_left_out(std::size_t n) {
    return "(*) follows from " + std::to_string(n) + " more line" + (n == 1 ? "" : "s") +
           " of the proof; --explain prints them.";
  }

  static std::string fmt_same(std::size_t n, const std::string& name) {
    return " (and the same for " + std::to_string(n) + " more candidate" + (n == 1 ? "" : "s") +
           " of " + name + ")";
  }

  // --- the headline (issue 16 item 10) ---------------------------------------------------

  // A fact of the proof as found in the tree (collapsed dependencies count as dependencies).
  bool leaf(std::size_t i) const {
    return node(i).kind != NodeKind::Derived || collapsed_dependency(i).has_value();
  }

  // The proof's leaves, each once, in the order the proof reaches them (cause1 first).
  std::vector<std::size_t> leaves() const {
    std::vector<std::size_t> out;
    std::set<std::size_t> seen;
    std::vector<std::size_t> stack{tree_.root};
    while (!stack.empty()) {
      std::size_t i = stack.back();
      stack.pop_back();
      if (!seen.insert(i).second) continue;
      if (leaf(i)) {
        out.push_back(i);
        continue;
      }
      stack.push_back(node(i).cause2);
      stack.push_back(node(i).cause1);
    }
    return out;
  }

  // A fact that stops candidates by itself: no version, a build that cannot be used, a
  // constraint (a dependency only leads somewhere).
  bool blocking(std::size_t i) const {
    const auto& n = node(i);
    if (collapsed_dependency(i) || n.terms.empty()) return false;
    return n.kind == NodeKind::NoVersions || n.kind == NodeKind::Unavailable ||
           n.kind == NodeKind::Constraint;
  }

  // A dependency fact: depender -> dependee term.
  struct Edge {
    const PackageInfo* from = nullptr;
    const Term* to = nullptr;
    std::size_t leaf = 0;
  };
  std::optional<Edge> edge_of(std::size_t i) const {
    if (auto dep = collapsed_dependency(i))
      return Edge{&node(*dep).terms[0].package(), &node(*dep).terms[1], i};
    const auto& n = node(i);
    if (n.kind == NodeKind::Dependency && n.terms.size() == 2)
      return Edge{&n.terms[0].package(), &n.terms[1], i};
    return std::nullopt;
  }

  // Sets deciding_ to the facts it names.
  std::string headline() {
    if (is_external(tree_.root)) return fact(tree_.root).text;
    const auto order = leaves();
    std::vector<Edge> edges;
    for (auto i : order) {
      if (auto e = edge_of(i)) edges.push_back(*e);
    }
    // Each package's distance from the requirements, the requirement it is reached from, and the
    // package it is reached through.
    struct Reach {
      std::size_t dist = 0;
      std::string origin;
      const PackageInfo* origin_package = nullptr;
      const PackageInfo* parent = nullptr;
    };
    std::map<std::string, Reach> reach;
    std::vector<std::string> required;
    for (const auto& e : edges) {
      if (!e.from->is_root) continue;
      std::string text = term_text(*e.to);
      std::string key = e.to->package().display_name();
      if (!reach.contains(key)) reach[key] = Reach{0, text, &e.to->package(), nullptr};
      if (std::find(required.begin(), required.end(), text) == required.end())
        required.push_back(text);
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& e : edges) {
        if (e.from->is_root) continue;
        auto from = reach.find(e.from->display_name());
        if (from == reach.end()) continue;
        std::string key = e.to->package().display_name();
        auto it = reach.find(key);
        if (it == reach.end() || it->second.dist > from->second.dist + 1) {
          reach[key] = Reach{from->second.dist + 1, from->second.origin,
                             from->second.origin_package, e.from};
          changed = true;
        }
      }
    }
    // 1. A blocking fact nearest to the requirements.
    std::optional<std::size_t> deciding;
    std::size_t best = static_cast<std::size_t>(-1);
    for (auto i : order) {
      if (!blocking(i)) continue;
      auto it = reach.find(subject_of(i)->display_name());
      std::size_t d = it == reach.end() ? static_cast<std::size_t>(-2) : it->second.dist;
      if (d < best) {
        best = d;
        deciding = i;
      }
    }
    if (deciding) {
      deciding_ = {*deciding};
      std::string text = fact(*deciding).text;
      // The same reason for other candidates of the same package is counted, not repeated.
      const auto& dn = node(*deciding);
      std::size_t same = 0;
      for (auto i : order) {
        const auto& n = node(i);
        if (i == *deciding || !blocking(i)) continue;
        if (n.kind == dn.kind &&
            subject_of(i)->display_name() == subject_of(*deciding)->display_name() &&
            n.reason.kind == dn.reason.kind) {
          ++same;
        }
      }
      if (same != 0) {
        text += fmt_same(same, subject_of(*deciding)->display_name());
      }
      const PackageInfo* about = subject_of(*deciding);
      auto it = reach.find(about->display_name());
      if (it == reach.end()) return text;
      if (about->is_virtual) {
        // A fact about CUDA or Python is read with the dependency that needs it: "torch needs
        // CUDA and --driver none means no GPU".
        const PackageInfo* parent = it->second.parent;
        for (const auto& e : edges) {
          if (e.from != parent || e.to->package().display_name() != about->display_name()) continue;
          text = facts_and(e.leaf, *deciding);
          break;
        }
        if (parent == nullptr) return text;
        about = parent;
        it = reach.find(about->display_name());
        if (it == reach.end()) return text;
      }
      if (it->second.dist == 0 || about->is_virtual) return text;
      return text + ", and " + it->second.origin + " needs " + about->display_name();
    }
    // 2. A package that two requirements need in sets that do not meet.
    // Items of one requirement's need: the sets it needs through one package ("" when direct).
    struct Item {
      std::string via;
      std::vector<std::string> sets;
    };
    struct Need {
      std::string origin;
      std::vector<Item> items;
    };
    std::vector<std::string> packages;
    for (const auto& e : edges) {
      const auto& p = e.to->package();
      if (p.is_virtual || p.is_root) continue;
      if (std::find(packages.begin(), packages.end(), p.display_name()) == packages.end()) {
        packages.push_back(p.display_name());
      }
    }
    auto add_unique = [](std::vector<std::string>& v, std::string s) {
      if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(std::move(s));
    };
    for (const auto& name : packages) {
      std::vector<Need> needs;
      std::optional<std::string> yours;
      for (const auto& e : edges) {
        if (e.to->package().display_name() != name) continue;
        if (e.from->is_root) {
          yours = term_text(*e.to);
          continue;
        }
        auto from = reach.find(e.from->display_name());
        if (from == reach.end()) continue;
        auto it = std::find_if(needs.begin(), needs.end(),
                               [&](const Need& n) { return n.origin == from->second.origin; });
        if (it == needs.end()) it = needs.insert(needs.end(), Need{from->second.origin, {}});
        std::string via =
            e.from == from->second.origin_package ? std::string() : e.from->display_name();
        auto item = std::find_if(it->items.begin(), it->items.end(),
                                 [&](const Item& x) { return x.via == via; });
        if (item == it->items.end()) item = it->items.insert(it->items.end(), Item{via, {}});
        add_unique(item->sets, term_text(*e.to));
      }
      // Two requirements, or one that needs the package along two paths.
      bool two_paths = needs.size() == 1 && needs[0].items.size() >= 2;
      if (needs.size() + (yours ? 1 : 0) < 2 && !two_paths) continue;
      std::vector<std::string> parts;
      for (const auto& n : needs) {
        std::vector<std::string> items;
        for (const auto& item : n.items) {
          items.push_back(join_or(item.sets, "or") +
                          (item.via.empty() ? "" : " (through " + item.via + ")"));
        }
        parts.push_back(n.origin + " needs " + (items.size() > 1 ? "both " : "") +
                        join_or(items, "and"));
      }
      if (yours) parts.push_back("you require " + *yours);
      for (const auto& e : edges) {
        if (e.to->package().display_name() == name) deciding_.insert(e.leaf);
      }
      std::string out;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i != 0) out += (i + 1 == parts.size()) ? ", and " : ", ";
        out += parts[i];
      }
      return out;
    }
    // 2b. Builds that need different variants (a virtual package): the facts that say so.
    for (const auto& e : edges) {
      const auto& p = e.to->package();
      if (!p.is_virtual) continue;
      std::vector<std::string> facts;
      std::vector<const PackageInfo*> froms;
      for (const auto& other : edges) {
        if (&other.to->package() != &p && other.to->package().display_name() != p.display_name())
          continue;
        if (std::find(froms.begin(), froms.end(), other.from) != froms.end()) continue;
        froms.push_back(other.from);
        add_unique(facts, fact(other.leaf).text);
      }
      if (facts.size() >= 2) {
        for (const auto& other : edges) {
          if (other.to->package().display_name() == p.display_name()) deciding_.insert(other.leaf);
        }
        return join_or(facts, "and");
      }
    }
    // 3. The requirements the proof uses.
    if (required.empty()) return "the requirements cannot be satisfied together";
    return "you require " + join_or(required, "and") + ", which cannot be satisfied together";
  }

  // --- the brief proof ---------------------------------------------------------------------

  std::size_t size_of(std::size_t i, std::map<std::size_t, std::size_t>& memo) const {
    if (leaf(i)) return 0;
    if (auto it = memo.find(i); it != memo.end()) return it->second;
    std::size_t n = 1 + size_of(node(i).cause1, memo) + size_of(node(i).cause2, memo);
    memo[i] = n;
    return n;
  }

  bool holds_deciding(std::size_t i, std::map<std::size_t, bool>& memo) const {
    if (deciding_.contains(i)) return true;
    if (leaf(i)) return false;
    if (auto it = memo.find(i); it != memo.end()) return it->second;
    bool b = holds_deciding(node(i).cause1, memo) || holds_deciding(node(i).cause2, memo);
    memo[i] = b;
    return b;
  }

  // Walks the path to the deciding fact (or, where none decides, the smaller side) and states
  // every other derivation of two or more lines as a fact.
  void plan_trim(std::size_t root) {
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

  std::string term_text(const Term& t) const {
    std::string text = t.to_string();
    if (auto s = d_.describe_term(t, text)) return *s;
    return text;
  }

  // A derived node "p depends on q<spec>" + "there is no version of q<spec>" whose second fact
  // the describer asks to leave out reads as the dependency alone.
  std::optional<std::size_t> collapsed_dependency(std::size_t i) const {
    const auto& n = node(i);
    if (n.kind != NodeKind::Derived) return std::nullopt;
    const auto& a = node(n.cause1);
    const auto& b = node(n.cause2);
    const DerivationNode* nov = nullptr;
    std::size_t dep = 0;
    if (a.kind == NodeKind::Dependency && b.kind == NodeKind::NoVersions) {
      nov = &b;
      dep = n.cause1;
    } else if (b.kind == NodeKind::Dependency && a.kind == NodeKind::NoVersions) {
      nov = &a;
      dep = n.cause2;
    } else {
      return std::nullopt;
    }
    auto s = d_.describe_no_versions(nov->terms[0], nov->terms[0].to_string());
    if (s && s->empty()) return dep;
    return std::nullopt;
  }

  bool is_external(std::size_t i) const { return leaf(i) || asserted_.contains(i); }

  Fact dependency_fact(const Term& depender, const Term& dependency) const {
    Fact f;
    std::string dep_text = term_text(dependency);
    if (depender.package().is_root) {
      f.subject = "you";
      f.verb = "require";
      f.object = dep_text;
      f.text = "you require " + dep_text;
      return f;
    }
    std::string depender_text = term_text(depender);
    if (auto s = d_.describe_dependency(depender, dependency, depender_text, dep_text)) {
      f.text = *s;
      return f;
    }
    f.subject = depender_text;
    f.verb = dependency.package().is_virtual ? "needs" : "depends on";
    f.object = dep_text;
    f.text = f.subject + " " + f.verb + " " + f.object;
    return f;
  }

  Fact fact(std::size_t i) const {
    const auto& n = node(i);
    if (auto dep = collapsed_dependency(i)) {
      const auto& dn = node(*dep);
      // The derived node's own term is the depender set (it equals the dependency's).
      return dependency_fact(n.terms.empty() ? dn.terms[0] : n.terms[0], dn.terms[1]);
    }
    Fact f;
    switch (n.kind) {
      case NodeKind::Root:
        f.text = "the requirements must be resolved";
        break;
      case NodeKind::NoVersions: {
        const Term& t = n.terms[0];
        std::string text = term_text(t);
        auto s = d_.describe_no_versions(t, text);
        if (s && !s->empty()) {
          f.text = *s;
        } else if (t.package().size() == 0) {
          f.text = "there are no versions of " + t.package().display_name();
        } else {
          f.text = "there is no version of " + text;
        }
        break;
      }
      case NodeKind::Dependency:
        return dependency_fact(n.terms[0], n.terms[1]);
      case NodeKind::Constraint: {
        const Term& t = n.terms[1];
        f.text = "your constraints allow only " + t.package().display_name() + n.constraint;
        break;
      }
      case NodeKind::Unavailable: {
        const Term& t = n.terms[0];
        std::string text = term_text(t);
        if (auto s = d_.describe_unavailable(t, n.reason, text)) {
          f.text = *s;
        } else {
          f.text = text + " " + default_reason_text(n.reason);
        }
        break;
      }
      case NodeKind::Derived:
        // Only a sub-derivation the brief proof leaves out is a fact; (*) marks it.
        f.text = conclusion(i) + " (*)";
        break;
    }
    return f;
  }

  // The package a fact is about, and for a dependency the package it depends on.
  const PackageInfo* subject_of(std::size_t i) const {
    const auto& n = node(i);
    if (n.terms.empty()) return nullptr;
    if (n.kind == NodeKind::Constraint) return &n.terms[1].package();
    return &n.terms[0].package();
  }
  const PackageInfo* dependee_of(std::size_t i) const {
    if (auto dep = collapsed_dependency(i)) return &node(*dep).terms[1].package();
    const auto& n = node(i);
    if (n.kind == NodeKind::Dependency) return &n.terms[1].package();
    return nullptr;
  }

  // "<fact> and <fact>", ordered as a chain ("A depends on B and B needs C"), merging two plain
  // dependencies of one depender ("A depends on both B and C").
  std::string facts_and(std::size_t a, std::size_t b) const {
    const PackageInfo* dependee_b = dependee_of(b);
    if (dependee_b != nullptr && dependee_b == subject_of(a)) {
      const PackageInfo* dependee_a = dependee_of(a);
      if (dependee_a == nullptr || dependee_a != subject_of(b)) std::swap(a, b);
    }
    Fact fa = fact(a);
    Fact fb = fact(b);
    if (!fa.subject.empty() && fa.subject == fb.subject && fa.verb == fb.verb) {
      return fa.subject + " " + fa.verb + " both " + fa.object + " and " + fb.object;
    }
    return fa.text + " and " + fb.text;
  }

  // The incompatibility as a statement (pub's Incompatibility.toString).
  std::string conclusion(std::size_t i) const {
    const auto& terms = node(i).terms;
    std::vector<std::string> pos;
    std::vector<std::string> neg;
    bool root = false;
    for (const auto& t : terms) {
      if (t.package().is_root) {
        if (t.positive) root = true;
        continue;
      }
      (t.positive ? pos : neg).push_back(term_text(t));
    }
    if (pos.empty() && neg.empty()) return "version solving failed";
    if (pos.empty() && root) return "you require " + join_or(neg, "or");
    if (neg.empty()) {
      if (pos.size() == 1) return pos[0] + " cannot be used";
      return join_or(pos, "and") + " are incompatible";
    }
    if (pos.empty()) return join_or(neg, "or") + " must be used";
    if (pos.size() == 1) return pos[0] + " requires " + join_or(neg, "or");
    return join_or(pos, "and") + " together require " + join_or(neg, "or");
  }

  std::optional<std::size_t> line_of(std::size_t i) const {
    auto it = refs_.find(i);
    if (it == refs_.end()) return std::nullopt;
    return it->second;
  }

  void write(std::size_t i, std::string line, bool numbered) {
    if (numbered && !refs_.contains(i)) {
      ++count_;
      line += " (" + std::to_string(count_) + ")";
      refs_[i] = count_;
    }
    lines_.push_back(std::move(line));
  }

  bool single_line(std::size_t i) const {
    const auto& n = node(i);
    return is_external(n.cause1) && is_external(n.cause2);
  }

  // pub's _isCollapsible: a derived cause that can be folded into the next line.
  bool collapsible(std::size_t i) const {
    const auto& n = node(i);
    if (n.shared_id) return false;
    bool e1 = is_external(n.cause1);
    bool e2 = is_external(n.cause2);
    if (e1 == e2) return false;
    std::size_t complex = e1 ? n.cause2 : n.cause1;
    return !refs_.contains(complex);
  }

  // doc/solver.md §Error Reporting, steps 1-3.
  void visit(std::size_t i, bool conclusion_line) {
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
          write(
              i,
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
                "Because " + conclusion(c1) + " (" + std::to_string(n1) + ") and " +
                    conclusion(c2) + " (" + std::to_string(*n2) + "), " + concl + ".",
                numbered);
        } else {
          lines_.emplace_back();
          visit(c2, false);
          write(i,
                "And because " + conclusion(c1) + " (" + std::to_string(n1) + "), " + concl + ".",
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
        write(i, "And because " + facts_and(prior_external, external) + ", " + concl + ".",
              numbered);
      } else {  // 2.iii
        visit(derived, false);
        write(i, "And because " + fact(external).text + ", " + concl + ".", numbered);
      }
      return;
    }
    // 3: both external.
    write(i, "Because " + facts_and(c1, c2) + ", " + concl + ".", numbered);
  }

  std::vector<std::string> hints() const {
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
      } else if (n.reason.kind == UnavailableKind::Yanked) {
        add("yanked versions of " + name + " (" + versions +
            ") are used only when a requirement pins them exactly with ==");
      }
    }
    for (const auto* p : seen) {
      for (auto& h : d_.package_hints(*p))
        add(std::move(h));
    }
    return out;
  }

  const DerivationTree& tree_;
  const Describer& d_;
  std::vector<std::string> lines_;
  std::map<std::size_t, std::size_t> refs_;
  std::size_t count_ = 0;
  // Derived nodes the brief proof states as facts.
  std::set<std::size_t> asserted_;
  // The facts the headline names: the brief proof keeps the path to them.
  std::set<std::size_t> deciding_;
};

}  // namespace

std::string Report::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i != 0) out += "\n";
    out += lines[i];
  }
  for (const auto& h : hints) {
    if (!out.empty()) out += "\n";
    out += "hint: " + h;
  }
  return out;
}

Report report(const NoSolution& no_solution, const Describer& describer) {
  return Reporter(no_solution.tree, describer).run();
}

Report report(const NoSolution& no_solution) {
  Describer plain;
  return Reporter(no_solution.tree, plain).run();
}

}  // namespace gpulock::resolver
