// The Reporter's facts and conclusions in words: a term, a fact (an external
// incompatibility) and a derived incompatibility as sentences, through the Describer.

#include <optional>
#include <string>
#include <vector>

#include "report_impl.h"

namespace gpulock::resolver::reporting {

std::string Reporter::term_text(const Term& t) const {
  std::string text = t.to_string();
  if (auto s = d_.describe_term(t, text)) return *s;
  return text;
}

// A derived node "p depends on q<spec>" + "there is no version of q<spec>" whose second fact
// the describer asks to leave out reads as the dependency alone.
std::optional<std::size_t> Reporter::collapsed_dependency(std::size_t i) const {
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

Fact Reporter::dependency_fact(const Term& depender, const Term& dependency) const {
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

Fact Reporter::fact(std::size_t i) const {
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
    case NodeKind::Conflict:
      f.text = term_text(n.terms[0]) + " cannot be used with " + term_text(n.terms[1]) + " (" +
               n.constraint + ")";
      break;
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
const PackageInfo* Reporter::subject_of(std::size_t i) const {
  const auto& n = node(i);
  if (n.terms.empty()) return nullptr;
  if (n.kind == NodeKind::Constraint) return &n.terms[1].package();
  return &n.terms[0].package();
}

const PackageInfo* Reporter::dependee_of(std::size_t i) const {
  if (auto dep = collapsed_dependency(i)) return &node(*dep).terms[1].package();
  const auto& n = node(i);
  if (n.kind == NodeKind::Dependency) return &n.terms[1].package();
  return nullptr;
}

// "<fact> and <fact>", ordered as a chain ("A depends on B and B needs C"), merging two plain
// dependencies of one depender ("A depends on both B and C").
std::string Reporter::facts_and(std::size_t a, std::size_t b) const {
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
std::string Reporter::conclusion(std::size_t i) const {
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

}  // namespace gpulock::resolver::reporting
