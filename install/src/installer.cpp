// The installers' one entry (install/installer.h): the kind parsed, a file source applied to a
// lock, the installer made.
#include "gpulock/install/installer.h"

#include <fmt/format.h>

#include "installers.h"

namespace gpulock::install {

core::Result<Kind> parse_kind(std::string_view text) {
  if (text == "native") return Kind::Native;
  if (text == "pip") return Kind::Pip;
  return core::fail(core::ErrorCode::Usage,
                    fmt::format("invalid --installer '{}': expected native or pip", text));
}

core::Status take_files_from(FileSource& source, lock::Lock& lk, std::vector<std::string>& taken) {
  auto redirect = [&](lock::FileEntry& f) -> core::Status {
    if (f.hashes.find("sha256") == f.hashes.end() || !f.url) return {};
    auto url = source.url_for(f);
    if (!url) return std::unexpected(url.error());
    if (!*url) return {};
    const std::string name = f.filename();
    f.url = std::move(**url);
    taken.push_back(name);
    return {};
  };
  for (auto& p : lk.packages) {
    if (p.wheels) {
      for (auto& w : *p.wheels) {
        if (auto s = redirect(w); !s) return s;
      }
    }
    if (p.sdist) {
      if (auto s = redirect(*p.sdist); !s) return s;
    }
    if (p.archive) {
      if (auto s = redirect(*p.archive); !s) return s;
    }
  }
  return {};
}

std::unique_ptr<Installer> make_installer(Kind kind, Options options) {
  if (kind == Kind::Pip) return make_pip_installer(std::move(options));
  return make_native_installer(std::move(options));
}

}  // namespace gpulock::install
