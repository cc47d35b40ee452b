// `/proc/driver/nvidia/version` with `/proc/driver/nvidia/gpus/*/information`, and
// `nvidia-smi -q -x` (shared/data/inventory-formats.md, sections 3, 6, 7, 8 and 9).
//
// The XML is read by a small reader for nvidia-smi's subset: an element's text is found by
// its tags, a `<gpu ...>` element by its start and end tags; the DOCTYPE and any DTD are never
// read, and no entity is expanded beyond the five predefined ones (a declared entity stays as
// its literal `&name;` text).
#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "inventory_internal.h"

namespace gpulock::gpu::inventory_detail {
namespace {

void read_module_line(std::string_view line, RawHost& h) {
  auto m = read_proc_module(line);
  if (!m) return;
  if (!m->cpu.empty()) h.platform = Platform{"linux", m->cpu};
  if (m->driver) h.driver = m->driver->to_string();
  h.l4t = m->l4t;
}

// Decodes the five predefined entities; any other `&...;` is kept as written.
std::string xml_text(std::string_view s) {
  std::string out;
  s = core::trim(s.substr(0, kMaxField));
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    std::string_view rest = s.substr(i);
    bool done = false;
    for (auto [e, c] : {std::pair{"&amp;", '&'}, std::pair{"&lt;", '<'}, std::pair{"&gt;", '>'},
                        std::pair{"&quot;", '"'}, std::pair{"&apos;", '\''}}) {
      if (rest.starts_with(e)) {
        out.push_back(c);
        i += std::string_view(e).size() - 1;
        done = true;
        break;
      }
    }
    if (!done) out.push_back('&');
  }
  return out;
}

// The text of the first `<tag>...</tag>` in `s`; nullopt when absent or not closed.
std::optional<std::string> element(std::string_view s, std::string_view tag) {
  const std::string open = fmt::format("<{}>", tag);
  const std::string close = fmt::format("</{}>", tag);
  auto a = s.find(open);
  if (a == std::string_view::npos) return std::nullopt;
  auto b = s.find(close, a + open.size());
  if (b == std::string_view::npos) return std::nullopt;
  return xml_text(s.substr(a + open.size(), b - a - open.size()));
}

// The next `<gpu ...>` or `<gpu>` start tag at or after `from`.
std::size_t next_gpu(std::string_view s, std::size_t from) {
  while (from < s.size()) {
    auto p = s.find("<gpu", from);
    if (p == std::string_view::npos || p + 4 >= s.size()) return std::string_view::npos;
    char c = s[p + 4];
    if (c == ' ' || c == '>' || c == '\t' || c == '\n') return p;
    from = p + 4;
  }
  return std::string_view::npos;
}

}  // namespace

}  // namespace gpulock::gpu::inventory_detail

namespace gpulock::gpu {

std::optional<ProcModule> read_proc_module(std::string_view text) {
  using namespace inventory_detail;
  std::string_view line;
  for (const auto& l : split_lines(text.substr(0, std::min<std::size_t>(text.size(), 65536)))) {
    if (l.text.find("Kernel Module") != std::string_view::npos &&
        l.text.find("NVIDIA UNIX") != std::string_view::npos) {
      line = l.text;
      break;
    }
  }
  if (line.empty()) return std::nullopt;
  std::string_view cpu;
  std::string_view version;
  if (line.find("Kernel Module for ") != std::string_view::npos) {
    cpu = token_after(line, "Kernel Module for ");
    auto p = line.find(cpu, line.find("Kernel Module for ") + 18);
    version = token_after(line.substr(p), cpu);
  } else {
    auto unix_at = line.find("NVIDIA UNIX ");
    auto module_at = line.find(" Kernel Module");
    if (unix_at != std::string_view::npos && module_at != std::string_view::npos &&
        module_at > unix_at + 12)
      cpu = core::trim(line.substr(unix_at + 12, module_at - unix_at - 12));
    version = token_after(line, "Kernel Module");
  }
  version = leading_version(version);
  ProcModule m;
  if (!cpu.empty() && cpu.size() < 32) m.cpu = cpu_of(cpu);
  if (version.empty()) return m;
  auto parsed = DriverVersion::parse(version);
  if (parsed && parsed->branch() < 100) {
    m.l4t = std::string(version.substr(0, 64));  // Jetson: the L4T release, not a driver
  } else if (parsed) {
    m.driver = *parsed;
  }
  return m;
}

}  // namespace gpulock::gpu

namespace gpulock::gpu::inventory_detail {

std::vector<RawHost> read_proc(std::string_view text, std::string_view stem) {
  std::vector<RawHost> hosts;
  bool nvml_broken = false;
  auto new_host = [&](std::size_t line) {
    RawHost h;
    h.name = hosts.empty() ? std::string(stem) : fmt::format("{}#{}", stem, hosts.size() + 1);
    h.line = line;
    hosts.push_back(std::move(h));
  };
  for (const auto& line : split_lines(text)) {
    const auto t = line.text;
    if (t.find("Driver/library version mismatch") != std::string_view::npos ||
        t.find("Failed to initialize NVML") != std::string_view::npos)
      nvml_broken = true;
    if (t.find("Kernel Module") != std::string_view::npos &&
        t.find("NVIDIA UNIX") != std::string_view::npos) {
      if (hosts.empty() || !hosts.back().driver.empty() || !hosts.back().l4t.empty()) {
        if (hosts.size() >= kMaxHosts) break;
        new_host(line.number);
      }
      read_module_line(t, hosts.back());
      continue;
    }
    auto k = core::trim_left(t);
    if (k.starts_with("Model:")) {
      if (hosts.empty()) new_host(line.number);
      auto& h = hosts.back();
      h.gpus_listed = true;
      if (h.gpus.size() < kMaxGpusPerHost)
        h.gpus.push_back({std::string(core::trim(k.substr(6)).substr(0, kMaxField)), {}, false});
    }
  }
  for (auto& h : hosts) {
    if (nvml_broken)
      h.warnings.emplace_back(
          "NVML does not work on this host (nvidia-smi failed): the driver "
          "version is the kernel module's");
    if (!h.gpus_listed)
      h.unknown.emplace_back(
          "GPUs (give /proc/driver/nvidia/gpus/*/information with the version file)");
  }
  return hosts;
}

std::vector<RawHost> read_smi_xml(std::string_view text, std::string_view stem) {
  std::vector<RawHost> hosts;
  auto log = text.find("<nvidia_smi_log");
  if (log == std::string_view::npos) return hosts;
  RawHost h;
  h.name = std::string(stem);
  h.line = 1;
  for (std::size_t i = 0; i < log; ++i)
    if (text[i] == '\n') ++h.line;
  // The log's own facts come before its first <gpu>.
  auto first_gpu = next_gpu(text, log);
  auto head = text.substr(
      log, first_gpu == std::string_view::npos ? std::string_view::npos : first_gpu - log);
  if (auto v = element(head, "driver_version")) h.driver = *v;
  if (auto v = element(head, "cuda_version")) {
    h.ceiling = *v;
    h.ceiling_from = "cuda_version";
  }
  std::size_t attached = 0;
  if (auto v = element(head, "attached_gpus")) {
    for (char c : v->substr(0, 4))
      attached =
          (c >= '0' && c <= '9') ? attached * 10 + static_cast<std::size_t>(c - '0') : attached;
  }
  bool cut = false;
  for (auto p = first_gpu; p != std::string_view::npos && h.gpus.size() < kMaxGpusPerHost;) {
    auto end = text.find("</gpu>", p);
    if (end == std::string_view::npos) {
      cut = true;
      break;
    }
    auto gpu = text.substr(p, end - p);
    RawGpu g;
    g.name = element(gpu, "product_name").value_or("(unnamed GPU)");
    if (auto mig = element(gpu, "current_mig")) g.mig = *mig == "Enabled";
    h.gpus.push_back(std::move(g));
    p = next_gpu(text, end);
  }
  h.gpus_listed = !cut || !h.gpus.empty();
  if (cut)
    h.warnings.emplace_back(
        "the XML stops part way: GPUs after the last complete one are not read");
  if (attached != 0 && attached != h.gpus.size())
    h.warnings.push_back(
        fmt::format("attached_gpus says {}, the XML lists {}", attached, h.gpus.size()));
  if (!h.driver.empty() || !h.gpus.empty()) hosts.push_back(std::move(h));
  return hosts;
}

}  // namespace gpulock::gpu::inventory_detail
