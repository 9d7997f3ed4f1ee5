// Singular values and condition numbers with stated accuracy. Dense SVD backends behind one call:
// Eigen JacobiSVD (min(m,n) <= 64), LAPACKE dgesdd (above), Eigen BDCSVD, LAPACKE dgejsv (high
// relative accuracy). Each SVD with vectors carries a rigorous enclosure per singular value (Weyl,
// tightened per triplet by Dot2 residuals and Temple/Kato; proofs/spectral_enclosure.md); kappa
// follows docs/MATH.md §1 (strict / nz with rtol). CPU only.
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"

namespace attnspec {

enum class KappaConvention { strict, nz };
const char* to_string(KappaConvention c);
KappaConvention kappa_convention_from_string(const std::string& s);  // throws Usage

// jacobi: Eigen JacobiSVD (QR-preconditioned two-sided; small matrices).
// bdc: Eigen BDCSVD. gesdd: LAPACKE dgesdd (divide and conquer; OpenBLAS).
// gejsv: LAPACKE dgejsv (preconditioned one-sided Jacobi; high relative accuracy for M = B D
//        with B well conditioned; slower). auto_select: jacobi if min(m,n) <= 64 else gesdd.
enum class SvdMethod { jacobi, bdc, auto_select, gesdd, gejsv };
const char* to_string(SvdMethod m);
SvdMethod svd_method_from_string(const std::string& s);  // "jacobi|bdc|gesdd|gejsv|auto"

struct SvdOptions {
    SvdMethod method = SvdMethod::auto_select;
    bool values_only = false;  // no vectors, no enclosure (radius/lo/hi NaN): the fast path
    // Tighten enclosures per triplet (Dot2 residuals + Temple). All indices when
    // min(m,n) <= refine_all_upto, else only 0, r-1 and the two around the default-rtol rank.
    bool refine = true;
    Eigen::Index refine_all_upto = 256;
};

// Thin SVD M = U diag(sigma) V^T with a rigorous enclosure of each exact sigma_i(M):
//   sigma_i(M) in [lo[i], hi[i]] and |sigma_i(M) - sigma[i]| <= radius[i].
// Weyl radius (whole decomposition): residual + sigma[i]*max(1-sqrt((1-eta_U)(1-eta_V)),
// sqrt((1+eta_U)(1+eta_V))-1) + pad, residual = ||M - U S V^T||_F, eta = ||U^T U - I||_F,
// pad = rounding of evaluating those. basis[i] says which argument gave the final interval.
struct SvdResult {
    Eigen::VectorXd sigma;   // descending, length min(m, n)
    Eigen::MatrixXd U, V;    // thin factors (empty when values_only)
    Eigen::VectorXd radius;  // enclosure radius per sigma (NaN when values_only)
    double residual = 0, eta_U = 0, eta_V = 0, pad = 0;
    std::string method;
    Eigen::VectorXd lo, hi;            // the enclosure, rounded outward
    Eigen::VectorXd weyl_radius;       // whole-decomposition radius alone
    Eigen::VectorXd triplet_residual;  // rho_i = ||H x - theta x||/||x|| (NaN: not refined)
    std::vector<std::string> basis;    // "weyl", "temple", "jordan-wielandt" per sigma
    Interval enclosure(Eigen::Index i) const { return {lo[i], hi[i]}; }
};

// Cost: O(m n min(m,n)) for the SVD; the Weyl check adds ~3 GEMMs of the same order; refinement
// O(m n) per refined triplet. Throws DataError on empty or non-finite input and on LAPACK failure;
// refuses (DataError, parameter "max_bytes") matrices whose work space would exceed the budget
// memory_limit_bytes() (base/memory.hpp). A matrix whose largest |entry| is outside
// [2^-256, 2^256] is scaled by a power of two first and the results scaled back (exact; entries
// near DBL_MAX or subnormal are handled); DataError when that scaling is inexact (entries spanning
// more than the double range) or sigma_max itself exceeds the largest double.
// Widen every enclosure of `s` by `extra` >= 0 (Weyl: the exact matrix is within `extra`, in the
// 2-norm, of the one that was decomposed, e.g. the error of forming it). Updates radius, lo, hi.
void widen(SvdResult& s, double extra);
// A values-only SvdResult with the given enclosure radii (e.g. the union of block spectra of a
// block-diagonal matrix); sigma is sorted descending together with its radii.
SvdResult svd_from_values(const Eigen::VectorXd& sigma, const Eigen::VectorXd& radius,
                          const std::string& method);

SvdResult svd(const Eigen::Ref<const Eigen::MatrixXd>& M, const SvdOptions& opt);
SvdResult svd(const Eigen::Ref<const Eigen::MatrixXd>& M,
              SvdMethod method = SvdMethod::auto_select);
// The decomposition step of svd() supplied by the caller (the CUDA twin, gpu/spectral): given the
// matrix svd() decided to decompose (M, or M scaled by a power of two), fill out.sigma
// (descending, min(m, n) values), out.method and, unless opt.values_only, the thin U and V.
// svd_with() applies svd()'s input checks, memory refusal, scaling, Weyl enclosure and
// refinement around it, so every backend's enclosures come from the same code.
// M is a view of the caller's matrix (no copy; M.data() is the caller's unless svd() scaled it).
using SvdBackend = std::function<void(const Eigen::Ref<const Eigen::MatrixXd>& M, SvdResult& out)>;
SvdResult svd_with(const Eigen::Ref<const Eigen::MatrixXd>& M, const SvdOptions& opt,
                   const SvdBackend& backend);

struct Kappa {
    double value = 0;  // +inf when the convention's sigma_min is 0
    KappaConvention convention = KappaConvention::strict;
    double rtol = 0;                      // nz: the relative threshold used; strict: 0
    Eigen::Index rank = 0;                // numerical rank at rtol (default rtol for strict too)
    double sigma_max = 0, sigma_min = 0;  // sigma_min is the one kappa divides by
    Interval enclosure;  // contains the exact kappa of the input matrix (inf hi allowed)
    std::string method;
    std::string describe() const;  // "kappa_strict = 12.3 in [12.29, 12.31] (JacobiSVD)"
};

// kappa from an SVD with enclosures. rtol < 0 selects the default max(m,n)*eps. O(r); throws
// DataError for rtol >= 1 (or NaN) and for an empty SVD. Built on kappa_from_extremes.
Kappa kappa(const SvdResult& s, Eigen::Index rows, Eigen::Index cols, KappaConvention c,
            double rtol = -1);

// What kappa needs of a spectrum, however it was computed (dense SVD, or the refined extremes of
// an operator): sigma_1 and the singular value the convention divides by (kappa_divisor_index),
// each with an enclosure of the exact value, and the numerical rank at the threshold rtol.
struct KappaInputs {
    double sigma_max = 0;
    Interval max_enclosure;
    double sigma_min = 0;  // sigma at kappa_divisor_index(c, rank, full_rank)
    Interval min_enclosure;
    Eigen::Index rank = 0;       // numerical_rank at rtol
    Eigen::Index full_rank = 0;  // min(rows, cols)
    double rtol = 0;             // the threshold rank was counted at, in [0, 1)
};
// kappa in convention c from its inputs: +inf (enclosure [inf, inf]) when sigma_max = 0; strict
// and rank < full_rank: +inf with the enclosure's upper end inf; else sigma_max / sigma_min with
// the outward-rounded quotient of the enclosures. O(1); does not throw.
Kappa kappa_from_extremes(const KappaInputs& in, KappaConvention c, const std::string& method);
// 1 + the last index i with sigma[i] > rtol * sigma[0] (sigma descending); 0 when none. O(r).
Eigen::Index numerical_rank(const Eigen::VectorXd& sigma, double rtol);
// The index of the singular value kappa divides by: r - 1 (strict), max(rank - 1, 0) (nz).
Eigen::Index kappa_divisor_index(KappaConvention c, Eigen::Index rank, Eigen::Index full_rank);
Kappa kappa(const Eigen::MatrixXd& M, KappaConvention c = KappaConvention::strict,
            double rtol = -1);

// Interval quotient a / b for a, b >= 0 (hi = +inf when b.lo <= 0), rounded outward.
Interval divide(Interval a, Interval b);

// Per-triplet a-posteriori bound for one computed singular triplet (u, theta, v) of M, evaluated
// with compensated dot products (Ogita-Rump-Oishi Dot2): theta = Rayleigh quotient of the
// Jordan-Wielandt matrix H = [0 M; M^T 0] at x = [u; v], rho = ||H x - theta x|| / ||x||, and
// bounds on the rounding of both. Cost O(m n). Used by svd() and by the large-scale engine.
struct TripletBound {
    double theta = 0, theta_err = 0;  // |theta_exact - theta| <= theta_err
    double rho = 0;                   // upper bound of the exact residual norm
    double res_u = 0, res_v = 0;      // ||M v - theta u||, ||M^T u - theta v|| (u, v as given)
};
TripletBound triplet_bound(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::VectorXd& u,
                           const Eigen::VectorXd& v);
// Tightens the enclosures of `out` (an SVD of M with vectors) per triplet: compensated residuals,
// then a Temple/Kato interval where a separation argument identifies the index (which indices:
// SvdOptions::refine_all_upto). O(m n) per refined triplet. Called by svd(); exposed for callers
// that build an SvdResult themselves.
void refine_enclosures(const Eigen::Ref<const Eigen::MatrixXd>& M, SvdResult& out,
                       const SvdOptions& opt);
// Temple/Kato enclosure of the one eigenvalue of H in (alpha, beta) given (theta, rho); returns
// an empty interval (lo > hi) when theta is not safely inside (alpha, beta).
Interval temple_enclosure(const TripletBound& t, double alpha, double beta);

}  // namespace attnspec
