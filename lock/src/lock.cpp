#include "gpulock/lock/lock.h"

#include <algorithm>

#include "gpulock/core/name.h"
#include "gpulock/core/version.h"

namespace gpulock::lock {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string last_component(std::string_view s) {
  const auto slash = s.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? s : s.substr(slash + 1));
}

// -1, 0, 1 comparison of two version strings: PEP 440 when both parse (parseable ones first),
// then text, so that the order is total and deterministic.
int compare_versions(const std::optional<std::string>& a, const std::optional<std::string>& b) {
  if (!a || !b) return a ? 1 : (b ? -1 : 0);
  auto va = core::Version::parse(*a);
  auto vb = core::Version::parse(*b);
  if (va && vb) {
    auto c = *va <=> *vb;
    if (c < 0) return -1;
    if (c > 0) return 1;
  } else if (va || vb) {
    return va ? -1 : 1;
  }
  return a->compare(*b) < 0 ? -1 : (a->compare(*b) > 0 ? 1 : 0);
}

}  // namespace

std::string FileEntry::filename() const {
  if (name) return *name;
  if (path) return last_component(*path);
  if (url) {
    std::string_view u = *url;
    u = u.substr(0, u.find_first_of("?#"));
    return percent_decode(last_component(u));
  }
  return {};
}

std::vector<const FileEntry*> Package::files() const {
  std::vector<const FileEntry*> out;
  if (archive) out.push_back(&*archive);
  if (sdist) out.push_back(&*sdist);
  if (wheels) {
    for (const auto& w : *wheels)
      out.push_back(&w);
  }
  return out;
}

bool package_less(const Package& a, const Package& b) {
  const std::string na = core::normalize_name(a.name);
  const std::string nb = core::normalize_name(b.name);
  if (na != nb) return na < nb;
  if (int c = compare_versions(a.version, b.version); c != 0) return c < 0;
  if (a.marker != b.marker) return a.marker < b.marker;  // absent first
  return false;
}

void canonicalize(Lock& lock) {
  for (auto& p : lock.packages) {
    if (p.wheels) {
      std::stable_sort(
          p.wheels->begin(), p.wheels->end(),
          [](const FileEntry& x, const FileEntry& y) { return x.filename() < y.filename(); });
    }
  }
  std::stable_sort(lock.packages.begin(), lock.packages.end(), package_less);
}

std::string canonical_inputs_text(const GpulockInputs& inputs) {
  std::string out;
  for (const auto& r : inputs.requirements)
    out += "requirement " + r + "\n";
  for (const auto& f : inputs.files)
    out += "file " + f.kind + " " + f.path + " " + f.sha256 + "\n";
  for (const auto& e : inputs.extras)
    out += "extra " + e + "\n";
  for (const auto& g : inputs.groups)
    out += "group " + g + "\n";
  for (const auto& [k, v] : inputs.options)
    out += "option " + k + "=" + v + "\n";
  return out;
}

std::vector<const Package*> find_packages(const Lock& lock, std::string_view name) {
  const std::string wanted = core::normalize_name(name);
  std::vector<const Package*> out;
  for (const auto& p : lock.packages) {
    if (core::normalize_name(p.name) == wanted) out.push_back(&p);
  }
  return out;
}

}  // namespace gpulock::lock
