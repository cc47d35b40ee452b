// Error reporting after dart pub doc/solver.md §Error Reporting (and pub's
// lib/src/solver/failure.dart), with the sentence forms documented in report.h.
//
// The Reporter class is in report_impl.h; this file holds the entry points and the rendering
// of the proof, the other members are in report_headline.cpp, report_facts.cpp and
// report_proof.cpp.

#include "gpulock/resolver/report.h"

#include <algorithm>
#include <string>
#include <vector>

#include "report_impl.h"

namespace gpulock::resolver::reporting {

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

Report Reporter::run() {
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

void Reporter::render() {
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

std::size_t Reporter::proof_lines(const std::vector<std::string>& lines) {
  return static_cast<std::size_t>(
      std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return !l.empty(); }));
}

std::string Reporter::fmt_left_out(std::size_t n) {
  return "(*) follows from " + std::to_string(n) + " more line" + (n == 1 ? "" : "s") +
         " of the proof; --explain prints them.";
}

std::string Reporter::fmt_same(std::size_t n, const std::string& name) {
  return " (and the same for " + std::to_string(n) + " more candidate" + (n == 1 ? "" : "s") +
         " of " + name + ")";
}

}  // namespace gpulock::resolver::reporting

namespace gpulock::resolver {

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
  return reporting::Reporter(no_solution.tree, describer).run();
}

Report report(const NoSolution& no_solution) {
  Describer plain;
  return reporting::Reporter(no_solution.tree, plain).run();
}

}  // namespace gpulock::resolver
