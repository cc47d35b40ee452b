#pragma once
// The Reporter (doc/solver.md §Error Reporting): the class that turns a NoSolution's derivation
// tree into a Report, shared by the files that define its members: report.cpp (the entry
// points, rendering), report_headline.cpp (the headline), report_facts.cpp (facts and
// conclusions in words) and report_proof.cpp (the proof's lines, the brief proof, hints).

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/resolver/report.h"

namespace gpulock::resolver::reporting {

std::string join_or(const std::vector<std::string>& parts, std::string_view word);
std::string default_reason_text(const UnavailableReason& r);

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

  Report run();

 private:
  const DerivationNode& node(std::size_t i) const { return tree_.nodes[i]; }

  void render();
  static std::size_t proof_lines(const std::vector<std::string>& lines);
  static std::string fmt_left_out(std::size_t n);
  static std::string fmt_same(std::size_t n, const std::string& name);

  // --- the headline (issue 16 item 10): report_headline.cpp ------------------------------

  bool leaf(std::size_t i) const;
  std::vector<std::size_t> leaves() const;
  bool blocking(std::size_t i) const;

  // A dependency fact: depender -> dependee term.
  struct Edge {
    const PackageInfo* from = nullptr;
    const Term* to = nullptr;
    std::size_t leaf = 0;
  };
  std::optional<Edge> edge_of(std::size_t i) const;

  // Each package's distance from the requirements, the requirement it is reached from, and the
  // package it is reached through.
  struct Reach {
    std::size_t dist = 0;
    std::string origin;
    const PackageInfo* origin_package = nullptr;
    const PackageInfo* parent = nullptr;
  };
  std::string headline();
  void reach_from_requirements(const std::vector<Edge>& edges, std::map<std::string, Reach>& reach,
                               std::vector<std::string>& required) const;
  std::optional<std::string> headline_blocking(const std::vector<std::size_t>& order,
                                               const std::vector<Edge>& edges,
                                               const std::map<std::string, Reach>& reach);
  std::optional<std::string> headline_clash(const std::vector<Edge>& edges,
                                            const std::map<std::string, Reach>& reach);
  std::optional<std::string> headline_variants(const std::vector<Edge>& edges);

  // --- the brief proof: report_proof.cpp ---------------------------------------------------

  std::size_t size_of(std::size_t i, std::map<std::size_t, std::size_t>& memo) const;
  bool holds_deciding(std::size_t i, std::map<std::size_t, bool>& memo) const;
  void plan_trim(std::size_t root);

  // --- facts and conclusions in words: report_facts.cpp ------------------------------------

  std::string term_text(const Term& t) const;
  std::optional<std::size_t> collapsed_dependency(std::size_t i) const;

  bool is_external(std::size_t i) const { return leaf(i) || asserted_.contains(i); }

  Fact dependency_fact(const Term& depender, const Term& dependency) const;
  Fact fact(std::size_t i) const;
  const PackageInfo* subject_of(std::size_t i) const;
  const PackageInfo* dependee_of(std::size_t i) const;
  std::string facts_and(std::size_t a, std::size_t b) const;
  std::string conclusion(std::size_t i) const;

  // --- the proof's lines (doc/solver.md §Error Reporting) and hints: report_proof.cpp -------

  std::optional<std::size_t> line_of(std::size_t i) const;
  void write(std::size_t i, std::string line, bool numbered);
  bool single_line(std::size_t i) const;
  bool collapsible(std::size_t i) const;
  void visit(std::size_t i, bool conclusion_line);
  std::vector<std::string> hints() const;

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

}  // namespace gpulock::resolver::reporting
