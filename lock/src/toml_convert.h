#pragma once
// toml++ nodes to gpulock's generic TOML values (toml_value.h). Private to lock/.

#include <string>

#include <toml++/toml.h>

#include "gpulock/lock/toml_value.h"

namespace gpulock::lock {

inline TomlDate convert(const toml::date& d) {
  return TomlDate{static_cast<std::int32_t>(d.year), d.month, d.day};
}
inline TomlTime convert(const toml::time& t) {
  return TomlTime{t.hour, t.minute, t.second, t.nanosecond};
}
inline TomlDatetime convert(const toml::date_time& dt) {
  TomlDatetime out;
  out.date = convert(dt.date);
  out.time = convert(dt.time);
  if (dt.offset) out.offset_minutes = dt.offset->minutes;
  return out;
}

/// Any TOML node as a generic value (toml++ bounds nesting depth, so recursion is bounded).
inline TomlValue to_value(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return TomlValue(std::string(n.as_string()->get()));
    case toml::node_type::integer:
      return TomlValue(n.as_integer()->get());
    case toml::node_type::floating_point:
      return TomlValue(n.as_floating_point()->get());
    case toml::node_type::boolean:
      return TomlValue(n.as_boolean()->get());
    case toml::node_type::date:
      return TomlValue(convert(n.as_date()->get()));
    case toml::node_type::time:
      return TomlValue(convert(n.as_time()->get()));
    case toml::node_type::date_time:
      return TomlValue(convert(n.as_date_time()->get()));
    case toml::node_type::array: {
      TomlArray out;
      for (const auto& e : *n.as_array())
        out.push_back(to_value(e));
      return TomlValue(std::move(out));
    }
    case toml::node_type::table: {
      TomlTable out;
      for (const auto& [k, v] : *n.as_table())
        out.emplace(std::string(k.str()), to_value(v));
      return TomlValue(std::move(out));
    }
    default:
      return TomlValue();
  }
}

}  // namespace gpulock::lock
