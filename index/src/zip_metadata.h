#pragma once
// METADATA out of an open libzip archive: shared by local wheels and remote range reads.

#include <zip.h>

#include <string>
#include <string_view>

#include "gpulock/core/error.h"
#include "gpulock/core/filename.h"

namespace gpulock::index::detail {

/// Finds `*.dist-info/METADATA` (the one matching the wheel's name when there are several),
/// refuses over 10 MB and zip bombs, and reads it. `display` names the wheel in errors.
core::Result<std::string> metadata_from_archive(zip_t* archive, const core::WheelFilename* expected,
                                                std::string_view display);

/// A readable message for a libzip error code.
std::string zip_error_text(int code);

}  // namespace gpulock::index::detail
