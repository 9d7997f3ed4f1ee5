// What every check of check-kernel shares (private to lib/src/kernels/): the worst-element lists,
// the operands a kernel reads (inputs rounded to the storage format), the shape check of a
// kernel's output, one row of an output compared with its reference, rounding bound and baseline
// (the rule of proofs/kernel_tolerance.md, "The baseline rule and its floor"), and the verdict of
// one output tensor. Used by attention_check.cpp and derivative_check.cpp.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/attention_reference.hpp"

namespace attnspec::kernels::detail {

// Query row i of head h in batch b of `src` (p, or its inputs rounded to the storage format):
// q_i, the K and V of its key/value head, the visible keys under `mask`. O(1).
RowInput row_input(const ProblemShape& sh, const AttentionProblem& src, MaskKind mask, double scale,
                   long b, long h, long i);
// The same row under a boolean or additive mask (src.mask_array): `keys` receives the visible keys
// (N_k entries at most), in.keys points at them and, for an additive mask, in.bias at the row of
// src.mask_array. O(N_k).
RowInput row_input_masked(const ProblemShape& sh, const AttentionProblem& src, double scale, long b,
                          long h, long i, std::vector<long>& keys);
// row_input_masked under a boolean or additive src.mask, row_input otherwise (keys unused).
RowInput row_input_any(const ProblemShape& sh, const AttentionProblem& src, double scale, long b,
                       long h, long i, std::vector<long>& keys);
// Whether query row `row` = (b H + h) N_q + i of `p` sees no key (a fully masked row). O(N_k).
bool row_fully_masked(const ProblemShape& sh, const AttentionProblem& p, long row);
// DataError (parameter "mask") when `p` has a boolean or additive mask and q, k, v or one of
// `extra` holds NaN or Inf: `op` checks non-finite inputs under mask none or causal only. O(size).
void refuse_nonfinite_masked(const AttentionProblem& p, const std::vector<const Array*>& extra,
                             const char* op);
// The index of element c of that row as the file holds it ((.., i, c); no c when c < 0).
std::vector<std::int64_t> element_index(const ProblemShape& sh, long b, long h, long i, long c);

// error / limit (0 when the error is 0, +inf when the limit is 0).
double ratio(double error, double limit);

// Keeps in `list` the `k` elements of largest error / bound (Key::bound) or error / allowed
// (Key::rule), in descending order.
enum class Key { bound, rule };
void keep_worst(std::vector<ElementReport>& list, const ElementReport& e, Key key, int k);

// Whether every value of the arrays is representable in `f`.
bool all_exact(const std::vector<const Array*>& arrays, Format f);
// The arrays' values rounded to `f` in place (what a kernel's matrix units read).
void round_all(const std::vector<Array*>& arrays, Format f);

// Values beyond the storage format's range (docs/cli/check-kernel.md, "Values beyond the storage
// range"). A finite value of a data array that rounds to +-inf in `f` is no input a kernel
// storing `f` can read: DataError naming the array, the first index, the value and the format
// (NaN/Inf inputs themselves pass: the non-finite checks take them). O(size).
void refuse_beyond_range(const std::vector<std::pair<const Array*, const char*>>& arrays, Format f);
// An additive mask value that rounds to -inf in `f` (the usual -1e9 of a masked_fill, say, in
// fp16) hides its key in every kernel storing the mask in `f`; the check reads it as stored, -inf,
// the reference included. Returns `mask` itself when it holds no such value, else its copy in
// `holder` with them set to -inf; a value rounding to +inf is refused (DataError). O(size).
const Array& mask_as_stored(const Array& mask, Format f, Array& holder);

// `p` as a kernel storing `f` reads it: refuse_beyond_range on q, k, v and `extra`, mask_as_stored
// on a general mask's array. Returns `p` itself, or its copy in `holder` when the mask changed.
const AttentionProblem& problem_as_stored(
    const AttentionProblem& p, Format f, AttentionProblem& holder,
    const std::vector<std::pair<const Array*, const char*>>& extra = {});

// DataError unless `a` has shape `want` and the matching number of values.
void check_shape(const Array& a, const std::vector<std::int64_t>& want, const char* name);

// One row of a kernel's output: n elements with the reference, the rounding bound (reference
// error included), the reference's own error bound and the baseline kernel's values. The row's
// floor is floor_units x max_c (first_row + first[c] + u_out |ref_c|): the first-order error of a
// kernel rounding each intermediate once (first may be null).
struct RowValues {
    const double* got = nullptr;
    const double* ref = nullptr;
    const double* bound = nullptr;
    const double* ref_error = nullptr;
    const double* base = nullptr;
    const double* first = nullptr;
    double first_row = 0;
    long n = 0;
    std::vector<std::int64_t> index;  // the row's index; its last entry is set to the column
};

// A fully masked row (no visible key): all zeros or all NaN pass (FlashAttention's and PyTorch's
// conventions); any other value there counts as beyond the bound. Counts r.masked_rows.
void masked_row(const double* got, long n, const std::vector<std::int64_t>& ix0,
                const KernelCheckOptions& opt, KernelCheckResult& r);

// DataError (parameter "factor") unless opt.factor is finite and >= 1.
void check_factor(const KernelCheckOptions& opt);

// Adds the row to r's tallies (rows_beyond_rule, elements_beyond_bound, nonfinite, tensor
// figures, ratios, worst lists); r.rows is the caller's. O(n).
void compare_row(const RowValues& v, double u_out, const KernelCheckOptions& opt,
                 KernelCheckResult& r);

// The verdict and summary line of one output tensor named `name` ("o", "dq", ...) once every
// row is in; `max_abs_lse` sizes the lse floor when r.has_lse.
void decide(KernelCheckResult& r, const KernelCheckOptions& opt, const char* name,
            double max_abs_lse);

}  // namespace attnspec::kernels::detail
