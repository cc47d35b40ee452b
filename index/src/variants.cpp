// PEP 825 wheel variants: file-name labels and `*-variants.json` in its three dialects (simdjson
// DOM: the files are small). Pure.

#include "gpulock/index/variants.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "gpulock/core/filename.h"
#include "gpulock/core/name.h"

namespace gpulock::index {
namespace {

namespace dom = simdjson::dom;

bool name_chars(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_';
  });
}

std::unexpected<core::Error> bad(std::string_view where, std::string message) {
  return core::fail_at(core::ErrorCode::InvalidMetadata, std::move(message), std::string(where));
}

// "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json" -> {825, "0.1.1"}; the draft
// URLs -> {0, "0.0.N"} (the bare host: "0.0.1").
struct SchemaId {
  int pep = 0;
  std::string version;
};
std::optional<SchemaId> schema_id(std::string_view schema) {
  constexpr std::string_view kBase = "https://variants-schema.wheelnext.dev/";
  if (!schema.starts_with(kBase)) return std::nullopt;
  std::string_view rest = schema.substr(kBase.size());
  if (rest.empty()) return SchemaId{0, "0.0.1"};
  SchemaId id;
  if (rest.starts_with("peps/")) {
    rest.remove_prefix(5);
    auto slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    auto pep = rest.substr(0, slash);
    if (std::from_chars(pep.data(), pep.data() + pep.size(), id.pep).ec != std::errc())
      return std::nullopt;
    rest.remove_prefix(slash + 1);
  }
  if (!rest.starts_with("v") || !rest.ends_with(".json")) return std::nullopt;
  id.version = std::string(rest.substr(1, rest.size() - 6));
  return id;
}

// A JSON array of strings.
bool strings_of(dom::element e, std::vector<std::string>& out) {
  dom::array arr;
  if (e.get_array().get(arr)) return false;
  for (dom::element x : arr) {
    std::string_view s;
    if (x.get_string().get(s)) return false;
    out.emplace_back(s);
  }
  return true;
}

// {namespace: {feature: [values]}}; `sorted`: PEP 825 value sets.
core::Result<std::map<std::string, std::map<std::string, std::vector<std::string>>>> properties_of(
    dom::element e, std::string_view where, std::string_view what, bool check_values) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> out;
  dom::object namespaces;
  if (e.get_object().get(namespaces)) return bad(where, fmt::format("{} is not an object", what));
  for (auto ns : namespaces) {
    if (!name_chars(ns.key))
      return bad(where, fmt::format("{}: namespace '{}' is not [a-z0-9_]+", what, ns.key));
    dom::object features;
    if (ns.value.get_object().get(features))
      return bad(where, fmt::format("{}: namespace '{}' is not an object", what, ns.key));
    auto& dst = out[std::string(ns.key)];
    for (auto f : features) {
      if (!name_chars(f.key))
        return bad(where, fmt::format("{}: feature '{}' is not [a-z0-9_]+", what, f.key));
      std::vector<std::string> values;
      if (!strings_of(f.value, values))
        return bad(where,
                   fmt::format("{}: {} :: {} is not a list of strings", what, ns.key, f.key));
      for (const auto& v : values) {
        if (check_values && !core::is_variant_label(v))
          return bad(where, fmt::format("{}: value '{}' is not [a-z0-9_.]+", what, v));
      }
      dst[std::string(f.key)] = std::move(values);
    }
  }
  return out;
}

}  // namespace

std::string_view variant_dialect_name(VariantDialect d) noexcept {
  switch (d) {
    case VariantDialect::WheelnextDraft:
      return "wheelnext-draft";
    case VariantDialect::Pep825:
      return "pep825";
    case VariantDialect::Pep850:
      return "pep850";
  }
  return "pep825";
}

std::optional<VariantsJsonName> variants_json_name(std::string_view filename) {
  constexpr std::string_view kSuffix = "-variants.json";
  if (!filename.ends_with(kSuffix)) return std::nullopt;
  std::string_view stem = filename.substr(0, filename.size() - kSuffix.size());
  auto dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  std::string_view name = stem.substr(0, dash);
  if (!std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
      })) {
    return std::nullopt;
  }
  auto version = core::Version::parse(stem.substr(dash + 1));
  if (!version) return std::nullopt;
  return VariantsJsonName{core::normalize_name(name), std::move(*version)};
}

std::string variant_label_of(std::string_view filename) {
  auto split = split_variant_label(filename);
  return split && *split ? (*split)->label : std::string();
}

core::Result<std::optional<VariantFilename>> split_variant_label(std::string_view filename) {
  auto split = core::split_variant_label(filename);
  if (!split) return std::optional<VariantFilename>{};
  if (!core::is_variant_label(split->second)) {
    return core::fail_at(
        core::ErrorCode::InvalidInput,
        fmt::format("variant label '{}' is not [0-9a-z_.]+ (PEP 825)", split->second),
        std::string(filename));
  }
  return std::optional<VariantFilename>{
      VariantFilename{std::move(split->first), std::move(split->second)}};
}

core::Result<VariantsJson> parse_variants_json(std::string_view text, std::string_view where) {
  dom::parser parser;
  simdjson::padded_string padded(text);
  dom::element doc;
  if (auto err = parser.parse(padded).get(doc); err) {
    return bad(where, fmt::format("variant metadata is not valid JSON ({})",
                                  simdjson::error_message(err)));
  }
  dom::object root;
  if (doc.get_object().get(root)) return bad(where, "variant metadata is not a JSON object");
  std::string_view schema;
  if (root["$schema"].get_string().get(schema))
    return bad(where, "variant metadata has no $schema");
  auto id = schema_id(schema);
  if (!id) return bad(where, fmt::format("unknown variant metadata $schema '{}'", schema));
  if (!id->version.starts_with("0.")) {
    return bad(where, fmt::format("unsupported variant metadata version {} (PEP 825 requires "
                                  "rejecting an unknown major)",
                                  id->version));
  }
  VariantsJson out;
  out.schema = std::string(schema);
  out.dialect = id->pep == 850   ? VariantDialect::Pep850
                : id->pep == 825 ? VariantDialect::Pep825
                : id->pep == 0   ? VariantDialect::WheelnextDraft
                                 : VariantDialect::Pep825;
  if (id->pep != 0 && id->pep != 825 && id->pep != 850)
    return bad(where, fmt::format("unknown variant metadata $schema '{}'", schema));
  for (auto field : root) {
    std::string_view key = field.key;
    bool known = key == "$schema" || key == "default-priorities" || key == "variants" ||
                 (key == "providers" && out.dialect != VariantDialect::Pep825) ||
                 (key == "static-properties" && out.dialect == VariantDialect::WheelnextDraft);
    if (!known) {
      return bad(where, fmt::format("'{}' is not a key of {} variant metadata", key,
                                    variant_dialect_name(out.dialect)));
    }
  }
  dom::element priorities;
  if (!root["default-priorities"].get(priorities)) {
    dom::element ns;
    if (!priorities["namespace"].get(ns) && !strings_of(ns, out.namespace_priorities))
      return bad(where, "default-priorities.namespace is not a list of strings");
  }
  dom::object variants;
  if (root["variants"].get_object().get(variants)) return bad(where, "variants is not an object");
  for (auto v : variants) {
    if (!core::is_variant_label(v.key))
      return bad(where, fmt::format("variant label '{}' is not [0-9a-z_.]+", v.key));
    auto props = properties_of(v.value, where, fmt::format("variant '{}'", v.key), true);
    if (!props) return std::unexpected(props.error());
    out.variants[std::string(v.key)] = std::move(*props);
  }
  dom::element statics;
  if (out.dialect == VariantDialect::WheelnextDraft && !root["static-properties"].get(statics)) {
    auto props = properties_of(statics, where, "static-properties", false);
    if (!props) return std::unexpected(props.error());
    out.static_properties = std::move(*props);
  }
  dom::object providers;
  if (out.dialect == VariantDialect::Pep850 && !root["providers"].get_object().get(providers)) {
    for (auto p : providers) {
      dom::element sp;
      if (p.value["static-properties"].get(sp)) continue;
      dom::object features;
      if (sp.get_object().get(features)) return bad(where, "static-properties is not an object");
      for (auto f : features) {
        std::vector<std::string> values;
        if (!strings_of(f.value, values))
          return bad(where, "static-properties values are not lists of strings");
        out.static_properties[std::string(p.key)][std::string(f.key)] = std::move(values);
      }
    }
  }
  return out;
}

}  // namespace gpulock::index
