// The gpu-check tolerance of the kappa(J) twin, known before the device answers (issue 32): an a
// priori bound on ||fl(G) - J J^T||_2 for the twin's assembly route (jacobian_spectrum_logic.hpp:
// P, Z = P K, Y = P Fx, XX, QQ, VV, the combine), computed on the host from the head alone, plus
// the eigensolver's backward error sized on the CPU's sigma_max; Weyl turns it into a radius on
// each sigma, and the CPU enclosure's half-width is added. Nothing here reads a device result, so a
// wrong G (a skipped tile, a dropped term) cannot widen its own tolerance. Host-only, both builds
// (jacobian_spectrum_tolerance_common.cpp); the CPU suite calls it (tests/cpu/gpu/).
#pragma once
#include <Eigen/Dense>
#include <string>

#include "attnspec/attention/attention.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"

namespace attnspec::gpu {

// Fx with Fx Fx^T = X X^T and m = min(N, D) columns: X itself, or R^T from X^T = Q R (Householder,
// Eigen). The factor the twin uploads (jacobian_spectrum_cuda.cpp) and the bound below uses.
Eigen::MatrixXd jacobian_x_factor(const Eigen::MatrixXd& X);

// The parts of the a priori bound delta >= ||fl(G) - J J^T||_2 (absolute, in G's units).
struct GramBound {
    long depth = 0;          // K of gamma_K: the longest chain of roundings of one entry
    double forming = 0;      // gamma_K ||G_abs||_2 bound (the route in absolute values)
    double factor = 0;       // ||QQ o (P (Fx Fx^T - X X^T) P^T)||_2 bound (0 when Fx = X)
    double eigensolver = 0;  // 4 sqrt(n) u (sigma_max_hi^2 + forming + factor)
    double delta = 0;        // kGramBoundEvalSlack x the sum
};

// Evaluating the bound on the host rounds too (non-negative sums of at most (Nd) N terms, each
// accurate to a relative gamma_{(Nd) N} far below 1e-6 at the check's sizes): a factor 2 covers it.
inline constexpr double kGramBoundEvalSlack = 2;

// delta for head h (validated by the caller) given an upper bound on sigma_max(J) (the CPU
// enclosure's hi). Cost O(N^2 d (d + min(N, D)) + N^2 D) flops, O(N^2 + N D) memory: per block c,
// |P^c| = S diag|V_c| + diag|A_c| S (N x N) times |K| and |Fx|.
GramBound jacobian_gram_bound(const Head& h, double sigma_max_hi);

// Radius on one sigma from Weyl on G: |sqrt(lambda~) - sigma| <= min(sqrt(delta), delta / sigma)
// with sigma >= cpu.lo, plus 2 u cpu.hi for the square roots' rounding; then + cpu.radius().
double jacobian_sigma_tolerance(double delta, const Interval& cpu);

struct JacobianCheckTolerance {
    GramBound gram;
    double tol_max = 0, tol_min = 0;  // per end (sigma_max, sigma_min), absolute
    double abs = 0;                   // max of the two: the tolerance the report shows
    std::string reason;
    // Each end within its own tolerance (sigma_min's, often ~sqrt(delta), would hide a sigma_max
    // error); NaN compares false.
    bool ends_within(double err_max, double err_min) const {
        return err_max <= tol_max && err_min <= tol_min;
    }
};
// The check's tolerance for head h against the CPU's spectrum of h (its enclosures only).
JacobianCheckTolerance jacobian_check_tolerance(const Head& h, const OperatorSpectrum& cpu);

// The CPU reference the twin is checked against: the engine with its defaults but no
// certificate (the twin mirrors the engine, which certifies nothing on the device).
inline LargeSvdOptions jacobian_check_cpu_options() {
    LargeSvdOptions o;
    o.certify.mode = CertifyMode::never;
    return o;
}

}  // namespace attnspec::gpu
