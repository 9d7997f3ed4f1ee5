// check-kernel's figures of one checked tensor, as JSON and as text (check_kernel_print.hpp).
#include "check_kernel_print.hpp"

#include <cstdio>

#include "attnspec/kernels/check_run.hpp"

namespace attnspec::cli {

using namespace attnspec::kernels;

// The figures of one output tensor (and its lse, when checked).
void json_tensor(JsonWriter& j, const KernelCheckResult& r) {
    j.kv("rows", static_cast<std::int64_t>(r.rows));
    j.kv("masked_rows", static_cast<std::int64_t>(r.masked_rows));
    j.kv("rows_beyond_rule", static_cast<std::int64_t>(r.rows_beyond_rule));
    j.kv("elements_beyond_bound", static_cast<std::int64_t>(r.elements_beyond_bound));
    j.kv("nonfinite", static_cast<std::int64_t>(r.nonfinite));
    j.kv("nonfinite_expected", static_cast<std::int64_t>(r.nonfinite_expected));
    j.kv("nonfinite_mismatch", static_cast<std::int64_t>(r.nonfinite_mismatch));
    j.kv("tensor_error", r.tensor_error).kv("tensor_baseline", r.tensor_baseline);
    j.kv("tensor_floor", r.tensor_floor).kv("tensor_allowed", r.tensor_allowed);
    j.kv("worst_rule_ratio", r.worst_rule_ratio).kv("worst_bound_ratio", r.worst_bound_ratio);
    j.kv("baseline_bound_ratio", r.baseline_bound_ratio);
    j.kv("max_reference_error", r.max_reference_error).kv("lse", r.has_lse);
    if (r.has_lse) {
        j.kv("lse_error", r.lse_error).kv("lse_baseline", r.lse_baseline);
        j.kv("lse_allowed", r.lse_allowed).kv("lse_bound_ratio", r.lse_bound_ratio);
        j.kv("lse_beyond_bound", static_cast<std::int64_t>(r.lse_beyond_bound));
        json_elements(j, "worst_lse", r.worst_lse);
    }
    json_elements(j, "worst_by_bound", r.worst_by_bound);
    json_elements(j, "worst_by_rule", r.worst_by_rule);
}

namespace {

void print_list(const char* title, const std::vector<ElementReport>& list) {
    if (list.empty()) return;
    std::printf("worst elements by %s:\n  %-16s %14s %14s %10s %10s %10s\n", title, "index", "got",
                "reference", "error", "bound", "allowed");
    for (const ElementReport& e : list)
        std::printf("  %-16s %14.7g %14.7g %10.3g %10.3g %10.3g\n",
                    kernels::shape_text(e.index).c_str(), e.got, e.reference, e.error, e.bound,
                    e.allowed);
}
}  // namespace

void print_tensor(const char* name, const KernelCheckResult& r, double factor, bool several) {
    if (several) std::printf("%s: %s\n  %s\n", name, verdict_name(r.verdict), r.summary.c_str());
    std::printf(
        "  tensor: max error %.3g, baseline %.3g, allowed %.3g (%g x baseline + floor %.3g)\n",
        r.tensor_error, r.tensor_baseline, r.tensor_allowed, factor, r.tensor_floor);
    std::printf(
        "  rows: %ld (%ld fully masked), %ld beyond their rule (worst error/allowed %.3g)\n",
        r.rows, r.masked_rows, r.rows_beyond_rule, r.worst_rule_ratio);
    std::printf(
        "  rounding bound: %ld elements beyond it, %ld NaN/Inf (worst error/bound %.3g); "
        "baseline error/bound %.3g; reference error <= %.3g\n",
        r.elements_beyond_bound, r.nonfinite, r.worst_bound_ratio, r.baseline_bound_ratio,
        r.max_reference_error);
    if (r.nonfinite_expected > 0 || r.nonfinite_mismatch > 0)
        std::printf(
            "  non-finite inputs: %ld elements must be NaN/Inf, %ld break the stated "
            "propagation\n",
            r.nonfinite_expected, r.nonfinite_mismatch);
    if (r.has_lse)
        std::printf(
            "  lse: max error %.3g, baseline %.3g, allowed %.3g, %ld beyond the bound "
            "(worst error/bound %.3g)\n",
            r.lse_error, r.lse_baseline, r.lse_allowed, r.lse_beyond_bound, r.lse_bound_ratio);
    print_list("error / bound", r.worst_by_bound);
    if (r.verdict != KernelVerdict::wrong) print_list("error / allowed", r.worst_by_rule);
}

}  // namespace attnspec::cli
