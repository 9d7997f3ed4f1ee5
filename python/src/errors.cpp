// attnspec::Error -> the Python exception of its exit code (attnspec._errors.from_library), with
// the message, `code` (the CLI's exit code) and `parameter` (the library's parameter name). Also
// the process memory budget every refusal before allocating compares with (base/memory.hpp).
#include "attnspec/base/errors.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <exception>

#include "attnspec/base/memory.hpp"
#include "bindings.hpp"

namespace nb = nanobind;

namespace attnspec::python {
namespace {

void translate(const std::exception_ptr& p, void*) {
    try {
        std::rethrow_exception(p);
    } catch (const Error& e) {
        // Runs with the GIL held; the Python side builds the instance (its classes derive from
        // builtins such as ValueError, which nb::exception cannot express).
        nb::object make = nb::module_::import_("attnspec._errors").attr("from_library");
        nb::object exc = make(static_cast<int>(e.code()), e.what(), e.parameter());
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
}

}  // namespace

void bind_errors(nb::module_& m) {
    nb::register_exception_translator(translate);
    m.def("memory_limit_bytes", &memory_limit_bytes,
          "The process memory budget in bytes (default: half the physical memory): computations "
          "refuse work whose estimate exceeds it before allocating.");
    m.def("set_memory_limit_bytes", &set_memory_limit_bytes, nb::arg("bytes"),
          "Sets the process memory budget in bytes (0 < bytes < inf).");
}

}  // namespace attnspec::python
