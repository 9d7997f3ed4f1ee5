// attnspec._core: the extension module of the Python package (python/attnspec/ is its public
// face; docs/python.md). Built with -DATTNSPEC_PYTHON=ON (python/CMakeLists.txt).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdlib>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/interrupt.hpp"
#include "attnspec/version.hpp"
#include "bindings.hpp"

NB_MODULE(_core, m) {
    m.doc() =
        "attnspec._core: bindings of the attnspec C++ library. Use the package attnspec, which "
        "checks and converts arguments before calling these functions.";
    m.attr("__version__") = ATTNSPEC_VERSION;
    m.def(
        "blas_info",
        [] {
            const attnspec::BlasInfo b = attnspec::blas_info();
            nanobind::dict d;
            d["library"] = b.library, d["core"] = b.core, d["reason"] = b.reason;
            d["cpu"] = b.cpu, d["threads"] = b.threads, d["detected"] = b.detected;
            d["best"] = b.best;
            return d;
        },
        "The BLAS that runs (attnspec info): library, core, why, CPU, threads, the core "
        "OpenBLAS detected and the best one this build has for the CPU.");
    m.def(
        "requested_blas_core",
        [] { return attnspec::requested_blas_core(std::getenv("ATTNSPEC_BLAS_CORE")); },
        "The core ATTNSPEC_BLAS_CORE asks for (attnspec/base/blas_runtime.hpp): '' for off, the "
        "best core of this build for auto, else the forced core; UsageError for a value the CLI "
        "refuses with exit 64.");
    m.def("set_blas_core_reason", &attnspec::set_blas_core_reason,
          "Records why the running core was chosen (blas_info()['reason']).");
    m.def("request_interrupt", &attnspec::request_interrupt,
          "Asks running library calls to stop at their next check point (base/interrupt.hpp).");
    m.def("clear_interrupt", &attnspec::clear_interrupt, "Clears the interrupt request.");
    m.def("interrupt_requested", &attnspec::interrupt_requested,
          "Whether an interrupt is requested.");
    attnspec::python::bind_errors(m);
    attnspec::python::bind_head(m);
    attnspec::python::bind_spectrum(m);
    attnspec::python::bind_datasets(m);
    attnspec::python::bind_checks(m);
    attnspec::python::bind_infsa(m);
    attnspec::python::bind_reports(m);
    attnspec::python::bind_kernels(m);
}
