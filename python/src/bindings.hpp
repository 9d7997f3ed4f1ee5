// The pieces of the extension module attnspec._core (python/src/module.cpp): each binds one part
// of the core library. The Python layer (python/attnspec/) checks and converts the arguments
// (dtype, shape, NaN/Inf) before they get here; the library checks them again and its errors
// (attnspec::Error) become attnspec.Error subclasses (python/attnspec/_errors.py).
#pragma once
#include <nanobind/nanobind.h>

namespace attnspec::python {

void bind_errors(nanobind::module_& m);    // the translator of attnspec::Error; memory budget
void bind_head(nanobind::module_& m);      // Head, its forward pass, dense J, J as an operator
void bind_spectrum(nanobind::module_& m);  // kappa(J) of a head (the CLI's engine), of a matrix
void bind_datasets(nanobind::module_& m);  // the named datasets (io/model_input.hpp)
void bind_checks(nanobind::module_& m);    // the theorem checks: list, run, replay (proofs/)
void bind_infsa(nanobind::module_& m);     // InfSA: Neumann kernel, Perron, Linear-InfSA, fidelity
void bind_reports(nanobind::module_& m);   // reports: kind, summary, page, render (report/)
void bind_kernels(nanobind::module_& m);   // kernel validation: check, baseline, stress (kernels/)

}  // namespace attnspec::python
