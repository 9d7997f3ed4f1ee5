// attnspec._core: the extension module of the Python package (python/attnspec/ is its public
// face; docs/python.md). Built with -DATTNSPEC_PYTHON=ON (python/CMakeLists.txt).
#include <nanobind/nanobind.h>

#include "attnspec/version.hpp"
#include "bindings.hpp"

NB_MODULE(_core, m) {
    m.doc() =
        "attnspec._core: bindings of the attnspec C++ library. Use the package attnspec, which "
        "checks and converts arguments before calling these functions.";
    m.attr("__version__") = ATTNSPEC_VERSION;
    attnspec::python::bind_errors(m);
    attnspec::python::bind_head(m);
    attnspec::python::bind_spectrum(m);
    attnspec::python::bind_datasets(m);
    attnspec::python::bind_checks(m);
    attnspec::python::bind_infsa(m);
    attnspec::python::bind_reports(m);
    attnspec::python::bind_kernels(m);
}
