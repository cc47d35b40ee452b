#include "exit_codes.h"

#include "terminal.h"

namespace gpulock::cli {

int exit_code_for(core::ErrorCode code) noexcept {
  using core::ErrorCode;
  switch (code) {
    case ErrorCode::InvalidVersion:
    case ErrorCode::InvalidSpecifier:
    case ErrorCode::InvalidMarker:
    case ErrorCode::InvalidRequirement:
    case ErrorCode::InvalidName:
    case ErrorCode::InvalidFilename:
    case ErrorCode::InvalidTag:
    case ErrorCode::InvalidMetadata:
    case ErrorCode::InvalidInput:
    case ErrorCode::InvalidLockfile:
      return kExitInvalidInput;
    case ErrorCode::Usage:
      return kExitUsage;
    case ErrorCode::Network:
    case ErrorCode::Http:
    case ErrorCode::Auth:
    case ErrorCode::Timeout:
    case ErrorCode::HashMismatch:
    case ErrorCode::IndexFormat:
    case ErrorCode::NotFound:
    case ErrorCode::Offline:
      return kExitNetwork;
    case ErrorCode::Io:
      return kExitIo;
    case ErrorCode::Cancelled:
      return kExitInterrupted;
    case ErrorCode::Internal:
      return kExitInternal;
  }
  return kExitInternal;
}

int report_error(Terminal& term, const core::Error& error) {
  term.error(error);
  return exit_code_for(error.code);
}

}  // namespace gpulock::cli
