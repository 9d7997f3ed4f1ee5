# Dependencies without a CMake package of their own (Debian 12: libspectra-dev ships headers
# only, liblapacke-dev has no config file), found the same way in the build tree and by an
# installed attnspecConfig.cmake. Defines the IMPORTED INTERFACE targets
#   attnspec::spectra  - Spectra headers (as SYSTEM, so their warnings do not count)
#   attnspec::lapacke  - LAPACKE header + library, then LAPACK::LAPACK and OpenBLAS when present
# Callers must have run find_package(LAPACK) first.
if(NOT TARGET attnspec::spectra)
  find_path(SPECTRA_INCLUDE_DIR Spectra/SymEigsSolver.h REQUIRED)
  add_library(attnspec::spectra INTERFACE IMPORTED)
  set_target_properties(attnspec::spectra PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${SPECTRA_INCLUDE_DIR}")
endif()
if(NOT TARGET attnspec::lapacke)
  find_path(LAPACKE_INCLUDE_DIR lapacke.h REQUIRED)
  find_library(LAPACKE_LIBRARY NAMES lapacke REQUIRED)
  find_library(OPENBLAS_LIBRARY NAMES openblas)
  set(_attnspec_lapacke_libs "${LAPACKE_LIBRARY}" LAPACK::LAPACK)
  if(OPENBLAS_LIBRARY)
    list(APPEND _attnspec_lapacke_libs "${OPENBLAS_LIBRARY}")
  endif()
  add_library(attnspec::lapacke INTERFACE IMPORTED)
  set_target_properties(attnspec::lapacke PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${LAPACKE_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${_attnspec_lapacke_libs}")
  unset(_attnspec_lapacke_libs)
endif()
