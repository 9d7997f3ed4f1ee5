# ATTNSPEC_FUZZ=ON: libFuzzer targets fuzz_<target> from tests/fuzz/*.cpp (clang only).
# Every attnspec target is then compiled with -fsanitize=fuzzer-no-link (coverage for libFuzzer)
# plus the sanitizers of ATTNSPEC_SANITIZERS (address,undefined when empty); the fuzz executables
# link -fsanitize=fuzzer (libFuzzer's main). scripts/fuzz.sh configures build-fuzz and runs them.
option(ATTNSPEC_FUZZ "Build the libFuzzer targets in tests/fuzz (requires clang)" OFF)
if(ATTNSPEC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ATTNSPEC_FUZZ=ON needs clang (libFuzzer), e.g. "
                        "-DCMAKE_CXX_COMPILER=/usr/bin/clang++ -DCMAKE_C_COMPILER=/usr/bin/clang; "
                        "got ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(NOT ATTNSPEC_SANITIZERS)
    set(ATTNSPEC_SANITIZERS "address,undefined" CACHE STRING "" FORCE)
  endif()
  # A plain variable shadows the cache entry: attnspec_target_options() sees the longer list.
  set(ATTNSPEC_SANITIZERS "${ATTNSPEC_SANITIZERS},fuzzer-no-link")
endif()
