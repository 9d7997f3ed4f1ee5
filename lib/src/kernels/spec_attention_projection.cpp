// spec-attention's corrected weights and projections with their error bounds
// (spec_attention_projection.hpp; the derivation is proofs/kernel_tolerance.md, "SpecA forward").
#include "spec_attention_projection.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::kernels::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void bad_shape(const char* name, const Array& a, const std::string& want) {
    fail_data(std::string(name) + " has shape " + shape_text(a.shape) + ", expected " + want, name);
}

// The Thm 3.5 correction sigma_1 U V^T of `W` and the bound eps_C of (Q3) on its elementwise
// error: the computed (U~, sigma~, V~) are within Delta_W of W_o = U_o Sigma~ V_o^T (U_o, V_o the
// orthonormal polar factors of U~, V~), whose polar factor is U_o V_o^T exactly; the polar
// factor moves by at most (1 + sqrt 2)/sigma_m(W) <= 4/min(lo, sigma~_m) times Delta_W
// (Araki-Yamagami).
void svd_correction(const Eigen::MatrixXd& W, const char* name, CorrectedWeight& out) {
    const SvdResult s = svd(W);
    const long m = static_cast<long>(s.sigma.size());
    if (m == 0 || !(s.sigma[0] > 0))
        fail_data(std::string("SVD correction of ") + name +
                      " = 0 is undefined (sigma_1 = 0, kappa undefined)",
                  name);
    const double s1 = s.sigma[0];
    const Eigen::MatrixXd C = s1 * s.U * s.V.transpose();
    const double eta_u = s.eta_U + s.pad, eta_v = s.eta_V + s.pad;
    const double dW = s.residual + s.pad + s1 * (eta_u * std::sqrt(1 + eta_v) + eta_v);
    const double lo = std::min(s.lo[m - 1], s.sigma[m - 1]);
    const double theta = lo > 0 ? 4 / lo : kInf;
    const double polar = eta_u * std::sqrt(1 + eta_v) + eta_v + theta * dW;
    const double form = gamma_n(static_cast<double>(m + 1)) * s1 * (1 + eta_u) * (1 + eta_v);
    out.c_error = (s.radius[0] + s1 * polar + form) * kBoundSafety;
    for (long r = 0; r < out.rows; ++r)
        for (long c = 0; c < out.cols; ++c) out.c[r * out.cols + c] = C(r, c);
}

}  // namespace

SpecDims spec_dims(const SpecAttentionProblem& p) {
    if (!std::isfinite(p.lambda))
        fail_data("lambda = " + value_text(p.lambda) + " must be finite", "lambda");
    if (p.lambda < 0) fail_data("lambda = " + value_text(p.lambda) + " must be >= 0", "lambda");
    const int rank = static_cast<int>(p.x.shape.size());
    if (rank < 2 || rank > 3) bad_shape("x", p.x, "(N, D) or (B, N, D)");
    for (std::int64_t n : p.x.shape)
        if (n < 1) bad_shape("x", p.x, "no empty dimension");
    SpecDims s;
    s.B = rank == 3 ? static_cast<long>(p.x.shape[0]) : 1;
    s.N = static_cast<long>(p.x.shape[rank - 2]), s.D = static_cast<long>(p.x.shape[rank - 1]);
    const std::string rows =
        "(" + std::to_string(s.D) + ", ..) (x has D = " + std::to_string(s.D) + " columns)";
    for (const auto& [name, w] :
         {std::pair<const char*, const Array*>{"w_q", &p.w_q}, {"w_k", &p.w_k}, {"w_v", &p.w_v}}) {
        if (w->shape.size() != 2 || w->shape[0] != s.D || w->shape[1] < 1)
            bad_shape(name, *w, rows);
    }
    s.d = static_cast<long>(p.w_q.shape[1]), s.dv = static_cast<long>(p.w_v.shape[1]);
    if (p.w_k.shape[1] != s.d)
        bad_shape("w_k", p.w_k,
                  "(" + std::to_string(s.D) + ", " + std::to_string(s.d) + ") (the shape of w_q)");
    return s;
}

CorrectedWeight corrected_weight(const Array& w, SpecCorrection kind, double lambda,
                                 const char* name) {
    CorrectedWeight out;
    out.rows = static_cast<long>(w.shape[0]), out.cols = static_cast<long>(w.shape[1]);
    const size_t n = w.values.size();
    out.c.assign(n, 0.0);
    if (kind == SpecCorrection::lambda) {
        for (long r = 0; r < std::min(out.rows, out.cols); ++r) out.c[r * out.cols + r] = lambda;
    } else {
        const Eigen::MatrixXd W = Eigen::Map<
            const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
            w.values.data(), out.rows, out.cols);
        svd_correction(W, name, out);
    }
    out.w.resize(n), out.err.resize(n);
    for (size_t k = 0; k < n; ++k) {
        out.w[k] = w.values[k] + out.c[k];
        out.err[k] = kUnitRoundoff * (1 + kUnitRoundoff) * std::fabs(out.w[k]) + out.c_error;
    }
    return out;
}

ProjectionModel projection_model(Format storage, Format accumulate, bool inputs_exact) {
    const RoundingModel k = kernel_model(storage, accumulate, inputs_exact);
    ProjectionModel m;
    m.u_in = k.u_in, m.u_a = k.u_a, m.tau_a = k.tau_a;
    m.u_s = unit_roundoff(storage), m.tau_s = underflow_error(storage);
    return m;
}

double projection_floor_units(const ProjectionModel& m) {
    return 2 * m.u_in + m.u_a + (m.u_s > m.u_a ? m.u_s : 0.0);
}

Projection project(const Array& x, const CorrectedWeight& w, const ProjectionModel& m) {
    const long D = w.rows, cols = w.cols, rows = static_cast<long>(x.values.size()) / D;
    const double Dd = static_cast<double>(D);
    // (Q5): a kernel's W' is within omega |W'| + eps_C of W + C, its GEMM within gamma_D(u_a).
    const double omega = (1 + m.u_in) * (1 + m.u_a) * (1 + m.u_s) - 1;
    const double f_k = (1 + m.u_in) * (1 + omega) * (1 + gamma_n(Dd, m.u_a)) - 1;
    const double g_ref = gamma_n(Dd), tau64 = smallest_normal(Format::fp64);
    Projection P;
    P.center.shape = x.shape;
    P.center.shape.back() = cols;
    const size_t n = static_cast<size_t>(rows * cols);
    P.center.values.assign(n, 0.0), P.ref.assign(n, 0.0), P.kernel.assign(n, 0.0);
    std::vector<double> mag(static_cast<size_t>(cols)), xw_err(mag), xbar(mag);
    for (long i = 0; i < rows; ++i) {
        const double* xi = x.values.data() + i * D;
        double* q = P.center.values.data() + i * cols;
        std::fill(mag.begin(), mag.end(), 0.0);
        std::fill(xw_err.begin(), xw_err.end(), 0.0), std::fill(xbar.begin(), xbar.end(), 0.0);
        double xsum = 0;
        for (long k = 0; k < D; ++k) {
            const double a = xi[k], aa = std::fabs(a);
            xsum += aa;
            const double* wk = w.w.data() + k * cols;
            const double* ek = w.err.data() + k * cols;
            for (long c = 0; c < cols; ++c) {
                q[c] += a * wk[c];
                mag[c] += aa * std::fabs(wk[c]);
                xw_err[c] += aa * ek[c];
                xbar[c] += aa * (std::fabs(wk[c]) + ek[c] + w.c_error);
            }
        }
        for (long c = 0; c < cols; ++c) {
            const size_t at = static_cast<size_t>(i * cols + c);
            const double ref = g_ref * mag[c] + xw_err[c] + Dd * tau64;  // (Q4)
            const double kern = f_k * xbar[c] + xsum * w.c_error + Dd * m.tau_a;
            const double stored = m.u_s * (std::fabs(q[c]) + ref + kern) + m.tau_s;
            P.ref[at] = ref * kBoundSafety;
            P.kernel[at] = (ref + kern + stored) * kBoundSafety;
        }
    }
    return P;
}

Array baseline_project(const Array& x_rounded, const Array& w, const CorrectedWeight& cw,
                       Format storage, Format accumulate) {
    const long D = cw.rows, cols = cw.cols;
    const long rows = static_cast<long>(x_rounded.values.size()) / D;
    const Format acc = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    std::vector<double> wp(cw.c.size());
    for (size_t k = 0; k < wp.size(); ++k)
        wp[k] = round_to(round_to(round_to(w.values[k], storage) + cw.c[k], acc), storage);
    Array out;
    out.shape = x_rounded.shape;
    out.shape.back() = cols;
    out.values.assign(static_cast<size_t>(rows * cols), 0.0);
    for (long i = 0; i < rows; ++i) {
        const double* xi = x_rounded.values.data() + i * D;
        for (long c = 0; c < cols; ++c) {
            double sum = 0;
            for (long k = 0; k < D; ++k)
                sum = round_to(sum + round_to(xi[k] * wp[k * cols + c], acc), acc);
            out.values[i * cols + c] = round_to(sum, storage);
        }
    }
    return out;
}

}  // namespace attnspec::kernels::detail
