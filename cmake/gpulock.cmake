# Helpers shared by every module's CMakeLists.txt.

# Warnings for gpulock's own code. Third-party headers come from imported targets and are
# therefore SYSTEM includes, so these flags apply to our sources only.
function(gpulock_add_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow
    -Wnon-virtual-dtor -Woverloaded-virtual -Wcast-qual -Wformat=2 -Wimplicit-fallthrough)
  if(GPULOCK_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# gpulock_add_module(NAME SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Creates the static library gpulock_<NAME> with the alias gpulock::<NAME>. Its public include
# root is <module>/include (headers under gpulock/<NAME>/); a module can include only the headers
# of the modules it links, which is how the layering rule is enforced by the build.
function(gpulock_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(gpulock_${name} STATIC ${ARG_SOURCES})
  add_library(gpulock::${name} ALIAS gpulock_${name})
  target_include_directories(gpulock_${name}
    PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}/include"
    PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/src")
  target_link_libraries(gpulock_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  target_compile_features(gpulock_${name} PUBLIC cxx_std_23)
  gpulock_add_warnings(gpulock_${name})
  gpulock_unity(gpulock_${name})
endfunction()

# GPULOCK_UNITY_BUILD: a module's sources compiled in batches of 16 (CMake's unity build), which
# parses each header once per batch: the presets turn it on (a clean build, as CI's, takes about
# half the time); a developer's incremental build may turn it off (-DGPULOCK_UNITY_BUILD=OFF),
# where one edit then recompiles one file, not its batch. Only the production modules and the
# CLI: every helper in an anonymous namespace there has a name of its own.
function(gpulock_unity target)
  if(GPULOCK_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
  endif()
endfunction()

# gpulock_add_catch_test(NAME SOURCES ... DEPS ... [LABELS ...] [TEST_SPEC SPEC])
# One Catch2 binary registered test-by-test with catch_discover_tests. `--warn NoTests` makes a
# test name that fails to match (e.g. one with a ';') fail instead of passing silently.
# TEST_SPEC limits the tests registered (`~[pip26]`: all but those tagged pip26, which the
# module then registers itself, e.g. only when the reference directory is there).
function(gpulock_add_catch_test name)
  cmake_parse_arguments(ARG "" "TEST_SPEC" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE gpulock_catch_main ${ARG_DEPS})
  target_compile_options(${name} PRIVATE -Wall -Wextra)
  if(GPULOCK_WARNINGS_AS_ERRORS)
    target_compile_options(${name} PRIVATE -Werror)
  endif()
  # catch_discover_tests passes PROPERTIES through a generated script that splits lists, so a
  # list of labels would keep only its first: join them into one label ("core,asan"); ctest -L
  # and the presets' label filters are regular expressions, so each name still selects.
  string(REPLACE ";" "," labels "${ARG_LABELS}")
  catch_discover_tests(${name}
    TEST_SPEC ${ARG_TEST_SPEC}
    EXTRA_ARGS --warn NoTests
    PROPERTIES LABELS "${labels}"
    DISCOVERY_TIMEOUT 60)
endfunction()
