// IndexClient's index roots: which projects a source serves, from the root listing of an http(s)
// index (PEP 503/691) or the directories of a file:// one; null when there is none to read.
#include <dirent.h>

#include <algorithm>
#include <mutex>
#include <string>

#include <fmt/format.h>
#include <sys/stat.h>

#include "gpulock/core/name.h"
#include "gpulock/index/parse.h"
#include "gpulock/index/url.h"

#include "client_impl.h"

namespace gpulock::index {

using core::ErrorCode;
using detail::HttpRequest;
using detail::HttpResponse;
using detail::kMutableMetadataMaxAge;
using detail::now_seconds;
using detail::strip_userinfo;
using detail::TransportError;

namespace {

// An index root read for its names (the torch source's: tens of KiB) is bounded far below a
// project page.
constexpr std::uint64_t kMaxProjectListBytes = 16ull << 20;

// `file://`: the directories of the index root. nullptr when it is not a directory.
ProjectListPtr local_project_list(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return nullptr;
  auto list = std::make_shared<ProjectList>();
  std::string base = path.empty() || path.back() == '/' ? path : path + "/";
  while (const dirent* ent = ::readdir(dir)) {
    std::string_view n = ent->d_name;
    if (n == "." || n == ".." || !core::is_valid_name(n)) continue;
    struct stat st {};
    if (::stat((base + std::string(n)).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      list->names.insert(core::normalize_name(n));
  }
  ::closedir(dir);
  return list;
}

std::string join_names(const ProjectList& list) {
  std::string text;
  for (const auto& n : list.names) {
    text += n;
    text += '\n';
  }
  return text;
}

ProjectListPtr split_names(std::string_view text) {
  auto list = std::make_shared<ProjectList>();
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view n = text.substr(0, nl);
    if (!n.empty()) list->names.emplace(n);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return list;
}

}  // namespace

// ---- IndexClient::Impl: index roots --------------------------------------------------------

// The root listing of `source`, or nullptr when it has none that can be read (404, not an
// index root, a network failure): the caller then asks per name. Kept in the cache like a
// mutable page (kMutableMetadataMaxAge); --offline uses any cached copy. Only Cancelled is
// an error.
core::Result<ProjectListPtr> IndexClient::Impl::load_project_list(const IndexSource& source) {
  if (source.kind == SourceKind::FindLinks) return ProjectListPtr();
  const std::string url = source.url;
  if (is_file_url(url)) {
    auto path = file_url_to_path(url);
    if (!path) return ProjectListPtr();
    return local_project_list(*path);
  }
  if (!is_http_url(url)) return ProjectListPtr();
  remember_credentials(url);
  const std::string shown = redact_url(url);
  const std::string key = "project-list " + strip_userinfo(url);
  if (auto hit = cache.load_metadata(key)) {
    if (options.offline ||
        (!options.refresh && now_seconds() - hit->stored_at < kMutableMetadataMaxAge)) {
      ++counters.page_hits;
      emit(ClientEvent::Type::CacheHit, RequestKind::Page, shown);
      return split_names(hit->text);
    }
  }
  if (options.offline) return ProjectListPtr();
  HttpRequest req;
  req.url = url;
  req.headers.push_back(fmt::format("Accept: {}", kSimpleAccept));
  req.max_body = std::min<std::uint64_t>(options.max_page_bytes, kMaxProjectListBytes);
  auto response = request(std::move(req), RequestKind::Page);
  if (!response) {
    if (response.error().code == ErrorCode::Cancelled) return std::unexpected(response.error());
    return ProjectListPtr();
  }
  const HttpResponse& r = *response;
  if (r.status < 200 || r.status >= 300 || r.error != TransportError::None) return ProjectListPtr();
  PageFormat format = page_format_for_content_type(r.content_type);
  if (format == PageFormat::Unknown) {
    auto first = r.body.find_first_not_of(" \t\r\n");
    format =
        (first != std::string::npos && r.body[first] == '{') ? PageFormat::Json : PageFormat::Html;
  }
  auto parsed = parse_project_list(r.body, format == PageFormat::Json, shown);
  if (!parsed || parsed->names.empty()) return ProjectListPtr();
  detail::MetadataEntry e;
  e.url = shown;
  e.stored_at = now_seconds();
  e.text = join_names(*parsed);
  cache.store_metadata(key, e);
  return std::make_shared<const ProjectList>(std::move(*parsed));
}

std::shared_ptr<detail::Op<ProjectListPtr>> IndexClient::Impl::project_list_op(
    const IndexSource& source, bool& created) {
  std::lock_guard<std::mutex> lock(memo_mu);
  auto& slot = project_lists[source.url];
  created = !slot;
  if (!slot) {
    IndexSource copy = source;
    slot = std::make_shared<detail::Op<ProjectListPtr>>(
        [this, copy] { return load_project_list(copy); });
  }
  return slot;
}

}  // namespace gpulock::index
