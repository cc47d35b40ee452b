// The mirror's pages, generated from its manifest: a PEP 503 HTML and PEP 691 JSON (api 1.1,
// PEP 700 sizes and upload times, PEP 658/714 metadata) page per project, and root listings,
// for DIR/simple/ (every file) and for each torch-family tree (DIR/whl/<variant>/,
// DIR/whl/nightly/<variant>/: the files the locks took from that index). Links are relative.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "gpulock/app/mirror.h"
#include "gpulock/index/url.h"
#include "gpulock/sys/atomic_file.h"

#include "mirror_internal.h"

namespace gpulock::app {
namespace fs = std::filesystem;

namespace {

using mirror_detail::write_if_changed;

using Project = std::map<std::string, const MirrorEntry*>;  // sha256 -> entry
using Tree = std::map<std::string, Project>;                // project -> files

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// From DIR/<tree>/<project>/ back to DIR/.
std::string up_to_root(std::string_view tree) {
  std::string up = "../";
  for (char c : tree) {
    if (c == '/') up += "../";
  }
  return up + "../";
}

std::string file_href(std::string_view tree, const MirrorEntry& e) {
  return up_to_root(tree) + fmt::format("files/sha256/{}/{}/{}", e.sha256.substr(0, 2), e.sha256,
                                        index::percent_encode_path(e.filename));
}

std::string html_page(std::string_view tree, const std::string& name, const Project& files) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" "
      "content=\"1.1\">\n<title>Links for {0}</title>\n</head>\n<body>\n<h1>Links for {0}</h1>\n",
      html_escape(name));
  for (const auto& [sha, e] : files) {
    std::string attrs;
    if (!e->requires_python.empty())
      attrs += fmt::format(" data-requires-python=\"{}\"", html_escape(e->requires_python));
    if (!e->metadata_sha256.empty()) {
      attrs +=
          fmt::format(" data-dist-info-metadata=\"sha256={0}\" data-core-metadata=\"sha256={0}\"",
                      e->metadata_sha256);
    }
    if (!e->upload_time.empty()) attrs += fmt::format(" data-upload-time=\"{}\"", e->upload_time);
    out += fmt::format("<a href=\"{}#sha256={}\"{}>{}</a><br/>\n", html_escape(file_href(tree, *e)),
                       sha, attrs, html_escape(e->filename));
  }
  return out + "</body>\n</html>\n";
}

std::string json_page(std::string_view tree, const std::string& name, const Project& files) {
  std::set<std::string> versions;
  std::string list;
  for (const auto& [sha, e] : files) {
    versions.insert(e->version);
    if (!list.empty()) list += ",\n";
    list += fmt::format("  {{\"filename\": {}, \"url\": {}, \"hashes\": {{\"sha256\": \"{}\"}}",
                        json_string(e->filename), json_string(file_href(tree, *e)), sha);
    if (e->size > 0) list += fmt::format(", \"size\": {}", e->size);
    if (!e->upload_time.empty())
      list += fmt::format(", \"upload-time\": {}", json_string(e->upload_time));
    if (!e->requires_python.empty())
      list += fmt::format(", \"requires-python\": {}", json_string(e->requires_python));
    if (!e->metadata_sha256.empty()) {
      list += fmt::format(
          ", \"core-metadata\": {{\"sha256\": \"{0}\"}}, "
          "\"dist-info-metadata\": {{\"sha256\": \"{0}\"}}",
          e->metadata_sha256);
    }
    list += ", \"yanked\": false}";
  }
  std::string vs;
  for (const auto& v : versions)
    vs += (vs.empty() ? "" : ", ") + json_string(v);
  return fmt::format(
      "{{\"meta\": {{\"api-version\": \"1.1\"}}, \"name\": {}, \"versions\": [{}], \"files\": "
      "[\n{}\n]}}\n",
      json_string(name), vs, list);
}

// A tree's directory holds project directories (pages only) and, for the aggregate trees
// `whl` and `whl/nightly`, the variant trees, which have subdirectories.
bool has_subdirectories(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec)) return true;
  }
  return false;
}

core::Status write_tree(const fs::path& root, std::string_view tree, const Tree& projects) {
  std::string html =
      "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" content=\"1.1\">\n"
      "<title>Simple index</title>\n</head>\n<body>\n";
  std::string json;
  for (const auto& [name, files] : projects) {
    const fs::path dir = root / name;
    if (auto s = write_if_changed(dir / "index.html", html_page(tree, name, files)); !s) return s;
    if (auto s = write_if_changed(dir / "index.json", json_page(tree, name, files)); !s) return s;
    html += fmt::format("<a href=\"{0}/\">{0}</a><br/>\n", html_escape(name));
    json += fmt::format("{}{{\"name\": {}}}", json.empty() ? "" : ", ", json_string(name));
  }
  if (auto s = write_if_changed(root / "index.html", html + "</body>\n</html>\n"); !s) return s;
  if (auto s = write_if_changed(
          root / "index.json",
          "{\"meta\": {\"api-version\": \"1.1\"}, \"projects\": [" + json + "]}\n");
      !s) {
    return s;
  }
  // Projects no entry names any more.
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && projects.count(it->path().filename().string()) == 0 &&
        !has_subdirectories(it->path())) {
      fs::remove_all(it->path(), ec);
    }
  }
  return {};
}

// The torch-family trees on disk (whl/<c>, whl/nightly/<c>: directories of project directories).
std::vector<std::string> trees_on_disk(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir / "whl", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string c = it->path().filename().string();
    if (!has_subdirectories(it->path())) continue;  // a project of the aggregate tree
    if (c != "nightly") {
      out.push_back("whl/" + c);
      continue;
    }
    std::error_code ec2;
    for (fs::directory_iterator n(it->path(), ec2), e2; !ec2 && n != e2; n.increment(ec2)) {
      if (has_subdirectories(n->path()))
        out.push_back("whl/nightly/" + n->path().filename().string());
    }
  }
  return out;
}

}  // namespace

namespace mirror_detail {

// Written (atomically, with an fsync) only when its bytes change: a re-run rewrites nothing.
core::Status write_if_changed(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (fs::file_size(path, ec) == text.size() && !ec) {
    std::ifstream in(path, std::ios::binary);
    std::string old(text.size(), '\0');
    if (in.read(old.data(), static_cast<std::streamsize>(old.size())) && old == text) return {};
  }
  sys::AtomicWriteOptions o;
  o.create_directories = true;
  return sys::write_file_atomically(path, text, o);
}

}  // namespace mirror_detail

core::Status write_mirror_tree(const std::string& dir, const MirrorManifest& manifest) {
  std::map<std::string, Tree> trees;
  trees["simple"];
  for (const auto& e : manifest.entries) {
    trees["simple"][e.project].emplace(e.sha256, &e);
    if (e.tree != "simple") trees[e.tree][e.project].emplace(e.sha256, &e);
  }
  const fs::path root(dir);
  for (const auto& [tree, projects] : trees) {
    if (auto s = write_tree(root / tree, tree, projects); !s) return s;
  }
  std::error_code ec;
  for (const auto& tree : trees_on_disk(root)) {
    if (trees.count(tree) == 0) fs::remove_all(root / tree, ec);
  }
  // The aggregate trees no entry uses any more: their pages go, then the directory when empty.
  for (const char* agg : {"whl/nightly", "whl"}) {
    if (trees.count(agg) != 0) continue;
    const fs::path d = root / agg;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (!it->is_directory(ec2) || !has_subdirectories(it->path()))
        fs::remove_all(it->path(), ec2);
    }
    ec.clear();
    fs::remove(d, ec);
  }
  return {};
}

}  // namespace gpulock::app
