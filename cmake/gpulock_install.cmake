# What `cmake --install BUILD --prefix P` and the .deb (scripts/package, CPack) hold (issue 42
# item 3): P/bin/gpulock, its network plugin at P/lib/gpulock/libgpulock-net.so (found relative
# to /proc/self/exe, index/src/net_plugin.cpp), a man page per command and shell completions,
# all generated at build time by the built gpulock from its own CLI definitions
# (cli/cmd_completion.cpp), so a flag added is a flag documented and completed.
set(GPULOCK_GENERATED_SHARE "${PROJECT_BINARY_DIR}/share")
set(GPULOCK_GENERATED_STAMP "${GPULOCK_GENERATED_SHARE}/generated.stamp")
add_custom_command(
  OUTPUT "${GPULOCK_GENERATED_STAMP}"
  COMMAND "${CMAKE_COMMAND}" -E rm -rf "${GPULOCK_GENERATED_SHARE}/man"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${GPULOCK_GENERATED_SHARE}/man/man1"
          "${GPULOCK_GENERATED_SHARE}/completions"
  COMMAND "$<TARGET_FILE:gpulock>" completion --man-dir "${GPULOCK_GENERATED_SHARE}/man/man1"
  COMMAND sh -c "\"$0\" completion bash > \"$1/gpulock\" && \"$0\" completion zsh > \"$1/_gpulock\" && \"$0\" completion fish > \"$1/gpulock.fish\""
          "$<TARGET_FILE:gpulock>" "${GPULOCK_GENERATED_SHARE}/completions"
  COMMAND "${CMAKE_COMMAND}" -E touch "${GPULOCK_GENERATED_STAMP}"
  DEPENDS gpulock
  COMMENT "Generating man pages and shell completions from gpulock's CLI"
  VERBATIM)
add_custom_target(gpulock_generated_docs ALL DEPENDS "${GPULOCK_GENERATED_STAMP}")

install(TARGETS gpulock RUNTIME DESTINATION bin)
install(TARGETS gpulock_net LIBRARY DESTINATION lib/gpulock)
install(DIRECTORY "${GPULOCK_GENERATED_SHARE}/man/man1" DESTINATION share/man)
install(FILES "${GPULOCK_GENERATED_SHARE}/completions/gpulock"
        DESTINATION share/bash-completion/completions)
install(FILES "${GPULOCK_GENERATED_SHARE}/completions/_gpulock"
        DESTINATION share/zsh/vendor-completions)
install(FILES "${GPULOCK_GENERATED_SHARE}/completions/gpulock.fish"
        DESTINATION share/fish/vendor_completions.d)
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION share/doc/gpulock)
# README.md links into docs/: installed beside it, so its relative links still resolve.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs" DESTINATION share/doc/gpulock)

# The .deb: its Depends computed from the ELF files by dpkg-shlibdeps (dpkg-dev), so every
# Debian library gpulock and its plugin load is declared.
set(CPACK_PACKAGE_NAME gpulock)
set(CPACK_PACKAGE_VENDOR "gpulock")
set(CPACK_PACKAGE_CONTACT "gpulock developers <gpulock@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_STRIP_FILES ON)
include(CPack)
