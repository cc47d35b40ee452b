// Catalog: the words the explanation (index_provider.cpp) and the after-solve questions
// (after_solve.cpp) share: first-index's and the torch source's fixes, as typed edits (hint.h),
// the arch fixes, and why a candidate whose dependencies were read lost. No I/O.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulock/catalog/catalog.h"
#include "gpulock/core/command_line.h"
#include "gpulock/core/name.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/specifier.h"
#include "gpulock/index/interrupt.h"
#include "gpulock/index/url.h"
#include "gpulock/resolver/resolver.h"

#include "catalog_impl.h"

namespace gpulock::catalog {

using resolver::UnavailableKind;
using resolver::UnavailableReason;

auto Catalog::Impl::first_index_fix(std::string_view name, std::string_view other) const -> Hint {
  Hint fix{fmt::format("to take {} from {}: `", name, other),
           {{"--index", fmt::format("other={}", other), core::FlagEdit::Op::Add},
            {"--index-for", fmt::format("{}=other", name), core::FlagEdit::Op::Add}},
           "`"};
  // --nightly refuses unsafe-best-match (issue 41 item 3).
  bool nightly = std::any_of(config.torch.begin(), config.torch.end(),
                             [](const SourceSpec& s) { return s.nightly(); });
  if (!nightly) {
    fix.text_after +=
        " (or, trusting every index equally, `--index-strategy unsafe-best-match` instead of "
        "those two flags)";
  }
  return fix;
}

auto Catalog::Impl::first_index_other(std::string_view name) const -> std::optional<std::string> {
  auto it = packages.find(name);
  auto fetched = hint_pages.find(name);
  if (it == packages.end() || fetched == hint_pages.end() ||
      !hints_skipped_sources(name, it->second)) {
    return std::nullopt;
  }
  std::unordered_map<core::Version, bool, core::VersionHash> known;
  for (const auto& e : it->second.entries)
    known.emplace(e.version, true);
  for (const auto& [s, page] : fetched->second) {
    bool has_other =
        std::any_of(page->files.begin(), page->files.end(),
                    [&](const index::DistFile& f) { return !known.contains(f.version()); }) ||
        std::any_of(page->omitted.begin(), page->omitted.end(),
                    [&](const index::OmittedVersion& o) { return !known.contains(o.version); });
    if (has_other) return index::redact_url(s->source.url);
  }
  return std::nullopt;
}

auto Catalog::Impl::checked_fix(std::string key, Hint hint, std::vector<Hint> alternatives) const
    -> std::optional<Hint> {
  if (hint.edits.empty()) return hint;
  if (collecting != nullptr) {
    bool seen = std::any_of(collecting->begin(), collecting->end(),
                            [&](const FixHint& f) { return f.key == key; });
    if (!seen) collecting->push_back({std::move(key), hint, {}, {}, std::move(alternatives)});
    return hint;
  }
  auto it = verdicts.find(key);
  if (it == verdicts.end() || it->second.confirmed) return hint;
  return it->second.instead;
}

auto Catalog::Impl::stale_names(const VersionEntry& e) const -> std::vector<std::string> {
  std::vector<std::string> out;
  if (config.strategy != IndexStrategy::FirstIndex) return out;
  for (const auto& d : e.requirements) {
    auto pit = packages.find(d.name);
    if (pit == packages.end() || pit->second.skipped.empty() || pit->second.sources.empty()) {
      continue;
    }
    bool satisfied =
        std::any_of(pit->second.entries.begin(), pit->second.entries.end(), [&](const auto& c) {
          return c.file != nullptr && !c.unavailable && d.specifier.contains(c.version, true);
        });
    if (!satisfied && std::find(out.begin(), out.end(), d.name) == out.end()) out.push_back(d.name);
  }
  return out;
}

auto Catalog::Impl::first_index_alternatives(std::string_view name, std::string_view other,
                                             const std::vector<std::string>& names) const
    -> std::vector<Hint> {
  std::vector<Hint> out;
  // Every name the build needs that its first-index source cannot give, from `other`.
  if (names.size() > 1) {
    Hint all{fmt::format("to take {} from {}: `", fmt::join(names, " and "), other),
             {{"--index", fmt::format("other={}", other), core::FlagEdit::Op::Add}},
             "`"};
    for (const auto& n : names)
      all.edits.push_back({"--index-for", fmt::format("{}=other", n), core::FlagEdit::Op::Add});
    out.push_back(std::move(all));
  }
  // --nightly refuses unsafe-best-match (issue 41 item 3).
  bool nightly = std::any_of(config.torch.begin(), config.torch.end(),
                             [](const SourceSpec& s) { return s.nightly(); });
  if (!nightly) {
    out.push_back({fmt::format("to take {} from {}, trusting every index equally: `", name, other),
                   {{"--index-strategy", "unsafe-best-match", core::FlagEdit::Op::Set}},
                   "`"});
  }
  return out;
}

auto Catalog::Impl::missing_from_torch(std::string_view name) const -> bool {
  if (config.torch.empty() || !gpu::is_torch_family(name)) return false;
  if (std::any_of(config.pinned.begin(), config.pinned.end(),
                  [&](const auto& pin) { return glob_match(pin.first, name); })) {
    return false;
  }
  auto it = packages.find(name);
  return it != packages.end() && it->second.sources.empty();
}

auto Catalog::Impl::missing_from_torch_text(std::string_view name, const VersionEntry* needer,
                                            std::string_view needer_name,
                                            const resolver::Dependency* need) const -> std::string {
  std::vector<const SourceSpec*> where;
  if (needer != nullptr && needer->source != nullptr && needer->source->type.role == Role::Family) {
    where.push_back(needer->source);
  } else {
    for (const auto& s : config.torch) {
      if (!s.above_ceiling) where.push_back(&s);
    }
  }
  std::string text = fmt::format("the PyTorch index {} has no {}", sources_text(where), name);
  if (needer != nullptr && need != nullptr) {
    text += fmt::format("; {} {} needs {}", needer_name, needer->version.to_string(),
                        need->to_string());
  }
  return text;
}

auto Catalog::Impl::missing_from_torch_why(std::string_view name) -> std::string {
  return fmt::format(
      "{} is a torch-family name, which comes only from the PyTorch index unless --index-for "
      "names another",
      name);
}

auto Catalog::Impl::missing_from_torch_fix(std::string_view name) const -> Hint {
  auto general =
      std::find_if(config.general.begin(), config.general.end(), [](const SourceSpec& s) {
        return s.type.is<Simple>() && (s.type.role == Role::Default || s.type.role == Role::Extra);
      });
  std::string why = missing_from_torch_why(name);
  if (general == config.general.end()) {
    return {fmt::format("{}: add `--index NAME=URL --index-for {}=NAME`", why, name), {}, {}};
  }
  std::string url = index::redact_url(general->source.url);
  return {fmt::format("{}; to take {} from {}: `", why, name, url),
          {{"--index", fmt::format("other={}", url), core::FlagEdit::Op::Add},
           {"--index-for", fmt::format("{}=other", name), core::FlagEdit::Op::Add}},
          "`"};
}

auto Catalog::Impl::arch_fixes(std::string_view name, const PackageState& state) const
    -> std::vector<ArchFix> {
  std::vector<ArchFix> out;
  // Which CUDA builds have kernels is known for the torch family's variants only.
  if (!gpu::is_torch_family(name)) return out;
  std::set<std::string, std::less<>> seen;
  for (const auto& e : state.entries) {
    const auto& u = e.dependencies_unavailable;
    if (!u || u->kind != UnavailableKind::GpuArchMissing) continue;
    auto field = std::find_if(u->fields.begin(), u->fields.end(),
                              [](const auto& f) { return f.first == "arch"; });
    if (field == u->fields.end()) continue;
    auto arch = gpu::ComputeCapability::parse(field->second);
    if (!arch || !seen.insert(field->second).second) continue;
    out.push_back({*arch,
                   fmt::format("{} {}.{}", name, e.version.release_at(0), e.version.release_at(1)),
                   gpu.builds_with_kernels_for(e.version, *arch)});
  }
  return out;
}

auto Catalog::Impl::sources_text(const std::vector<const SourceSpec*>& sources) -> std::string {
  if (sources.empty()) return "no index";
  std::string first = index::redact_url(sources.front()->source.url);
  return sources.size() == 1 ? first : fmt::format("{} (and {} more)", first, sources.size() - 1);
}

auto Catalog::Impl::conflict_reason(const VersionEntry& e, const resolver::Solution* solution,
                                    std::optional<Hint>* hint, std::string* blocker) const
    -> std::optional<std::string> {
  auto named = [&](const std::string& name) {
    if (blocker != nullptr) *blocker = name;
  };
  // A name the torch source owns and lacks says it first (issue 41 item 4): not the other
  // requirement the solution then had to bend.
  for (const auto& d : e.requirements) {
    if (!missing_from_torch(d.name)) continue;
    if (hint != nullptr) {
      *hint = checked_fix(fmt::format("torch-source:{}", d.name), missing_from_torch_fix(d.name));
    }
    named(d.name);
    return fmt::format("needs {}, and {}", d.to_string(),
                       missing_from_torch_text(d.name, &e, "", nullptr));
  }
  for (const auto& d : e.requirements) {
    auto pit = packages.find(d.name);
    if (pit == packages.end()) continue;
    const PackageState& dep = pit->second;
    std::vector<std::string> usable;
    bool satisfied = false;
    for (const auto& c : dep.entries) {
      if (c.file == nullptr || c.unavailable) continue;
      if (d.specifier.contains(c.version, true)) {
        satisfied = true;
        break;
      }
      if (usable.size() < 3) usable.push_back(c.version.to_string());
    }
    if (!satisfied && !dep.sources.empty()) {
      std::string has = usable.empty() ? fmt::format("no usable version of {}", d.name)
                                       : fmt::format("only {} {}", d.name, fmt::join(usable, ", "));
      std::string reason =
          fmt::format("needs {}, and {} has {}", d.to_string(), sources_text(dep.sources), has);
      if (!dep.skipped.empty() && config.strategy == IndexStrategy::FirstIndex) {
        std::string other = index::redact_url(dep.skipped.front()->source.url);
        reason +=
            fmt::format(" (first-index: {} comes only from there, not from {})", d.name, other);
        if (hint != nullptr) {
          *hint = checked_fix(fmt::format("first-index:{}={}", d.name, other),
                              first_index_fix(d.name, other),
                              first_index_alternatives(d.name, other, stale_names(e)));
        }
      }
      named(d.name);
      return reason;
    }
    if (solution == nullptr) continue;
    const auto* chosen = solution->find(d.name);
    if (chosen != nullptr && !d.specifier.contains(chosen->version, true)) {
      named(d.name);
      return fmt::format("needs {}, and {} {} was chosen", d.to_string(), d.name,
                         chosen->version.to_string());
    }
  }
  return std::nullopt;
}

}  // namespace gpulock::catalog
