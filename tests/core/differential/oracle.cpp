// The gpulock side of the differential test against pypa/packaging 26.3 (differential.py).
// Reads one JSON question per line on stdin and writes one JSON answer per line on stdout:
//   {"k":"v","s":TEXT}                     version: parse, normalized form, properties
//   {"k":"c","a":V1,"b":V2}                compare two (valid) versions
//   {"k":"s","s":TEXT,"v":[V,...]}         specifier set: parse, str, contains (None/True/False)
//   {"k":"m","s":TEXT,"env":{...},"x":EXTRA}  marker: parse, str, evaluate
//   {"k":"r","s":TEXT}                     requirement: parse, str
// Every error must carry a column inside the text (1 .. length+1); "badcol" reports one that
// does not.
#include <simdjson.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

#include "gpulock/core/environment.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"

using namespace gpulock::core;

namespace {

void json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

void field(std::string& out, std::string_view key, std::string_view value) {
  if (out.size() > 1) out.push_back(',');
  json_string(out, key);
  out.push_back(':');
  json_string(out, value);
}

void field(std::string& out, std::string_view key, bool value) {
  if (out.size() > 1) out.push_back(',');
  json_string(out, key);
  out += value ? ":true" : ":false";
}

void check_column(std::string& out, const Error& e, std::string_view text) {
  if (e.column < 1 || e.column > text.size() + 1 || e.message.empty()) {
    field(out, "badcol", std::to_string(e.column) + " " + e.message);
  }
}

std::string_view str(simdjson::dom::element el, const char* key) {
  std::string_view s;
  if (el[key].get(s) != simdjson::SUCCESS) return {};
  return s;
}

std::string answer(simdjson::dom::element q) {
  std::string out = "{";
  std::string_view kind = str(q, "k");
  std::string_view text = str(q, "s");
  if (kind == "v") {
    auto v = Version::parse(text);
    field(out, "ok", v.has_value());
    if (v) {
      field(out, "n", v->to_string());
      field(out, "pre", v->is_prerelease());
      field(out, "post", v->is_postrelease());
      field(out, "dev", v->is_devrelease());
      field(out, "pub", v->public_version().to_string());
      field(out, "base", v->base_version().to_string());
      field(out, "loc", v->local_string());
      auto again = Version::parse(v->to_string());
      field(out, "rt", again.has_value() && *again == *v && again->hash() == v->hash());
    } else {
      check_column(out, v.error(), text);
    }
  } else if (kind == "c") {
    auto a = Version::parse(str(q, "a"));
    auto b = Version::parse(str(q, "b"));
    if (!a || !b) {
      field(out, "ok", false);
    } else {
      int c = *a < *b ? -1 : (*a == *b ? 0 : 1);
      bool consistent = ((*a <=> *b) == 0) == (*a == *b) && (*a > *b) == (c == 1);
      field(out, "c", std::to_string(c));
      field(out, "hash", !(*a == *b) || a->hash() == b->hash());
      field(out, "cons", consistent);
    }
  } else if (kind == "s") {
    auto s = SpecifierSet::parse(text);
    field(out, "ok", s.has_value());
    if (s) {
      field(out, "n", s->to_string());
      field(out, "np", s->names_prerelease());
      std::string r = "[";
      simdjson::dom::array vs;
      if (q["v"].get(vs) == simdjson::SUCCESS) {
        for (auto el : vs) {
          std::string_view vt;
          if (el.get(vt) != simdjson::SUCCESS) continue;
          // As text, so that `===` compares the text as written (packaging with a str).
          std::string flags;
          flags.push_back(s->contains_text(vt) ? 't' : 'f');
          flags.push_back(s->contains_text(vt, true) ? 't' : 'f');
          flags.push_back(s->contains_text(vt, false) ? 't' : 'f');
          if (r.size() > 1) r.push_back(',');
          json_string(r, flags);
        }
      }
      r.push_back(']');
      out += ",\"r\":" + r;
    } else {
      check_column(out, s.error(), text);
    }
  } else if (kind == "m") {
    auto m = Marker::parse(text);
    field(out, "ok", m.has_value());
    if (m) {
      field(out, "n", m->to_string());
      Environment env;
      simdjson::dom::object obj;
      if (q["env"].get(obj) == simdjson::SUCCESS) {
        for (auto [key, value] : obj) {
          std::string_view val;
          if (value.get(val) != simdjson::SUCCESS) continue;
          std::string* slot = nullptr;
          if (key == "implementation_name") slot = &env.implementation_name;
          if (key == "implementation_version") slot = &env.implementation_version;
          if (key == "os_name") slot = &env.os_name;
          if (key == "platform_machine") slot = &env.platform_machine;
          if (key == "platform_python_implementation") slot = &env.platform_python_implementation;
          if (key == "platform_release") slot = &env.platform_release;
          if (key == "platform_system") slot = &env.platform_system;
          if (key == "platform_version") slot = &env.platform_version;
          if (key == "python_full_version") slot = &env.python_full_version;
          if (key == "python_version") slot = &env.python_version;
          if (key == "sys_platform") slot = &env.sys_platform;
          if (slot) *slot = std::string(val);
        }
      }
      auto r = m->evaluate(env, str(q, "x"));
      field(out, "r",
            r ? (*r ? std::string_view("t") : std::string_view("f")) : std::string_view("e"));
      // The text must parse back to the same marker.
      auto again = Marker::parse(m->to_string());
      field(out, "rt", again.has_value());
    } else {
      check_column(out, m.error(), text);
    }
  } else if (kind == "r") {
    auto r = Requirement::parse(text);
    field(out, "ok", r.has_value());
    if (r) {
      field(out, "n", r->to_string());
    } else {
      check_column(out, r.error(), text);
    }
  } else {
    field(out, "error", std::string("unknown question kind ") + std::string(kind));
  }
  out.push_back('}');
  return out;
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  simdjson::dom::parser parser;
  std::string line;
  std::string out;
  while (std::getline(std::cin, line)) {
    simdjson::dom::element q;
    if (parser.parse(line).get(q) != simdjson::SUCCESS) {
      out += "{\"error\":\"bad json\"}\n";
      continue;
    }
    out += answer(q);
    out.push_back('\n');
    if (out.size() > (1u << 20)) {
      std::cout << out;
      out.clear();
    }
  }
  std::cout << out;
  return 0;
}
