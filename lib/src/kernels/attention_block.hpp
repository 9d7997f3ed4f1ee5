// check-kernel attention over a block of consecutive query rows of one head at a time: the
// reference and its bound (the same formulas as analyze_row, attention_rows.hpp) and the plain
// baseline kernel, with the products Q K^T and P V through BLAS (no N x N matrix: a block of R
// rows x N keys). Private to lib/src/kernels/; used by attention_check.cpp.
#pragma once
#include <vector>

#include "attnspec/kernels/attention_reference.hpp"
#include "attnspec/kernels/precision.hpp"

namespace attnspec::kernels::detail {

// What every row block of one key/value head reads, computed once per head: |K|, [V | |V|]
// (N x 2 d_v), |V|, and per key count n the sums sum_{j<n} |v_jc| and maxima max_{j<n} |v_jc|
// (summed left to right, as analyze_row does). O(N (d + d_v)) memory.
struct KvHead {
    void set(const double* K, const double* V, long N, long d, long dv);
    const double* K = nullptr;
    long N = 0, d = 0, dv = 0;
    std::vector<double> absK, VV, absV, sum_abs, v_max;
};

// The same head's K and V as the baseline kernel reads them (the inputs rounded to the storage
// format), as float when it accumulates in fp32 on operands that fp32 holds exactly.
struct BaseHead {
    void set(const double* K, const double* V, long N, long d, long dv, Format storage,
             Format accumulate);
    bool single = false;  // the fp32 GEMM path
    bool rows = false;    // fp64 storage, fp32 accumulation: baseline_row row by row
    const double *K = nullptr, *V = nullptr;
    std::vector<float> Kf, Vf;
    Format storage = Format::fp64, accumulate = Format::fp64, A = Format::fp64;
};

struct BlockScratch {
    std::vector<double> Q, X, A, P, W, OPV, B, kK, kR;
    std::vector<float> Qf, Xf, Pf, Of;
    std::vector<double> t, e;
    RowScratch row;
};

// Rows in[0 .. count-1]: consecutive query rows of one head (in[r].q = in[0].q + r d), all over
// kv's K and V. out[r] as analyze_row gives it (the same bound formulas; the sums in another
// order). O(count N (d + d_v)) through BLAS, O(count N) scratch. Left in s for the derivatives,
// row r at r * n_max (n_max = the largest in[r].n; entries j < in[r].n): X (x_j), A (A_j), P
// (p_j = t_j / l), kK and kR (kappa_j of analyze_row's s.kappa and s.kappa_ref).
void analyze_block(const RowInput* in, long count, const KvHead& kv, const RoundingModel& kernel,
                   BlockScratch& s, RowAnalysis* out);

// The baseline kernel's rows: o (count x d_v) and lse (count); `in` reads the rounded inputs
// (the same K and V as bh). See attention_baseline.hpp, "In blocks".
void baseline_block(const RowInput* in, long count, const BaseHead& bh, BlockScratch& s, double* o,
                    double* lse);

}  // namespace attnspec::kernels::detail
