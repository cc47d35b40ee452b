// `gpulock diff OLD NEW [--json]`: what changed between two locks (DESIGN.md §Commands).
// Exit 0 when identical, 1 when they differ. The JSON schema is documented in README.md.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpulock/lock/diff.h"
#include "gpulock/lock/lockfile.h"

#include "command.h"
#include "exit_codes.h"
#include "json_writer.h"
#include "table.h"

namespace gpulock::cli {
namespace {

struct DiffArgs {
  std::string old_path;
  std::string new_path;
  bool json = false;
};

std::string short_hash(const lock::Hashes& h) {
  auto it = h.find("sha256");
  if (it == h.end()) it = h.begin();
  if (it == h.end()) return "-";
  return fmt::format("{}:{}", it->first, it->second.substr(0, 12));
}

std::string note(const lock::PackageChange& c) {
  std::vector<std::string> parts;
  for (const auto& r : c.rehashed) {
    parts.push_back(fmt::format("rehashed upstream: {} {} -> {}", r.filename,
                                short_hash(r.old_hashes), short_hash(r.new_hashes)));
  }
  if (c.old_marker != c.new_marker && c.kind != lock::PackageChangeKind::Added &&
      c.kind != lock::PackageChangeKind::Removed) {
    parts.push_back(fmt::format("marker: {} -> {}", c.old_marker.value_or("(none)"),
                                c.new_marker.value_or("(none)")));
  }
  if (!c.files_added.empty()) {
    parts.push_back(fmt::format("files added: {}", fmt::join(c.files_added, ", ")));
  }
  if (!c.files_removed.empty()) {
    parts.push_back(fmt::format("files removed: {}", fmt::join(c.files_removed, ", ")));
  }
  std::vector<std::string> fields;
  for (const auto& f : c.fields) {
    if (f != "marker") fields.push_back(f);
  }
  if (!fields.empty()) parts.push_back(fmt::format("changed: {}", fmt::join(fields, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

Style style_for(lock::PackageChangeKind kind) {
  switch (kind) {
    case lock::PackageChangeKind::Added:
      return Style::Green;
    case lock::PackageChangeKind::Removed:
      return Style::Red;
    case lock::PackageChangeKind::Upgraded:
      return Style::Cyan;
    case lock::PackageChangeKind::Downgraded:
      return Style::Yellow;
    case lock::PackageChangeKind::Rehashed:
      return Style::Red;
    case lock::PackageChangeKind::Changed:
      return Style::Blue;
  }
  return Style::Plain;
}

std::string text_report(const lock::LockDiff& diff, const DiffArgs& args, const Terminal& term) {
  if (diff.identical()) {
    return fmt::format("{} and {} lock the same packages and facts\n", args.old_path,
                       args.new_path);
  }
  std::string out;
  if (!diff.packages.empty()) {
    TableRows rows{{"package", "change", "old", "new", "note"}};
    TableStyles styles{{Style::Bold, Style::Bold, Style::Bold, Style::Bold, Style::Bold}};
    for (const auto& c : diff.packages) {
      rows.push_back({c.name, std::string(lock::to_string(c.kind)), c.old_version.value_or("-"),
                      c.new_version.value_or("-"), note(c)});
      styles.push_back({Style::Plain, style_for(c.kind)});
    }
    out += render_table(rows, styles, term);
  }
  if (!diff.facts.empty()) {
    if (!out.empty()) out += "\n";
    TableRows rows{{"fact", "old", "new"}};
    TableStyles styles{{Style::Bold, Style::Bold, Style::Bold}};
    for (const auto& f : diff.facts) {
      rows.push_back({f.key, f.old_value.value_or("-"), f.new_value.value_or("-")});
    }
    out += render_table(rows, styles, term);
  }
  std::size_t counts[6] = {};
  for (const auto& c : diff.packages)
    ++counts[static_cast<int>(c.kind)];
  std::vector<std::string> summary;
  for (auto kind : {lock::PackageChangeKind::Added, lock::PackageChangeKind::Removed,
                    lock::PackageChangeKind::Upgraded, lock::PackageChangeKind::Downgraded,
                    lock::PackageChangeKind::Rehashed, lock::PackageChangeKind::Changed}) {
    if (auto n = counts[static_cast<int>(kind)]) {
      summary.push_back(fmt::format("{} {}", n, lock::to_string(kind)));
    }
  }
  if (!diff.facts.empty()) {
    summary.push_back(
        fmt::format("{} fact{} changed", diff.facts.size(), diff.facts.size() == 1 ? "" : "s"));
  }
  out += fmt::format("\n{}\n", fmt::join(summary, ", "));
  return out;
}

void hashes_json(JsonWriter& j, const lock::Hashes& h) {
  j.begin_object();
  for (const auto& [algo, digest] : h)
    j.field(algo, digest);
  j.end_object();
}

std::string json_report(const lock::LockDiff& diff, const DiffArgs& args) {
  JsonWriter j;
  j.begin_object();
  j.field("schema", 1);
  j.field("old", args.old_path);
  j.field("new", args.new_path);
  j.field("identical", diff.identical());
  j.key("counts").begin_object();
  for (auto kind : {lock::PackageChangeKind::Added, lock::PackageChangeKind::Removed,
                    lock::PackageChangeKind::Upgraded, lock::PackageChangeKind::Downgraded,
                    lock::PackageChangeKind::Rehashed, lock::PackageChangeKind::Changed}) {
    const auto n = std::count_if(diff.packages.begin(), diff.packages.end(),
                                 [&](const lock::PackageChange& c) { return c.kind == kind; });
    j.field(lock::to_string(kind), static_cast<std::int64_t>(n));
  }
  j.field("facts", static_cast<std::int64_t>(diff.facts.size()));
  j.end_object();
  j.key("packages").begin_array();
  for (const auto& c : diff.packages) {
    j.begin_object();
    j.field("name", c.name);
    j.field("change", lock::to_string(c.kind));
    j.field("old_version", c.old_version);
    j.field("new_version", c.new_version);
    j.field("old_marker", c.old_marker);
    j.field("new_marker", c.new_marker);
    j.key("rehashed").begin_array();
    for (const auto& r : c.rehashed) {
      j.begin_object();
      j.field("file", r.filename);
      j.key("old_hashes");
      hashes_json(j, r.old_hashes);
      j.key("new_hashes");
      hashes_json(j, r.new_hashes);
      j.end_object();
    }
    j.end_array();
    j.field("files_added", c.files_added);
    j.field("files_removed", c.files_removed);
    j.field("fields", c.fields);
    j.end_object();
  }
  j.end_array();
  j.key("facts").begin_array();
  for (const auto& f : diff.facts) {
    j.begin_object();
    j.field("key", f.key);
    j.field("old", f.old_value);
    j.field("new", f.new_value);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

int run_diff(Context& ctx, const DiffArgs& args) {
  auto old_file = lock::read_lock_file(args.old_path);
  if (!old_file) return report_error(ctx.term, old_file.error());
  auto new_file = lock::read_lock_file(args.new_path);
  if (!new_file) return report_error(ctx.term, new_file.error());
  for (const auto* file : {&*old_file, &*new_file}) {
    for (const auto& w : file->warnings)
      ctx.term.warning(w.to_string());
  }
  const lock::LockDiff diff = lock::diff_locks(old_file->lock, new_file->lock);
  ctx.term.out(args.json ? json_report(diff, args) : text_report(diff, args, ctx.term));
  return diff.identical() ? kExitSuccess : kExitFinding;
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<DiffArgs>();
  sub.add_option("old", args->old_path, "The old lock file")->required();
  sub.add_option("new", args->new_path, "The new lock file")->required();
  sub.add_flag("--json", args->json, "Print stable JSON (schema in README.md)");
  sub.footer("Exit status: 0 when the locks are identical, 1 when they differ.");
  return [args](Context& ctx) { return run_diff(ctx, *args); };
}

const bool registered = register_command({"diff", "Compare two locks", 60, &setup});

}  // namespace
}  // namespace gpulock::cli
