// The gpulock side of the differential test against pypa/packaging 26.3 (differential.py).
// Reads one JSON question per line on stdin and writes one JSON answer per line on stdout:
//   {"k":"v","s":TEXT}                     version: parse, normalized form, properties
//   {"k":"c","a":V1,"b":V2}                compare two (valid) versions
//   {"k":"s","s":TEXT,"v":[V,...]}         specifier set: parse, str, contains (None/True/False)
//   {"k":"m","s":TEXT,"env":{...},"x":EXTRA}  marker: parse, str, evaluate
//   {"k":"r","s":TEXT}                     requirement: parse, str
//   {"k":"w","s":FILENAME}                 wheel filename: name, version, build tag, tags
//   {"k":"sd","s":FILENAME}                sdist filename: name, version
//   {"k":"n","s":NAME,"val":BOOL}          canonicalize_name (val: validate first)
//   {"k":"cv","s":TEXT,"strip":BOOL}       canonicalize_version (strip: trailing zeros)
//   {"k":"t","s":TEXT}                     parse_tag: the expanded tag set
//   {"k":"tag","i":I,"a":A,"p":P}          Tag(I, A, P): the one tag of the text I-A-P
// Every error must carry a column inside the text (1 .. length+1); "badcol" reports one that
// does not.
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/environment.h"
#include "gpulock/core/filename.h"
#include "gpulock/core/marker.h"
#include "gpulock/core/name.h"
#include "gpulock/core/requirement.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/tags.h"
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

bool flag(simdjson::dom::element el, const char* key) {
  bool b = false;
  if (el[key].get(b) != simdjson::SUCCESS) return false;
  return b;
}

// Tags sorted and joined by ",", as packaging's frozenset is compared.
std::string joined_tags(const std::vector<Tag>& tags) {
  std::vector<std::string> texts;
  for (const auto& t : tags)
    texts.push_back(t.to_string());
  std::sort(texts.begin(), texts.end());
  std::string out;
  for (const auto& t : texts)
    out += (out.empty() ? "" : ",") + t;
  return out;
}

// packaging's canonicalize_version: text that is not a version unchanged; else the normalized
// form, without the release's trailing zeros when `strip` (at least one component stays).
std::string canonical_version(std::string_view text, bool strip) {
  auto v = Version::parse(text);
  if (!v) return std::string(text);
  std::string full = v->to_string();
  if (!strip) return full;
  auto release = v->release();
  std::size_t keep = release.size();
  while (keep > 1 && release[keep - 1] == 0)
    --keep;
  std::string base = v->epoch() != 0 ? std::to_string(v->epoch()) + "!" : std::string();
  for (std::size_t i = 0; i < keep; ++i)
    base += (i == 0 ? "" : ".") + std::to_string(release[i]);
  return base + full.substr(v->base_version().to_string().size());
}

// The questions about utils and tags (filenames, names, canonical versions, tags); false when
// `kind` is none of them.
bool answer_utils(std::string& out, std::string_view kind, simdjson::dom::element q) {
  std::string_view text = str(q, "s");
  if (kind == "w") {
    auto w = WheelFilename::parse(text);
    field(out, "ok", w.has_value());
    if (w) {
      field(out, "n", w->name);
      field(out, "ver", w->version.to_string());
      field(out, "b", w->build ? std::to_string(w->build->first) + "," + w->build->second : "");
      field(out, "t", joined_tags(w->tags));
    } else {
      check_column(out, w.error(), text);
    }
  } else if (kind == "sd") {
    auto sd = SdistFilename::parse(text);
    field(out, "ok", sd.has_value());
    if (sd) {
      field(out, "n", sd->name);
      field(out, "ver", sd->version.to_string());
    } else {
      check_column(out, sd.error(), text);
    }
  } else if (kind == "n") {
    if (flag(q, "val")) {
      auto n = parse_name(text);
      field(out, "ok", n.has_value());
      if (n) field(out, "n", *n);
    } else {
      field(out, "ok", true);
      field(out, "n", normalize_name(text));
    }
  } else if (kind == "cv") {
    field(out, "n", canonical_version(text, flag(q, "strip")));
  } else if (kind == "t" || kind == "tag") {
    std::string joined = kind == "t" ? std::string(text)
                                     : std::string(str(q, "i")) + "-" + std::string(str(q, "a")) +
                                           "-" + std::string(str(q, "p"));
    auto tags = parse_tag_set(joined);
    field(out, "ok", tags.has_value());
    if (tags) field(out, "t", joined_tags(*tags));
  } else {
    return false;
  }
  return true;
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
  } else if (!answer_utils(out, kind, q)) {
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
