// Core metadata (packaging.python.org, "Core metadata specifications"): an RFC 822 header
// block read the way Python's email parser reads it (which is what pip, packaging.metadata
// and importlib.metadata use), in one pass over the text.
#include "gpulock/core/metadata.h"

#include <cstdint>
#include <unordered_set>

#include <fmt/format.h>

#include "gpulock/core/name.h"
#include "gpulock/core/text.h"

namespace gpulock::core {
namespace {

// The newest Metadata-Version this parser knows (core-metadata.rst; 2.6 is PEP 808).
constexpr std::uint32_t kNewestMajor = 2;
constexpr std::uint32_t kNewestMinor = 6;

enum class Field : std::uint8_t {
  Other,
  MetadataVersion,
  Name,
  Version,
  RequiresPython,
  RequiresDist,
  ProvidesExtra
};

Field classify(std::string_view name) noexcept {
  if (iequals(name, "Metadata-Version")) return Field::MetadataVersion;
  if (iequals(name, "Name")) return Field::Name;
  if (iequals(name, "Version")) return Field::Version;
  if (iequals(name, "Requires-Python")) return Field::RequiresPython;
  if (iequals(name, "Requires-Dist")) return Field::RequiresDist;
  if (iequals(name, "Provides-Extra")) return Field::ProvidesExtra;
  return Field::Other;
}

std::string_view field_label(Field f) noexcept {
  switch (f) {
    case Field::MetadataVersion:
      return "Metadata-Version";
    case Field::Name:
      return "Name";
    case Field::Version:
      return "Version";
    case Field::RequiresPython:
      return "Requires-Python";
    case Field::RequiresDist:
      return "Requires-Dist";
    case Field::ProvidesExtra:
      return "Provides-Extra";
    case Field::Other:
      break;
  }
  return "field";
}

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t';
}

// What surrounds a field's value: folding whitespace and a stray line end.
constexpr std::string_view kValueSpace = " \t\r\n";

// A header field name as email's headerRE accepts it: printable ASCII except ':' and space.
bool is_field_name(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

// One field we keep: its unfolded value and where it started.
struct RawValue {
  std::string value;          // unfolded (continuation lines appended with their whitespace)
  std::size_t line = 0;       // 1-based line of the field name
  std::size_t column0 = 0;    // 0-based column of the value's first character in that line
  std::size_t first_len = 0;  // length of the value's part on the first line
};

std::unexpected<Error> metadata_error(std::string message, std::size_t line,
                                      std::size_t column = 0) {
  return std::unexpected(
      make_error(ErrorCode::InvalidMetadata, std::move(message), {}, line, column));
}

// A nested parser's error on a field value: keep its message and hints, point at the line,
// and at the column when the error falls on the field's first line.
std::unexpected<Error> nested_error(Field field, const RawValue& raw, const Error& inner) {
  std::size_t column = 0;
  if (inner.column != 0 && inner.column <= raw.first_len + 1) column = raw.column0 + inner.column;
  Error e = make_error(ErrorCode::InvalidMetadata,
                       fmt::format("invalid {}: {}", field_label(field), inner.message), {},
                       raw.line, column);
  e.hints = inner.hints;  // the nested parser's advice still applies
  return std::unexpected(std::move(e));
}

// Parses "X.Y" into major/minor; false for anything else.
bool parse_metadata_version(std::string_view s, std::uint32_t& major, std::uint32_t& minor) {
  auto number = [&](std::size_t& i, std::uint32_t& out) {
    std::size_t start = i;
    std::uint64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(s[i] - '0');
      if (v > 0xffffffffULL) return false;
      ++i;
    }
    out = static_cast<std::uint32_t>(v);
    return i > start;
  };
  std::size_t i = 0;
  if (!number(i, major) || i >= s.size() || s[i] != '.') return false;
  ++i;
  return number(i, minor) && i == s.size();
}

// The Metadata-Version field: a MAJOR.MINOR that gpulock reads (a newer minor version is read
// with a warning), kept in `out`.
Status read_metadata_version(const RawValue& metadata_version, CoreMetadata& out) {
  std::string_view mv = trim(metadata_version.value, kValueSpace);
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  if (!parse_metadata_version(mv, major, minor)) {
    return metadata_error(
        fmt::format("invalid Metadata-Version {}: expected MAJOR.MINOR", quote_for_message(mv)),
        metadata_version.line, metadata_version.column0 + 1);
  }
  if (major == 0 || major > kNewestMajor) {
    return metadata_error(
        fmt::format("unsupported Metadata-Version {}: gpulock reads versions 1.0 to {}.{}", mv,
                    kNewestMajor, kNewestMinor),
        metadata_version.line, metadata_version.column0 + 1);
  }
  if ((major == kNewestMajor && minor > kNewestMinor) || (major == 1 && minor > 2)) {
    // The spec: consumers SHOULD warn on a newer minor version and read what they know.
    out.warnings.push_back(
        fmt::format("line {}: Metadata-Version {} is newer than the newest gpulock knows ({}.{}); "
                    "reading the fields it knows",
                    metadata_version.line, mv, kNewestMajor, kNewestMinor));
  }
  out.metadata_version = std::string(mv);
  return {};
}

// The Provides-Extra fields, normalized, each once, in `out`.
void read_provides_extra(const std::vector<RawValue>& provides_extra, CoreMetadata& out) {
  std::unordered_set<std::string> seen_extras;
  for (const auto& raw : provides_extra) {
    std::string_view extra = trim(raw.value, kValueSpace);
    // core-metadata: for Metadata-Version < 2.3 an invalid extra should be warned about and
    // ignored; from 2.3 extras must be normalized. We normalize whatever is valid and ignore
    // (with a warning) what is not, in every version: an unusable extra costs nothing.
    if (!is_valid_name(extra)) {
      out.warnings.push_back(fmt::format("line {}: ignoring the invalid Provides-Extra {}",
                                         raw.line, quote_for_message(extra)));
      continue;
    }
    std::string normalized = normalize_extra(extra);
    if (seen_extras.insert(normalized).second) out.provides_extra.push_back(std::move(normalized));
  }
}

}  // namespace

void scan_metadata_headers(std::string_view text,
                           const std::function<bool(const MetadataHeaderLine&)>& visit) {
  // A UTF-8 byte-order mark is not part of the first field name.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::size_t pos = 0;
  std::size_t line_no = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return;  // the blank line: the rest is the description

    MetadataHeaderLine h;
    h.line = line_no;
    h.value = line;
    std::size_t colon = line.find(':');
    if (is_space(line.front())) {
      h.kind = MetadataHeaderLine::Kind::Continuation;
    } else if (colon == std::string_view::npos || !is_field_name(line.substr(0, colon))) {
      // Python's email parser ends the headers at the first line that is not a header
      // (MissingHeaderBodySeparatorDefect) and reads the rest as the body; so do we.
      h.kind = MetadataHeaderLine::Kind::NotHeader;
      visit(h);
      return;
    } else {
      h.kind = MetadataHeaderLine::Kind::Field;
      h.name = line.substr(0, colon);
      std::size_t vstart = colon + 1;
      while (vstart < line.size() && is_space(line[vstart]))
        ++vstart;
      h.value = line.substr(vstart);
      h.column0 = vstart;
    }
    if (!visit(h)) return;
  }
}

Result<CoreMetadata> CoreMetadata::parse(std::string_view text) {
  CoreMetadata out;
  std::optional<RawValue> metadata_version, name, version, requires_python;
  std::vector<RawValue> requires_dist, provides_extra;
  // Requires-Dist fields past kMaxRequiresDist are counted, not kept: the file is refused.
  std::size_t requires_dist_count = 0;
  std::size_t first_over = 0;  // the line of the first one over

  RawValue* current = nullptr;  // the kept field that continuation lines extend, if any
  bool in_field = false;        // a field (kept or not) is open for continuation lines
  Status st;
  scan_metadata_headers(text, [&](const MetadataHeaderLine& h) {
    switch (h.kind) {
      case MetadataHeaderLine::Kind::Continuation:
        // RFC 822 folding: unfold by dropping the line break.
        if (current != nullptr) {
          current->value.append(h.value);
        } else if (!in_field) {
          out.warnings.push_back(
              fmt::format("line {}: continuation line without a field before it, ignored", h.line));
        }
        return true;
      case MetadataHeaderLine::Kind::NotHeader:
        out.warnings.push_back(fmt::format(
            "line {}: {} is not a 'Field: value' line; it and the rest of the file are read "
            "as the description",
            h.line, quote_for_message(h.value, 40)));
        return false;
      case MetadataHeaderLine::Kind::Field:
        break;
    }
    in_field = true;
    current = nullptr;

    const Field field = classify(h.name);
    auto raw = [&] { return RawValue{std::string(h.value), h.line, h.column0, h.value.size()}; };
    auto single = [&](std::optional<RawValue>& slot) -> Status {
      if (slot) {
        return metadata_error(fmt::format("the field {} appears twice (first on line {})",
                                          field_label(field), slot->line),
                              h.line, 1);
      }
      slot = raw();
      current = &*slot;
      return {};
    };
    switch (field) {
      case Field::Other:
        break;  // skipped without copying: Description can be megabytes
      case Field::MetadataVersion:
        st = single(metadata_version);
        break;
      case Field::Name:
        st = single(name);
        break;
      case Field::Version:
        st = single(version);
        break;
      case Field::RequiresPython:
        st = single(requires_python);
        break;
      case Field::RequiresDist:
        if (++requires_dist_count > kMaxRequiresDist) {
          if (first_over == 0) first_over = h.line;
          break;
        }
        requires_dist.push_back(raw());
        current = &requires_dist.back();
        break;
      case Field::ProvidesExtra:
        provides_extra.push_back(raw());
        current = &provides_extra.back();
        break;
    }
    return st.has_value();
  });
  if (!st) return std::unexpected(st.error());
  if (requires_dist_count > kMaxRequiresDist) {
    return metadata_error(fmt::format("{} Requires-Dist fields, over the limit of {} a "
                                      "distribution may have",
                                      requires_dist_count, kMaxRequiresDist),
                          first_over);
  }

  // Metadata-Version first: a file of an unknown major version may mean anything.
  if (!metadata_version) return metadata_error("missing the required field Metadata-Version", 1);
  if (auto st_mv = read_metadata_version(*metadata_version, out); !st_mv) {
    return std::unexpected(st_mv.error());
  }

  if (!name) return metadata_error("missing the required field Name", 1);
  {
    std::string_view n = trim(name->value, kValueSpace);
    if (auto valid = parse_name(n); !valid) return nested_error(Field::Name, *name, valid.error());
    out.name = std::string(n);
  }

  if (!version) return metadata_error("missing the required field Version", 1);
  {
    auto v = Version::parse(trim(version->value, kValueSpace));
    if (!v) return nested_error(Field::Version, *version, v.error());
    out.version = std::move(*v);
  }

  if (requires_python) {
    auto spec = SpecifierSet::parse(trim(requires_python->value, kValueSpace));
    if (!spec) return nested_error(Field::RequiresPython, *requires_python, spec.error());
    out.requires_python = std::move(*spec);
  }

  out.requires_dist.reserve(requires_dist.size());
  for (const auto& raw : requires_dist) {
    auto req = Requirement::parse(trim(raw.value, kValueSpace));
    if (!req) return nested_error(Field::RequiresDist, raw, req.error());
    out.requires_dist.push_back(std::move(*req));
  }

  read_provides_extra(provides_extra, out);
  return out;
}

}  // namespace gpulock::core
