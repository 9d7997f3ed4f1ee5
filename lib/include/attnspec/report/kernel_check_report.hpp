// The check-kernel report (reports/SCHEMA.md, "check-kernel reports"): the section /check_kernel
// written from a kernels::KernelCheckRun, and its page for `report show` / `report render`
// (report/kinds.hpp dispatches to it). Names: report/names.hpp, kernel_check. CPU only.
#pragma once
#include "attnspec/io/h5.hpp"
#include "attnspec/kernels/check_run.hpp"
#include "attnspec/report/page.hpp"

namespace attnspec {

// Writes /check_kernel under `root`: the run's attributes (op, verdict, summary, dtype,
// accumulate, mask, scale, factor, inputs, output, reproducer, seconds), q/k/v shapes, and one
// group per output tensor with its figures and worst-element lists. O(tensors x worst).
void write_kernel_check_section(H5Group& root, const kernels::KernelCheckRun& run);

// The page of a report holding /check_kernel. DataError naming a missing attribute or dataset.
Page kernel_check_page(const H5Reader& r);

}  // namespace attnspec
