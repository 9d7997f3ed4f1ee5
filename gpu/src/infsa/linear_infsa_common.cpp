// Rounding bound for the Linear-InfSA twin (both builds; used by gpu-check and the CPU logic
// tests). Error analysis in the style of Higham §3 (gamma_n, base/rounding.hpp), first order,
// following the twin's evaluation (gpu/src/infsa/linear_infsa_kernels.hpp; a sum of n terms in
// any order, as the warps' partial sums and butterflies are, has error <= gamma_{n-1} sum |terms|):
//   e_i  = sqrt(sum_l q_il^2) c, c = fl(1/sqrt d)         relative error  eps_e = gamma_{d+4}
//   A_l  = sum_i (e_i c) q_il: chunks of B tokens in Acc, chunks summed in double
//          |dA_l| <= (eps_e + gamma_{B+2} + g64_{nch+1}) sum_i e_i |q~_il|
//   se   = sum_i e_i                                      |dse| <= (eps_e + gamma_B + g64) se
//   q_l  = A_l / (se + eps), rounded to Acc               |dq_l| <= (|dA_l| + |q_l| |dse|)/(se+eps)
//                                                                    + (u + 2 u64) |q_l|
//   s_j  = max(0, c q . k_j) (ReLU 1-Lipschitz)           |ds_j| <= c sum_l |dq_l||k_jl|
//                                                                    + gamma_{d+2} c sum_l
//                                                                    |q_l||k_jl|
//   ss   = sum_j s_j                                      |dss| <= sum_j |ds_j| + (gamma_B + g64)
//   ss P_l  = sum_j s_j v_jl                                 |dP_l| <= sum_j |ds_j||v_jl|
//                                                                    + (gamma_{B+1} + g64) sum_j
//                                                                    s_j |v_jl|
//   p_l  = gamma P_l / (ss + eps), in double, stored in the output type (u)
//          |dp_l| <= gamma (|dP_l| + |P_l| |dss| / (ss + eps)) / (ss + eps) + (u + 3 u64) |p_l|
// The float64 reference (one block of N tokens) gets the same bound with u = u64, B = N; the sum
// of both, doubled to cover the second-order terms (products of two such gammas), is returned.
#include <algorithm>
#include <cmath>

#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"
#include "linear_infsa_kernels.hpp"

namespace attnspec::gpu {

const char* to_string(Input16 f) { return f == Input16::bf16 ? "bf16" : "fp16"; }

namespace {

Eigen::VectorXd first_order_bound(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                  const Eigen::MatrixXd& V, const LinearInfsaOptions& opt, double u,
                                  double B) {
    const double u64 = kUnitRoundoff;
    const Eigen::Index N = Q.rows(), d = Q.cols();
    const double nch = std::ceil(double(N) / B);
    const double g64 = gamma_n(nch + 1, u64);
    const double c = 1.0 / std::sqrt(double(d));
    const Eigen::MatrixXd Qt = Q * c;
    const Eigen::VectorXd e = Qt.rowwise().norm();
    const double se = e.sum();
    const double eps_e = gamma_n(double(d) + 4, u);
    const Eigen::VectorXd T = Qt.cwiseAbs().transpose() * e;  // sum_i e_i |q~_il|
    const Eigen::VectorXd A = Qt.transpose() * e;
    const double den_e = se + opt.eps;
    const Eigen::VectorXd q = den_e > 0 ? Eigen::VectorXd(A / den_e) : Eigen::VectorXd::Zero(d);
    const Eigen::VectorXd dA = (eps_e + gamma_n(B + 2, u) + g64) * T;
    const double dse = (eps_e + gamma_n(B, u) + g64) * se;
    Eigen::VectorXd dq = Eigen::VectorXd::Zero(d);
    if (den_e > 0) dq = ((dA + q.cwiseAbs() * dse) / den_e).eval() + (u + 2 * u64) * q.cwiseAbs();
    const Eigen::MatrixXd Kabs = K.cwiseAbs();
    const Eigen::VectorXd s = ((K * q) * c).cwiseMax(0.0);
    const Eigen::VectorXd ds =
        c * (Kabs * dq) + gamma_n(double(d) + 2, u) * c * (Kabs * q.cwiseAbs());
    const double ss = s.sum();
    const double dss = ds.sum() + (gamma_n(B, u) + g64) * ss;
    const Eigen::MatrixXd Vabs = V.cwiseAbs();
    const Eigen::VectorXd P = V.transpose() * s;
    const Eigen::VectorXd dP =
        Vabs.transpose() * ds + (gamma_n(B + 1, u) + g64) * (Vabs.transpose() * s);
    const double den_s = ss + opt.eps;
    if (!(den_s > 0)) return Eigen::VectorXd::Zero(d);
    const Eigen::VectorXd p = opt.gamma * P / den_s;
    return (opt.gamma * (dP + P.cwiseAbs() * (dss / den_s)) / den_s).eval() +
           (u + 3 * u64) * p.cwiseAbs();
}

}  // namespace

double linear_infsa_bytes_moved(InputFormat fmt, long H, long N, long d) {
    using infsa_logic::Format;
    switch (fmt) {
        case InputFormat::f64:
            return infsa_logic::bytes_moved<Format::f64>(H, N, d);
        case InputFormat::f32:
            return infsa_logic::bytes_moved<Format::f32>(H, N, d);
        case InputFormat::bf16:
            return infsa_logic::bytes_moved<Format::bf16>(H, N, d);
        case InputFormat::fp16:
            return infsa_logic::bytes_moved<Format::fp16>(H, N, d);
    }
    return 0;
}

Eigen::VectorXd linear_infsa_error_bound(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                         const Eigen::MatrixXd& V, const LinearInfsaOptions& opt,
                                         double u_acc) {
    const double B = double(std::min<long>(infsa_logic::kChunk, long(Q.rows())));
    const Eigen::VectorXd twin = first_order_bound(Q, K, V, opt, u_acc, B);
    const Eigen::VectorXd ref = first_order_bound(Q, K, V, opt, kUnitRoundoff, double(Q.rows()));
    return 2.0 * (twin + ref);
}

}  // namespace attnspec::gpu
