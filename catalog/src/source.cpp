// The one pair that writes a source's role to the lock and reads it back (source.h).

#include "gpulock/catalog/source.h"

namespace gpulock::catalog {

std::string_view recorded_role(const Source& source) noexcept {
  if (source.is<Direct>()) return "direct";
  if (source.is<FindLinks>()) return "find-links";
  switch (source.role) {
    case Role::Pinned:
      return "pinned";
    case Role::Family:
      return "torch";
    case Role::Default:
      return "default";
    case Role::Extra:
      break;
  }
  return "extra";
}

std::optional<Source> read_recorded_role(std::string_view role) {
  if (role == "pinned") return Source{Simple{}, Role::Pinned};
  if (role == "torch") return Source{Variant{}, Role::Family};
  if (role == "default") return Source{Simple{}, Role::Default};
  if (role == "extra") return Source{Simple{}, Role::Extra};
  if (role == "find-links") return Source{FindLinks{}, Role::Extra};
  if (role == "direct") return Source{Direct{}, Role::Pinned};
  return std::nullopt;
}

}  // namespace gpulock::catalog
