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
      std::size_t root = tree_.root;
      if (is_external(root)) {
        lines_.push_back("Because " + fact(root).text + ", version solving failed.");
      } else {
        visit(root, /*conclusion=*/false);
      }
    }
    out.lines = std::move(lines_);
    out.hints = hints();
    return out;
  }

 private:
  const DerivationNode& node(std::size_t i) const { return tree_.nodes[i]; }

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

  bool is_external(std::size_t i) const {
    return node(i).kind != NodeKind::Derived || collapsed_dependency(i).has_value();
  }

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
        f.text = conclusion(i);
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
