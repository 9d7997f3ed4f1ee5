# attnspec_target_options(<target>): the warning and sanitizer flags of every attnspec target
# (library, gpu, proofs, cli, tests, bench), written once here.
#   C++:  -Wall -Wextra -Wpedantic            (+ -Werror with ATTNSPEC_WERROR)
#   CUDA: -Xcompiler=-Wall,-Wextra, nvcc's -Wreorder -Wext-lambda-captures-this
#         -Wdefault-stream-launch (a twin launches on its Context's stream, never the legacy default
#         stream)
#         (+ with ATTNSPEC_WERROR: -Xcompiler=-Werror for the host code nvcc generates,
#         --Werror all-warnings for nvcc's own diagnostics, cross-execution-space calls included,
#         and -Xptxas=-Werror for the device assembler)
#   ATTNSPEC_SANITIZERS=address,undefined: -fsanitize=<list> -fno-omit-frame-pointer
#         -fno-sanitize-recover=all on compile and link (C++ only; nvcc sources are untouched).
# Third-party headers (Eigen, Spectra, HDF5, Boost, Catch2) come in through imported targets,
# whose include directories are SYSTEM, so their warnings do not count.
option(ATTNSPEC_WERROR "Treat compiler warnings as errors (C++ and CUDA)" OFF)
set(ATTNSPEC_SANITIZERS "" CACHE STRING
    "Comma-separated -fsanitize list for every C++ target, e.g. address,undefined (empty: none)")

function(attnspec_target_options target)
  set(cxx -Wall -Wextra -Wpedantic)
  set(cuda -Xcompiler=-Wall,-Wextra -Wreorder -Wext-lambda-captures-this -Wdefault-stream-launch)
  if(ATTNSPEC_WERROR)
    list(APPEND cxx -Werror)
    list(APPEND cuda -Xcompiler=-Werror "SHELL:--Werror all-warnings" -Xptxas=-Werror)
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${cxx}>
                                           $<$<COMPILE_LANGUAGE:CUDA>:${cuda}>)
  if(ATTNSPEC_SANITIZERS)
    set(san -fsanitize=${ATTNSPEC_SANITIZERS} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${san}>)
    # GCC 12 + -fsanitize=address: false -Wmaybe-uninitialized in libstdc++'s <regex>
    # (std::function moved inside _NFA, reached through Catch2's test_main.cpp).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
    endif()
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE" OR type STREQUAL "SHARED_LIBRARY"
       OR type STREQUAL "MODULE_LIBRARY")
      target_link_options(${target} PRIVATE ${san})
    endif()
  endif()
endfunction()
