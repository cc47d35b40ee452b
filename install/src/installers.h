#pragma once
// The installers behind install/installer.h, made by make_installer.
#include <memory>

#include "gpulock/install/installer.h"

namespace gpulock::install {

/// NativeInstaller (native_installer.cpp): gpulock's own exact sync.
[[nodiscard]] std::unique_ptr<Installer> make_native_installer(Options options);

/// PipInstaller (pip_installer.cpp): `pip install --no-deps --require-hashes -r`.
[[nodiscard]] std::unique_ptr<Installer> make_pip_installer(Options options);

}  // namespace gpulock::install
