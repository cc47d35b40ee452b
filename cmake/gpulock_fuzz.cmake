# The fuzz preset (GPULOCK_FUZZ, clang): every module is compiled with libFuzzer's coverage
# instrumentation plus AddressSanitizer and UndefinedBehaviorSanitizer, so the harnesses in
# fuzz/ see coverage inside the parsers they call. See fuzz/README.md.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "GPULOCK_FUZZ needs clang (libFuzzer); use the fuzz preset (clang++-14)")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                    -fno-sanitize-recover=undefined)
add_link_options(-fsanitize=address,undefined)
# libstdc++ 12 hides std::expected from clang < 16 (see fuzz/compat/expected).
if(CMAKE_CXX_COMPILER_VERSION VERSION_LESS 16)
  include_directories(BEFORE SYSTEM "${PROJECT_SOURCE_DIR}/fuzz/compat")
endif()
