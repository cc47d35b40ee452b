// `kubectl get nodes -o json` (and one node's `kubectl get node N -o json`): the GPU Feature
// Discovery labels of each node (shared/data/inventory-formats.md, "GFD labels").
//
// The JSON is read by the small bounded reader below, not simdjson: simdjson belongs to index
// (the layering test keeps third-party headers in their owner's src/), and gpu, which index and
// probe sit on, may not include index. The reader keeps one node's values at a time (the
// `items` array is walked element by element), nests at most kMaxDepth deep, and stops at the
// first byte that breaks the grammar, keeping the nodes read before it.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "gpulock/core/text.h"

#include "inventory_internal.h"

namespace gpulock::gpu::inventory_detail {
namespace {

constexpr int kMaxDepth = 64;

// The members of a node object (at any depth) its facts are read from.
constexpr std::array<std::string_view, 7> kKept{
    "metadata", "name", "labels", "status", "nodeInfo", "architecture", "operatingSystem"};

struct JValue {
  enum class Kind : std::uint8_t { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  std::string text;               ///< a string's value, a number's or literal's text
  std::vector<JValue> items;      ///< an array's values, an object's member values
  std::vector<std::string> keys;  ///< an object's member names (items[i] is keys[i]'s value)

  [[nodiscard]] const JValue* get(std::string_view key) const {
    if (kind != Kind::Object) return nullptr;
    for (std::size_t i = 0; i < keys.size() && i < items.size(); ++i)
      if (keys[i] == key) return &items[i];
    return nullptr;
  }
  JValue& add(std::string key, JValue v) {
    keys.push_back(std::move(key));
    items.push_back(std::move(v));
    return items.back();
  }
  JValue& add(std::string key) { return add(std::move(key), JValue()); }
};

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  [[nodiscard]] bool at(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  [[nodiscard]] std::size_t pos() const { return pos_; }
  void seek(std::size_t p) { pos_ = p; }

  bool string(std::string& out) {
    if (!eat('"')) return false;
    out.clear();
    while (pos_ < text_.size()) {
      // A run without quotes, escapes or control bytes is copied at once.
      std::size_t run = pos_;
      while (run < text_.size() && text_[run] != '"' && text_[run] != '\\' &&
             static_cast<unsigned char>(text_[run]) >= 0x20)
        ++run;
      if (run > pos_) {
        if (out.size() < kMaxField)
          out.append(text_.substr(pos_, std::min(run - pos_, kMaxField - out.size())));
        pos_ = run;
        continue;
      }
      char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (out.size() < kMaxField) out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return false;
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // no pairing: a label never has one
          if (out.size() < kMaxField) core::append_utf8(out, cp);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }

  /// `filtered`: an object keeps only the members a node's facts are read from (kKept; every
  /// member of `labels`), the others are read and dropped (images, conditions, annotations).
  bool value(JValue& v, int depth, bool filtered = false) {
    if (depth > kMaxDepth) return false;
    skip_space();
    if (pos_ >= text_.size()) return false;
    const char c = text_[pos_];
    if (c == '"') {
      v.kind = JValue::Kind::String;
      return string(v.text);
    }
    if (c == '{') {
      ++pos_;
      v.kind = JValue::Kind::Object;
      if (eat('}')) return true;
      do {
        std::string key;
        if (!string(key) || !eat(':')) return false;
        const bool keep = !filtered || std::find(kKept.begin(), kKept.end(), key) != kKept.end();
        const bool labels = key == "labels";
        if (keep) {
          if (!value(v.add(std::move(key)), depth + 1, filtered && !labels)) return false;
        } else {
          JValue dropped;
          if (!value(dropped, depth + 1, true)) return false;
        }
      } while (eat(','));
      return eat('}');
    }
    if (c == '[') {
      ++pos_;
      v.kind = JValue::Kind::Array;
      if (eat(']')) return true;
      do {
        v.items.emplace_back();
        if (!value(v.items.back(), depth + 1, filtered)) return false;
      } while (eat(','));
      return eat(']');
    }
    return scalar(v);
  }

 private:
  bool hex4(std::uint32_t& cp) {
    if (pos_ + 4 > text_.size()) return false;
    for (int i = 0; i < 4; ++i) {
      char h = text_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= static_cast<std::uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        cp |= static_cast<std::uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        cp |= static_cast<std::uint32_t>(h - 'A' + 10);
      else
        return false;
    }
    return true;
  }
  bool scalar(JValue& v) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && pos_ - start < 64) {
      char c = text_[pos_];
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' ||
          c == 'E')
        ++pos_;
      else
        break;
    }
    v.text = std::string(text_.substr(start, pos_ - start));
    if (v.text == "true" || v.text == "false") {
      v.kind = JValue::Kind::Bool;
    } else if (v.text == "null") {
      v.kind = JValue::Kind::Null;
    } else if (!v.text.empty() && (v.text[0] == '-' || (v.text[0] >= '0' && v.text[0] <= '9'))) {
      v.kind = JValue::Kind::Number;
    } else {
      return false;
    }
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::string label(const JValue* labels, std::string_view key) {
  if (labels == nullptr) return {};
  const JValue* v = labels->get(key);
  if (v == nullptr || (v->kind != JValue::Kind::String && v->kind != JValue::Kind::Number))
    return {};
  return v->text;
}

// major.minor[.rev] from three labels of one family, else empty.
std::string joined(const JValue* labels, std::string_view family, std::string_view rev) {
  auto major = label(labels, fmt::format("nvidia.com/{}.major", family));
  auto minor = label(labels, fmt::format("nvidia.com/{}.minor", family));
  if (major.empty() || minor.empty()) return {};
  auto r =
      rev.empty() ? std::string() : label(labels, fmt::format("nvidia.com/{}.{}", family, rev));
  return r.empty() ? fmt::format("{}.{}", major, minor) : fmt::format("{}.{}.{}", major, minor, r);
}

bool mig_on(const JValue* labels, std::string_view product) {
  if (product.find("-MIG-") != std::string_view::npos) return true;
  auto config = label(labels, "nvidia.com/mig.config");
  if (!config.empty() && config != "all-disabled") return true;
  if (labels != nullptr) {
    for (const auto& k : labels->keys)
      if (k.starts_with("nvidia.com/mig-") && k.ends_with(".count")) return true;
  }
  return false;
}

RawHost node_host(const JValue& node, std::size_t line, std::string_view stem, std::size_t index) {
  RawHost h;
  h.line = line;
  const JValue* meta = node.get("metadata");
  const JValue* name = meta != nullptr ? meta->get("name") : nullptr;
  h.name = name != nullptr && name->kind == JValue::Kind::String
               ? name->text
               : fmt::format("{}#{}", stem, index);
  const JValue* labels = meta != nullptr ? meta->get("labels") : nullptr;
  h.labelled = true;
  if (labels != nullptr) {
    for (std::size_t i = 0; i < labels->keys.size() && i < labels->items.size(); ++i) {
      const auto& k = labels->keys[i];
      const auto& v = labels->items[i];
      if ((k.starts_with("nvidia.com/") || k == "kubernetes.io/arch") &&
          v.kind == JValue::Kind::String && h.labels.size() < 512)
        h.labels.emplace_back(k, v.text);
    }
  }
  h.driver = label(labels, "nvidia.com/cuda.driver-version.full");
  if (h.driver.empty()) h.driver = joined(labels, "cuda.driver-version", "revision");
  if (h.driver.empty()) h.driver = joined(labels, "cuda.driver", "rev");
  h.ceiling = label(labels, "nvidia.com/cuda.runtime-version.full");
  h.ceiling_from = "nvidia.com/cuda.runtime-version.full";
  if (h.ceiling.empty()) {
    h.ceiling = joined(labels, "cuda.runtime-version", "");
    if (h.ceiling.empty()) h.ceiling = joined(labels, "cuda.runtime", "");
    h.ceiling_from = "nvidia.com/cuda.runtime-version";
  }
  std::string arch = label(labels, "kubernetes.io/arch");
  if (arch.empty()) arch = label(labels, "beta.kubernetes.io/arch");
  if (arch.empty()) {
    const JValue* status = node.get("status");
    const JValue* info = status != nullptr ? status->get("nodeInfo") : nullptr;
    const JValue* a = info != nullptr ? info->get("architecture") : nullptr;
    if (a != nullptr && a->kind == JValue::Kind::String) arch = a->text;
  }
  std::string os = label(labels, "kubernetes.io/os");
  if (!arch.empty()) h.platform = Platform{os.empty() ? "linux" : os, cpu_of(arch)};
  const std::string product = label(labels, "nvidia.com/gpu.product");
  const std::string cc = joined(labels, "gpu.compute", "");
  if (!product.empty() || !cc.empty()) {
    std::size_t count = 1;
    auto count_text = label(labels, "nvidia.com/gpu.count");
    if (!count_text.empty()) {
      std::size_t n = 0;
      for (char c : count_text.substr(0, 4))
        n = (c >= '0' && c <= '9') ? n * 10 + static_cast<std::size_t>(c - '0') : n;
      count = std::clamp<std::size_t>(n, 1, kMaxGpusPerHost);
    }
    const bool mig = mig_on(labels, product);
    for (std::size_t i = 0; i < count; ++i)
      h.gpus.push_back({product.empty() ? std::string("(unnamed GPU)") : product, cc, mig});
    h.gpus_listed = true;
  } else if (h.driver.empty()) {
    h.warnings.emplace_back(
        "no GPU Feature Discovery labels (a node without GPUs, or GFD is not running on it)");
  }
  return h;
}

std::size_t line_at(std::string_view text, std::size_t pos, std::size_t& counted_to,
                    std::size_t& line) {
  const std::size_t end = std::min(pos, text.size());
  if (counted_to < end) {
    line +=
        static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted_to),
                                            text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    counted_to = end;
  }
  return line;
}

}  // namespace

core::Result<std::vector<RawHost>> read_kubectl_json(std::string_view text, std::string_view stem) {
  // Text around the JSON (a shell prompt, the command): start at the first line opening '{'.
  std::size_t start = 0;
  while (start < text.size()) {
    auto p = text.find('{', start);
    if (p == std::string_view::npos)
      return core::fail(core::ErrorCode::InvalidInput, "no JSON object");
    if (p == 0 || text[p - 1] == '\n') {
      start = p;
      break;
    }
    start = p + 1;
  }
  Reader r(text);
  r.seek(start);
  std::size_t counted = 0;
  std::size_t line = 1;
  std::vector<RawHost> hosts;
  JValue top;
  top.kind = JValue::Kind::Object;
  bool complete = false;
  bool items_seen = false;
  if (!r.eat('{')) return core::fail(core::ErrorCode::InvalidInput, "no JSON object");
  bool ok = true;
  if (!r.eat('}')) {
    do {
      std::string key;
      if (!r.string(key) || !r.eat(':')) {
        ok = false;
        break;
      }
      if (key == "items" && r.at('[')) {
        items_seen = true;
        r.eat('[');
        if (r.eat(']')) continue;
        do {
          JValue node;
          r.skip_space();
          const std::size_t node_line = line_at(text, r.pos(), counted, line);
          if (!r.value(node, 1, true)) {
            ok = false;
            break;
          }
          if (hosts.size() < kMaxHosts)
            hosts.push_back(node_host(node, node_line, stem, hosts.size()));
        } while (r.eat(','));
        if (!ok || !r.eat(']')) {
          ok = false;
          break;
        }
        continue;
      }
      if (!r.value(top.add(std::move(key)), 1, true)) {
        ok = false;
        break;
      }
    } while (r.eat(','));
    complete = ok && r.eat('}');
  } else {
    complete = true;
  }
  if (!items_seen && top.get("metadata") != nullptr) hosts.push_back(node_host(top, 1, stem, 0));
  if (!complete && !hosts.empty()) {
    hosts.back().warnings.emplace_back(
        "the JSON stops part way (cut off or broken) after this node: nodes after it are not read");
  }
  if (hosts.empty())
    return core::fail(core::ErrorCode::InvalidInput,
                      complete ? "no nodes in the kubectl JSON"
                               : "the kubectl JSON breaks off before its first node");
  return hosts;
}

}  // namespace gpulock::gpu::inventory_detail

namespace gpulock::gpu::inventory_detail {
namespace {

// A node of `kubectl describe node(s)` as the JSON reader's value: metadata.name and the labels.
JValue described_node(std::string name) {
  JValue node;
  node.kind = JValue::Kind::Object;
  JValue meta;
  meta.kind = JValue::Kind::Object;
  JValue n;
  n.kind = JValue::Kind::String;
  n.text = std::move(name);
  meta.add("name", std::move(n));
  JValue labels;
  labels.kind = JValue::Kind::Object;
  meta.add("labels", std::move(labels));
  node.add("metadata", std::move(meta));
  return node;
}

JValue& labels_of(JValue& node) {
  return node.items[0].items[1];
}

// One `key=value` label of a Labels: block.
void add_label(JValue& node, std::string_view text) {
  text = core::trim(text);
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return;
  auto& labels = labels_of(node);
  if (labels.keys.size() >= 4096) return;
  JValue v;
  v.kind = JValue::Kind::String;
  v.text = std::string(text.substr(eq + 1, kMaxField));
  labels.add(std::string(text.substr(0, std::min(eq, kMaxField))), std::move(v));
}

}  // namespace

std::vector<RawHost> read_kubectl_describe(std::string_view text, std::string_view stem) {
  std::vector<RawHost> hosts;
  std::optional<JValue> node;
  std::size_t node_line = 0;
  bool in_labels = false;
  auto flush = [&] {
    if (node && hosts.size() < kMaxHosts)
      hosts.push_back(node_host(*node, node_line, stem, hosts.size()));
    node.reset();
  };
  for (const auto& line : split_lines(text)) {
    const auto t = line.text;
    if (t.starts_with("Name:")) {
      flush();
      node = described_node(std::string(core::trim(t.substr(5)).substr(0, kMaxField)));
      node_line = line.number;
      in_labels = false;
      continue;
    }
    if (!node) continue;
    if (t.starts_with("Labels:")) {
      in_labels = true;
      add_label(*node, t.substr(7));
      continue;
    }
    if (in_labels && !t.empty() && (t[0] == ' ' || t[0] == '\t')) {
      add_label(*node, t);
      continue;
    }
    in_labels = false;
  }
  flush();
  return hosts;
}

std::vector<RawHost> read_probe_json(std::string_view text, std::string_view stem) {
  // One `gpulock probe --machine --json` document, or several one after the other (gathered
  // from many hosts): each object that starts a line is one host.
  std::vector<RawHost> hosts;
  std::size_t line = 1, counted = 0;
  for (std::size_t p = text.find('{'); p != std::string_view::npos && hosts.size() < kMaxHosts;
       p = text.find('{', p + 1)) {
    if (p != 0 && text[p - 1] != '\n') continue;
    Reader r(text);
    r.seek(p);
    JValue doc;
    const bool ok = r.value(doc, 0);
    const JValue* schema = doc.get("schema");
    if (schema == nullptr || schema->text != "gpulock.machine/1") continue;
    RawHost h;
    h.line = line_at(text, p, counted, line);
    h.name = hosts.empty() ? std::string(stem) : fmt::format("{}#{}", stem, hosts.size() + 1);
    // `fleet probe` writes each node's name (`node`), and `probe_error` for a node whose probe
    // gave no document.
    if (const JValue* node = doc.get("node");
        node != nullptr && node->kind == JValue::Kind::String && !node->text.empty())
      h.name = node->text;
    if (const JValue* failed = doc.get("probe_error");
        failed != nullptr && failed->kind == JValue::Kind::String)
      h.probe_error = failed->text.empty() ? std::string("no document") : failed->text;
    if (const JValue* status = doc.get("status");
        status != nullptr && status->kind == JValue::Kind::String && (status->text == "no-driver"))
      h.no_gpu_read = "no NVIDIA driver (probe --machine: no-driver)";
    auto version_of = [&](std::string_view key) -> std::string {
      const JValue* o = doc.get(key);
      const JValue* v = o != nullptr ? o->get("version") : nullptr;
      return v != nullptr && v->kind == JValue::Kind::String ? v->text : std::string();
    };
    h.driver = version_of("driver");
    h.ceiling = version_of("cuda_ceiling");
    h.ceiling_from = "probe --machine cuda_ceiling";
    // The node's OS and CPU (uname; documents before 2026-12 have none).
    if (const JValue* platform = doc.get("platform"); platform != nullptr) {
      const JValue* os = platform->get("os");
      const JValue* cpu = platform->get("cpu");
      auto word = [](const JValue* v) {
        return v != nullptr && v->kind == JValue::Kind::String && !v->text.empty() &&
               v->text.size() <= 32;
      };
      if (word(os) && word(cpu)) h.platform = Platform{os->text, cpu_of(cpu->text)};
    }
    const JValue* wsl = doc.get("wsl");
    if (wsl != nullptr && wsl->text == "true")
      h.warnings.emplace_back("WSL (as probe found it): the driver is the one probe read");
    if (const JValue* gpus = doc.get("gpus"); gpus != nullptr) {
      h.gpus_listed = true;
      for (const auto& g : gpus->items) {
        if (h.gpus.size() >= kMaxGpusPerHost) break;
        const JValue* name = g.get("name");
        const JValue* cc = g.get("compute_capability");
        h.gpus.push_back({name != nullptr ? name->text : std::string("(unnamed GPU)"),
                          cc != nullptr && cc->kind == JValue::Kind::String ? cc->text : "",
                          false});
      }
    }
    if (!ok) h.warnings.emplace_back("the JSON stops part way: facts after the cut are not read");
    hosts.push_back(std::move(h));
    if (!ok) break;
    p = r.pos() > p ? r.pos() - 1 : p;
  }
  return hosts;
}

namespace {

// `text` as one JSON object, read whole (nothing but space after it when `alone`).
bool read_object(std::string_view text, bool alone, JValue& doc) {
  if (text.size() > kMaxText) return false;
  Reader r(text);
  r.skip_space();
  if (!r.at('{') || !r.value(doc, 0)) return false;
  r.skip_space();
  return !alone || r.pos() == text.size();
}

}  // namespace

bool one_json_document(std::string_view text, std::string_view schema) {
  JValue doc;
  if (!read_object(text, true, doc)) return false;
  const JValue* s = doc.get("schema");
  return s != nullptr && s->kind == JValue::Kind::String && s->text == schema;
}

}  // namespace gpulock::gpu::inventory_detail

namespace gpulock::gpu {

std::vector<std::string> lock_probe_failures(std::string_view text) {
  using namespace inventory_detail;
  std::vector<std::string> out;
  JValue doc;
  if (!read_object(text, false, doc)) return out;
  const JValue* findings = doc.get("findings");
  if (findings == nullptr || findings->kind != JValue::Kind::Array) return out;
  for (const auto& f : findings->items) {
    const JValue* severity = f.get("severity");
    const JValue* id = f.get("id");
    const JValue* message = f.get("message");
    if (severity == nullptr || severity->text != "fail" || id == nullptr || message == nullptr ||
        id->kind != JValue::Kind::String || message->kind != JValue::Kind::String)
      continue;
    out.push_back(fmt::format("{}: {}", id->text, message->text));
  }
  return out;
}

}  // namespace gpulock::gpu
