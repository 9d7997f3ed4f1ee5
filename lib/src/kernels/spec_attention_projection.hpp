// The projections of check-kernel spec-attention (private to lib/src/kernels/): the corrected
// weights W + C in float64 with elementwise error bounds, the projections X (W + C) with the
// bound on the reference's error and on the distance of a correctly rounding kernel's operands
// (proofs/kernel_tolerance.md, "SpecA forward", (Q3)-(Q5)), and the baseline's rounded
// projection. Used by spec_attention_check.cpp.
#pragma once
#include <vector>

#include "attnspec/kernels/attention_reference.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"

namespace attnspec::kernels::detail {

// B batches (1 for an (N, D) x), N tokens, D input width, d (W_Q, W_K columns), d_v.
struct SpecDims {
    long B = 1, N = 0, D = 0, d = 0, dv = 0;
};
// Checks the shapes (x (N, D) or (B, N, D), w_q and w_k (D, d), w_v (D, d_v), no empty
// dimension) and lambda (finite, >= 0, parameter "lambda"); DataError naming the array and its
// shape otherwise. O(1).
SpecDims spec_dims(const SpecAttentionProblem& p);

// W + C of one weight (rows x cols, row-major): C in float64, w = fl(W + C), and bounds:
// c_error >= |C - C_exact| and err[k] >= |w[k] - (W + C_exact)[k]| elementwise ((Q3); c_error is
// +inf when W is numerically rank-deficient to the point that the SVD correction is not unique).
struct CorrectedWeight {
    long rows = 0, cols = 0;
    std::vector<double> c, w, err;
    double c_error = 0;
};
// DataError naming `name` for the SVD correction of a zero weight. One thin SVD for svd.
CorrectedWeight corrected_weight(const Array& w, SpecCorrection kind, double lambda,
                                 const char* name);

// How a kernel rounds the projections ((A1s)-(A4s)): u_in on X and W (0 when representable in the
// storage format), u_a and tau_a of its accumulation, u_s and tau_s of the storage of W + C and
// of the projected Q, K, V.
struct ProjectionModel {
    double u_in = 0, u_a = 0, tau_a = 0, u_s = 0, tau_s = 0;
};
ProjectionModel projection_model(Format storage, Format accumulate, bool inputs_exact);
// The relative error of one rounding of a projected element (the floor's share, "The baseline
// rule and its floor"): u_a, plus u_s when the storage is coarser, plus 2 u_in for X and W
// rounded on entry.
double projection_floor_units(const ProjectionModel& m);

// X (W + C): `center` = fl64(X w) shaped (.., N, cols); per element, `ref` >= |center -
// X (W + C)_exact| (Q4), `kernel` >= the distance from center of the operand a correctly
// rounding kernel feeds its attention (P5, ref included). O(B N D cols).
struct Projection {
    Array center;
    std::vector<double> ref, kernel;
};
Projection project(const Array& x, const CorrectedWeight& w, const ProjectionModel& m);

// The baseline's projection: x_rounded (X in the storage format) times fl_s(fl_a(fl_s(W) + C)),
// each dot product summed left to right in the accumulation format, stored in the storage format.
Array baseline_project(const Array& x_rounded, const Array& w, const CorrectedWeight& cw,
                       Format storage, Format accumulate);

}  // namespace attnspec::kernels::detail
