// `gpulock diff OLD NEW [--json]`: what changed between two locks (DESIGN.md §Commands).
// Exit 0 when identical, 1 when they differ. The JSON schema is docs/schemas/diff.schema.json. List
// facts (indexes, options, files) print one line per entry that changed.
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

// The name without a CUDA-major suffix: nvidia-cublas-cu12 and nvidia-cublas are one library
// in two CUDA builds.
std::string without_cuda_suffix(const std::string& name) {
  const auto dash = name.rfind("-cu");
  if (dash == std::string::npos || dash + 3 == name.size()) return name;
  for (std::size_t i = dash + 3; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, dash);
}

std::string public_part(const std::optional<std::string>& v) {
  return v ? v->substr(0, v->find('+')) : std::string();
}

// The declared target a lock was resolved for, if any.
std::optional<std::string> target_name(const lock::Lock& l) {
  if (l.gpulock && l.gpulock->target) return l.gpulock->target->name;
  return std::nullopt;
}

struct DiffRow {
  std::string name, change, old_version, new_version, note;
  Style style = Style::Plain;
};

// The package rows, readable for two builds of one project: a library that changes CUDA build
// (nvidia-cublas-cu12 -> nvidia-cublas) is one "swapped" row, a local-label change at the same
// version (torch 2.9.0+cu126 -> +cu130) is "variant"; for two targets' locks, packages that
// differ only in which index served the same files are left to one line (`same_files`).
std::vector<DiffRow> package_rows(const lock::LockDiff& diff, bool two_targets,
                                  std::vector<std::string>& same_files) {
  using Kind = lock::PackageChangeKind;
  std::vector<DiffRow> rows;
  std::vector<bool> used(diff.packages.size(), false);
  for (std::size_t i = 0; i < diff.packages.size(); ++i) {
    if (used[i]) continue;
    const auto& c = diff.packages[i];
    if (c.kind == Kind::Removed || c.kind == Kind::Added) {
      const Kind other = c.kind == Kind::Removed ? Kind::Added : Kind::Removed;
      for (std::size_t j = i + 1; j < diff.packages.size(); ++j) {
        const auto& d = diff.packages[j];
        if (used[j] || d.kind != other ||
            without_cuda_suffix(d.name) != without_cuda_suffix(c.name))
          continue;
        const auto& gone = c.kind == Kind::Removed ? c : d;
        const auto& came = c.kind == Kind::Removed ? d : c;
        rows.push_back({fmt::format("{} -> {}", gone.name, came.name), "swapped",
                        gone.old_version.value_or("-"), came.new_version.value_or("-"), "",
                        Style::Cyan});
        used[i] = used[j] = true;
        break;
      }
      if (used[i]) continue;
    }
    if (two_targets && c.kind == Kind::Changed && c.fields == std::vector<std::string>{"index"} &&
        c.rehashed.empty() && c.files_added.empty() && c.files_removed.empty()) {
      same_files.push_back(c.name);
      continue;
    }
    std::string change(lock::to_string(c.kind));
    if ((c.kind == Kind::Upgraded || c.kind == Kind::Downgraded) &&
        public_part(c.old_version) == public_part(c.new_version))
      change = "variant";
    rows.push_back({c.name, change, c.old_version.value_or("-"), c.new_version.value_or("-"),
                    note(c), style_for(c.kind)});
  }
  return rows;
}

// A list fact (indexes, options, files...): one line per entry, "- " for an entry only OLD has,
// "+ " for one only NEW has; entries of both are left out. When only the order changed (the
// first index wins), both orders in full.
std::string list_fact_lines(const lock::FactChange& f, const Terminal& term) {
  auto has = [](const std::vector<std::string>& items, const std::string& x) {
    return std::find(items.begin(), items.end(), x) != items.end();
  };
  std::vector<std::string> gone, came;
  for (const auto& x : f.old_items)
    if (!has(f.new_items, x)) gone.push_back(x);
  for (const auto& x : f.new_items)
    if (!has(f.old_items, x)) came.push_back(x);
  const bool reordered = gone.empty() && came.empty();
  if (reordered) {
    gone = f.old_items;
    came = f.new_items;
  }
  std::string out = fmt::format("{}:{}\n", term.paint(Style::Bold, f.key),
                                reordered ? " (same entries, new order)" : "");
  if (!f.old_value) out += "  (not recorded in OLD)\n";
  for (const auto& x : gone)
    out += term.paint(Style::Red, "  - " + x) + "\n";
  if (!f.new_value) out += "  (not recorded in NEW)\n";
  for (const auto& x : came)
    out += term.paint(Style::Green, "  + " + x) + "\n";
  return out;
}

// The changed facts: one-value facts as a table (fact, old, new), list facts as one line per
// entry beneath it (a list joined on one line was hundreds of characters wide).
std::string facts_text(const std::vector<const lock::FactChange*>& facts, const Terminal& term,
                       bool first) {
  std::string out;
  TableRows rows{{"fact", "old", "new"}};
  TableStyles styles{{Style::Bold, Style::Bold, Style::Bold}};
  std::vector<const lock::FactChange*> lists;
  for (const auto* f : facts) {
    if (f->is_list) {
      lists.push_back(f);
    } else {
      rows.push_back({f->key, f->old_value.value_or("-"), f->new_value.value_or("-")});
    }
  }
  if (rows.size() > 1) {
    out += first ? "" : "\n";
    out += render_table(rows, styles, term);
    first = false;
  }
  for (const auto* f : lists) {
    out += first ? "" : "\n";
    out += list_fact_lines(*f, term);
    first = false;
  }
  return out;
}

std::string text_report(const lock::LockDiff& diff, const DiffArgs& args, const Terminal& term,
                        bool two_targets) {
  if (diff.identical()) {
    return fmt::format("{} and {} lock the same packages and facts\n", args.old_path,
                       args.new_path);
  }
  std::string out;
  std::vector<std::string> same_files;
  const auto package_lines = package_rows(diff, two_targets, same_files);
  if (!package_lines.empty()) {
    TableRows rows{{"package", "change", "old", "new", "note"}};
    TableStyles styles{{Style::Bold, Style::Bold, Style::Bold, Style::Bold, Style::Bold}};
    for (const auto& r : package_lines) {
      rows.push_back({r.name, r.change, r.old_version, r.new_version, r.note});
      styles.push_back({Style::Plain, r.style});
    }
    out += render_table(rows, styles, term);
  }
  if (!same_files.empty()) {
    out += fmt::format("{}same version and files, from each target's own index: {}\n",
                       out.empty() ? "" : "\n", fmt::join(same_files, ", "));
  }
  // Two targets' recorded options differ by their machines (driver, gpu-arch, ...): the GPU
  // facts say that already.
  std::vector<const lock::FactChange*> facts;
  for (const auto& f : diff.facts) {
    if (two_targets && (f.key == "inputs.options" || f.key == "inputs.sha256")) continue;
    facts.push_back(&f);
  }
  out += facts_text(facts, term, out.empty());
  std::vector<std::pair<std::string, std::size_t>> counts;
  for (const auto& r : package_lines) {
    auto at = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first == r.change; });
    if (at == counts.end()) {
      counts.emplace_back(r.change, 1);
    } else {
      ++at->second;
    }
  }
  std::vector<std::string> summary;
  for (const char* kind : {"added", "removed", "swapped", "upgraded", "downgraded", "variant",
                           "rehashed", "changed"}) {
    auto at =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == kind; });
    if (at != counts.end()) summary.push_back(fmt::format("{} {}", at->second, kind));
  }
  if (!same_files.empty()) summary.push_back(fmt::format("{} same files", same_files.size()));
  if (!facts.empty())
    summary.push_back(fmt::format("{} fact{} changed", facts.size(), facts.size() == 1 ? "" : "s"));
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
  if (args.old_path.empty() || args.new_path.empty()) {
    ctx.term.error(args.old_path.empty() ? "diff needs OLD and NEW (two lock files); none given"
                                         : "diff needs OLD and NEW (two lock files); only one "
                                           "given");
    ctx.term.hint("gpulock diff OLD.toml NEW.toml (e.g. git show HEAD:pylock.toml > old.toml)");
    return kExitUsage;
  }
  auto old_file = lock::read_lock_file(args.old_path);
  if (!old_file) return report_error(ctx.term, old_file.error());
  auto new_file = lock::read_lock_file(args.new_path);
  if (!new_file) return report_error(ctx.term, new_file.error());
  for (const auto* file : {&*old_file, &*new_file}) {
    for (const auto& w : file->warnings)
      ctx.term.warning(w.to_string());
  }
  const lock::LockDiff diff = lock::diff_locks(old_file->lock, new_file->lock);
  // Two targets of one project: their indexes differ by design.
  const auto old_target = target_name(old_file->lock), new_target = target_name(new_file->lock);
  const bool two_targets = old_target && new_target && *old_target != *new_target;
  ctx.term.out(args.json ? json_report(diff, args)
                         : text_report(diff, args, ctx.term, two_targets));
  return diff.identical() ? kExitSuccess : kExitFinding;
}

RunFn setup(CLI::App& sub) {
  auto args = std::make_shared<DiffArgs>();
  // Checked in run_diff, which names both (CLI11's "new is required" names a parser field).
  sub.add_option("old", args->old_path, "The old lock file");
  sub.add_option("new", args->new_path, "The new lock file");
  sub.add_flag("--json", args->json, "Print stable JSON (docs/schemas/diff.schema.json)");
  sub.footer("Exit status: 0 when the locks are identical, 1 when they differ.");
  return [args](Context& ctx) { return run_diff(ctx, *args); };
}

const bool registered = register_command({"diff", "Compare two locks", 60, &setup});

}  // namespace
}  // namespace gpulock::cli
