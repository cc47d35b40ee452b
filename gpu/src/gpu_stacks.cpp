// The GPU stacks table (issue 23): gpu/data/gpu_stacks.txt, compiled in, parsed once. Pure.

#include "gpulock/gpu/gpu_stacks.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "number.h"

namespace gpulock::gpu {
namespace {

using detail::parse_number;

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

core::Result<core::SpecifierSet> versions_of(std::string_view text) {
  if (text == "*") return core::SpecifierSet{};
  return core::SpecifierSet::parse(text);
}

}  // namespace

core::Result<GpuStacks> GpuStacks::parse(std::string_view text) {
  GpuStacks out;
  for (const auto& row : core::table_rows(text)) {
    const auto& w = row.words;
    auto bad = [&](std::string_view why) {
      return core::fail(core::ErrorCode::InvalidInput,
                        fmt::format("gpu_stacks.txt line {}: {}", row.line, why));
    };
    std::string_view kind = w[0];
    if (kind == "need-name" && w.size() >= 3) {
      auto major = parse_number(w[2]);
      if (!major) return bad("expected a CUDA major");
      out.need_by_name.push_back({std::string(w[1]), *major});
    } else if (kind == "need-release" && w.size() >= 4) {
      auto versions = versions_of(w[2]);
      auto major = parse_number(w[3]);
      if (!versions || !major) return bad("expected VERSIONS CUDA_MAJOR");
      out.need_by_release.push_back({std::string(w[1]), *versions, *major, std::string(w[2])});
    } else if (kind == "archs" && w.size() >= 5) {
      auto versions = versions_of(w[2]);
      if (!versions) return bad("expected VERSIONS");
      std::optional<std::uint32_t> major;
      if (w[3] != "*") {
        major = parse_number(w[3]);
        if (!major) return bad("expected a CUDA major or *");
      }
      out.archs.push_back({std::string(w[1]), *versions, major, std::string(w[4]),
                           w.size() > 5 ? std::string(w[5]) : std::string()});
    } else if (kind == "arch-floor" && w.size() >= 3) {
      auto major = parse_number(w[1]);
      auto arch = gpu::ComputeCapability::parse(w[2]);
      if (!major || !arch) return bad("expected CUDA_MAJOR ARCH");
      out.arch_floors.push_back({*major, *arch, w.size() > 3 ? std::string(w[3]) : std::string()});
    } else if ((kind == "provides" || kind == "shared-dir" || kind == "coupled") && w.size() >= 3) {
      std::vector<std::string> packages;
      for (std::size_t i = 2; i < w.size(); ++i)
        packages.emplace_back(w[i]);
      if (kind == "provides") {
        out.provides.push_back({std::string(w[1]), std::move(packages)});
      } else if (kind == "shared-dir") {
        out.shared_dirs.push_back({std::string(w[1]), std::move(packages)});
      } else {
        out.coupled.push_back({std::string(w[1]), std::move(packages)});
      }
    } else if (kind == "cuda13-name" && w.size() >= 2) {
      for (std::size_t i = 1; i < w.size(); ++i)
        out.cuda13_names.emplace_back(w[i]);
    } else if (kind == "major-fix" && w.size() >= 3) {
      out.major_fixes.push_back({std::string(w[1]), std::string(w[2])});
    } else if (kind == "find-links" && w.size() >= 2) {
      if (w[1].find("{L}") == std::string_view::npos) return bad("a find-links form needs {L}");
      out.find_links.push_back({std::string(w[1]), w.size() > 2 ? std::string(w[2]) : ""});
    } else {
      return bad(fmt::format("cannot read '{}'", core::trim(row.text)));
    }
  }
  return out;
}

std::optional<std::uint32_t> GpuStacks::major_by_name(std::string_view package) const {
  for (const auto& r : need_by_name) {
    if (r.package == package) return r.major;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> GpuStacks::major_by_release(std::string_view package,
                                                         const core::Version& version) const {
  for (const auto& r : need_by_release) {
    if (r.package == package && r.versions.contains(version.public_version(), true)) return r.major;
  }
  return std::nullopt;
}

const GpuStacks::Archs* GpuStacks::archs_of(std::string_view package, const core::Version& version,
                                            std::uint32_t major) const {
  for (const auto& r : archs) {
    if (r.package == package && (!r.major || *r.major == major) &&
        r.versions.contains(version.public_version(), true)) {
      return &r;
    }
  }
  return nullptr;
}

std::optional<gpu::ComputeCapability> GpuStacks::arch_floor(std::uint32_t major) const {
  for (const auto& r : arch_floors) {
    if (r.major == major) return r.floor;
  }
  return std::nullopt;
}

const GpuStacks::Provides* GpuStacks::provides_of(std::string_view package) const {
  for (const auto& r : provides) {
    if (contains(r.packages, package)) return &r;
  }
  return nullptr;
}

const GpuStacks::SharedDir* GpuStacks::shared_dir_of(std::string_view package) const {
  for (const auto& r : shared_dirs) {
    if (contains(r.packages, package)) return &r;
  }
  return nullptr;
}

bool GpuStacks::is_cuda13_name(std::string_view package) const {
  return contains(cuda13_names, package);
}

const GpuStacks::Coupled* GpuStacks::coupled_of(std::string_view package) const {
  for (const auto& r : coupled) {
    if (contains(r.packages, package)) return &r;
  }
  return nullptr;
}

namespace {

// Digits at `text[at...]`: how many (0 when none).
std::size_t digits_at(std::string_view text, std::size_t at) {
  std::size_t n = 0;
  while (at + n < text.size() && std::isdigit(static_cast<unsigned char>(text[at + n])) != 0)
    ++n;
  return n;
}

// `parts` dot-separated digit runs at `text[at...]` ("2.11.0" for 3): its length, or 0.
std::size_t release_at(std::string_view text, std::size_t at, int parts) {
  std::size_t pos = at;
  for (int p = 0; p < parts; ++p) {
    if (p > 0) {
      if (pos >= text.size() || text[pos] != '.') return 0;
      ++pos;
    }
    std::size_t n = digits_at(text, pos);
    if (n == 0) return 0;
    pos += n;
  }
  return pos - at;
}

// Whether `text` (from `at` to its end) is `form` exactly: {V} is X.Y.Z, {XY} is X.Y, {L} is
// `cpu` or `cu` and digits, `+` is also `%2B`. The placeholders' text goes to `slots`
// (V, XY, L), in order. Without backtracking: each placeholder takes the longest run of its
// characters, and the forms follow each one with a character it cannot take.
bool matches_form(std::string_view text, std::size_t at, std::string_view form,
                  std::vector<std::pair<std::string, std::string>>& slots) {
  std::size_t i = 0;
  while (i < form.size()) {
    std::string_view rest = form.substr(i);
    std::size_t n = 0;
    std::string slot;
    if (rest.starts_with("{V}")) {
      n = release_at(text, at, 3), slot = "V", i += 3;
    } else if (rest.starts_with("{XY}")) {
      n = release_at(text, at, 2), slot = "XY", i += 4;
    } else if (rest.starts_with("{L}")) {
      if (text.substr(at).starts_with("cpu")) {
        n = 3;
      } else if (text.substr(at).starts_with("cu")) {
        n = digits_at(text, at + 2) > 0 ? 2 + digits_at(text, at + 2) : 0;
      }
      slot = "L", i += 3;
    } else {
      char c = form[i++];
      if (at < text.size() && text[at] == c) {
        ++at;
        continue;
      }
      if (c == '+' && (text.substr(at).starts_with("%2B") || text.substr(at).starts_with("%2b"))) {
        at += 3;
        continue;
      }
      return false;
    }
    if (n == 0) return false;
    slots.emplace_back(slot, std::string(text.substr(at, n)));
    at += n;
  }
  return at == text.size();
}

}  // namespace

std::optional<std::string> GpuStacks::follow_find_links(std::string_view url,
                                                        std::string_view torch) const {
  auto plus = torch.find('+');
  if (plus == std::string_view::npos) return std::nullopt;
  std::string version(torch.substr(0, plus)), label(torch.substr(plus + 1));
  auto second_dot = version.find('.', version.find('.') + 1);
  std::string xy = version.substr(0, second_dot);
  for (const auto& row : find_links) {
    // The form matches the URL's end, from its start or just after a '/'.
    for (std::size_t start = 0; start < url.size(); ++start) {
      if (start > 0 && url[start - 1] != '/') continue;
      std::vector<std::pair<std::string, std::string>> slots;
      if (!matches_form(url, start, row.form, slots)) continue;
      bool same = std::all_of(slots.begin(), slots.end(), [&](const auto& s) {
        return s.second == (s.first == "V" ? version : s.first == "XY" ? xy : label);
      });
      if (same) return std::nullopt;
      return std::string(url.substr(0, start)) +
             replace_all(replace_all(replace_all(row.form, "{V}", version), "{XY}", xy), "{L}",
                         label);
    }
  }
  return std::nullopt;
}

const GpuStacks& gpu_stacks() {
  static const GpuStacks table = [] {
    auto parsed = GpuStacks::parse(gpu_stacks_text());
    return parsed ? std::move(*parsed) : GpuStacks{};
  }();
  return table;
}

namespace {

// Reads digits at `s[i]...`; advances i.
std::optional<std::uint32_t> digits_at(std::string_view s, std::size_t& i, std::size_t max_len) {
  std::size_t start = i;
  while (i < s.size() && i - start < max_len && s[i] >= '0' && s[i] <= '9')
    ++i;
  if (i == start) return std::nullopt;
  return parse_number(s.substr(start, i - start));
}

core::Version release_of(std::uint64_t major, std::uint64_t minor) {
  std::uint64_t parts[2] = {major, minor};
  return core::Version::from_release(parts);
}

}  // namespace

std::optional<CoupledBuild> parse_coupled_label(std::string_view form,
                                                const core::Version& version) {
  std::string label = version.local_string();
  std::string_view s = label;
  CoupledBuild out;
  std::size_t i = 0;
  if (form == "cu{M}torch{X.Y}") {
    // cu12torch2.8cxx11abitrue (v2.7+: the CUDA major only; up to 2.6.3 cu123: major+minor).
    if (!s.starts_with("cu")) return std::nullopt;
    i = 2;
    auto cu = digits_at(s, i, 3);
    if (!cu || s.substr(i, 5) != "torch") return std::nullopt;
    i += 5;
    auto tmaj = digits_at(s, i, 2);
    if (!tmaj || i >= s.size() || s[i] != '.') return std::nullopt;
    ++i;
    auto tmin = digits_at(s, i, 3);
    if (!tmin) return std::nullopt;
    out.torch_release = release_of(*tmaj, *tmin);
    if (*cu >= 100) {
      out.cuda = gpu::CudaVersion{*cu / 10, *cu % 10};
      out.cuda_major = *cu / 10;
    } else {
      out.cuda_major = *cu;
    }
    return out;
  }
  if (form == "pt{X}{Y}cu{NNN}") {
    // pt211cu128: torch 2.11 (the first digit is the major), CUDA 12.8.
    if (!s.starts_with("pt")) return std::nullopt;
    i = 2;
    std::size_t start = i;
    auto t = digits_at(s, i, 4);
    if (!t || i - start < 2 || s.substr(i, 2) != "cu") return std::nullopt;
    auto tmaj = static_cast<std::uint32_t>(s[start] - '0');
    std::uint32_t tmin = *parse_number(s.substr(start + 1, i - start - 1));
    i += 2;
    auto cu = digits_at(s, i, 4);
    if (!cu || *cu < 100 || i != s.size()) return std::nullopt;
    out.torch_release = release_of(tmaj, tmin);
    out.cuda = gpu::CudaVersion{*cu / 10, *cu % 10};
    out.cuda_major = *cu / 10;
    return out;
  }
  if (form == "cu{NNN}") {
    if (!s.starts_with("cu")) return std::nullopt;
    i = 2;
    auto cu = digits_at(s, i, 4);
    if (!cu || *cu < 100 || i != s.size()) return std::nullopt;
    out.cuda = gpu::CudaVersion{*cu / 10, *cu % 10};
    out.cuda_major = *cu / 10;
    return out;
  }
  return std::nullopt;
}

}  // namespace gpulock::gpu
