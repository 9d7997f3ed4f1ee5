// check-kernel --junit: the run as a JUnit XML document, the form CI test reporters read
// (docs/cli/check-kernel.md, "JUnit XML"): <testsuites> around one <testsuite> named
// "attnspec check-kernel OP" whose <properties> carry the declared precisions and files, and one
// <testcase> per output tensor (o, dq, dk, dv, do_t) with a <failure type="fail|wrong"> carrying
// the tensor's summary and worst elements when the tensor did not pass. CPU only.
#pragma once
#include <string>

#include "attnspec/kernels/check_run.hpp"

namespace attnspec {

// The XML text (UTF-8, special characters escaped). O(tensors x worst).
std::string kernel_check_junit(const kernels::KernelCheckRun& run);

// `s` with &, <, >, " and ' escaped, and control characters other than tab and newline (which
// XML 1.0 cannot hold) replaced by '?'. O(length).
std::string xml_escape(const std::string& s);

}  // namespace attnspec
