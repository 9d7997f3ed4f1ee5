// One run of check-kernel as its outputs describe it: the operation, the declared precisions, the
// verdict and one KernelCheckResult per output tensor, the files, and the stress case when known.
// What the HDF5 report (report/kernel_check_report.hpp), the JUnit XML
// (report/kernel_check_junit.hpp) and the reproducer (io/kernel_reproducer.hpp) are written from.
// A plain record: no computation; kernels/check_run.cpp writes element lists as JSON. CPU only.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/kernels/attention_check.hpp"

namespace attnspec {
class JsonWriter;
}

namespace attnspec::kernels {

struct KernelCheckRun {
    std::string op;  // attention, attention-vjp, attention-jvp, linear-infsa, pure-infsa,
                     // spec-attention
    std::string dtype = "fp32", accumulate = "fp32", mask = "none";
    double scale = 0;           // the scale used (the effective one, never 0); attention ops only
    bool infsa = false;         // linear-infsa, pure-infsa: gamma and eps, no mask or scale
    double gamma = 0, eps = 0;  // their parameters
    // spec-attention: its correction ("lambda" or "svd"; "" for the other operations) and lambda
    std::string correction;
    double lambda = 0;
    double factor = 2;  // allowed = factor x baseline + floor
    KernelVerdict verdict = KernelVerdict::pass;
    std::string summary;
    // {name, result}: "o", or "dq", "dk", "dv", or "do_t"; the results outlive the run record.
    std::vector<std::pair<std::string, const KernelCheckResult*>> tensors;
    std::string inputs, output;  // the files checked
    std::string reproducer;      // the reproducer written ("" when none: the verdict was pass)
    double seconds = 0;          // wall time of the check
    // The stress case IN came from, when IN says (its `case` member: io/kernel_reproducer.hpp,
    // read_stress_case); generator "" when unknown.
    std::string generator;
    std::uint64_t seed = 0;
    std::vector<std::int64_t> shape;
};

// `key`: [{index, got, reference, error, bound, allowed, baseline}, ...] into an open JSON object:
// the worst elements as check-kernel --json and the reproducer's case JSON spell them.
void json_elements(JsonWriter& j, const char* key, const std::vector<ElementReport>& list);

}  // namespace attnspec::kernels
