// sigma_max, sigma_min and kappa of a large operator J (rows <= cols, e.g. the attention Jacobian
// Nd x 3Dd) without forming J: eigenvalues of G = J J^T (given or assembled from products) by
// LAPACK dsyevd (full) or Spectra Lanczos + shift-invert on a dpotrf factor (extremal), extremal
// triplets refined with matrix-free J v / J^T u (power steps; PCG inverse iteration) and enclosed
// by a residual-based Temple bound (proofs/spectral_enclosure.md §4). CPU only.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/spectral/certified.hpp"
#include "attnspec/spectral/certify/policy.hpp"
#include "attnspec/spectral/operators.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec {

enum class LargeSvdMode { full, extremal, auto_select };
const char* to_string(LargeSvdMode m);
LargeSvdMode large_svd_mode_from_string(const std::string& s);  // "full|extremal|auto"; Usage

// One report of the engine's progress inside a stage of one solve. Stages, in order: "Cholesky"
// (dpotrf of G + tau I), "Lanczos" (both ends), "eigensolve" (dsyevd, full mode or the auto
// fallback), "refinement", then "certify" when a certificate runs. done rises within a stage and
// never passes total; total is in the stage's unit (unit: "%" of the estimated time for LAPACK
// calls and the certificate, "products" for Lanczos (operator applications and solves) and for
// refinement (applications of J and J^T, against the most its steps allow)) and may grow when an
// estimate proves short. seconds_left is an estimate from the sizes and a rate measured in this
// run (NaN when none yet).
struct EngineProgress {
    std::string stage;
    const char* unit = "";
    long done = 0, total = 0;
    double seconds_left = 0;
};
// Progress callback: called at least once per stage (done = total at its end), and while a long
// LAPACK call runs from a helper thread about twice a second (never two calls at once).
using EngineProgressFn = std::function<void(const EngineProgress&)>;
// A notice for the user: the engine switches to a much costlier method (with its estimate).
using EngineNoticeFn = std::function<void(const std::string&)>;

struct LargeSvdOptions {
    LargeSvdMode mode = LargeSvdMode::auto_select;
    Eigen::Index full_upto = 2048;  // auto: full eigenvalues of G when rows <= this
    double rtol = -1;               // kappa_nz threshold; < 0: max(rows, cols) * eps
    int refine_steps = 4;           // power / inverse-iteration steps per extremal triplet
    int pcg_max_iter = 60;          // per inverse-iteration solve
    std::uint64_t seed = 1;         // Lanczos start vectors
    // Relative error of one matrix-free product: ||fl(J x) - J x|| <= product_rel_error *
    // sigma_max ||x||. An assumption about the operator (stated in reports); default
    // 4 sqrt(rows + cols) u. Callers with an a-priori bound pass it.
    double product_rel_error = -1;
    double max_bytes = 8.0 * (1ull << 30);  // refuse Gram + factor copies above this
    // Certified lower bound on sigma_min (spectral/certify/policy.hpp): when (auto by default:
    // when the refined one is 0 or wider than 1e-6 relative and the work is moderate), which
    // method, and the structured Gram of the double-double certificate.
    CertifyOptions certify;
    EngineProgressFn progress;  // optional: progress inside the solve
    EngineNoticeFn notice;      // optional: fallbacks to a costlier method
};

struct RefinedTriplet {
    double sigma = 0;             // ||J^T u|| after refinement (u unit)
    double sigma_gram = 0;        // sqrt of the Gram eigenvalue before refinement
    Eigen::VectorXd u, v;         // unit left (rows) / right (cols) vectors
    double res_u = 0, res_v = 0;  // ||J v - sigma u||, ||J^T u - sigma v||
    double rho = 0;               // Jordan-Wielandt residual bound incl. product rounding
    Interval enclosure;           // contains the exact sigma under the stated assumptions
    std::string basis;            // "temple", "jordan-wielandt", "gram-weyl"
    int steps = 0;                // refinement steps taken
};

struct OperatorSpectrum {
    Eigen::Index rows = 0, cols = 0;
    std::string mode, method;
    Eigen::VectorXd gram_sigma;  // sqrt(max(0, eig(G))) descending: all (full) or the extremes
    RefinedTriplet max, min;
    Eigen::Index rank = -1;  // numerical rank at the default rtol; -1 when unknown
    Kappa strict, nz;
    double gram_error = 0;  // bound used for ||fl(G) - J J^T||_2 (estimate x safety)
    double gram_trace = 0;  // trace(fl(G)) = ||J||_F^2 up to G's forming error, in every mode
    double product_rel_error = 0;
    double seconds = 0;       // the engine, from its given G (operator_spectrum)
    double gram_seconds = 0;  // building G before it, where the caller did (Jacobians); the
                              // whole solve is seconds + gram_seconds (JSON only, not in reports)
    double rel_error_bound = 0;  // kappa enclosure half-width / kappa (strict, or nz if inf)
    std::vector<std::string> notes;
};

// Cost: forming G if not given (rows products J^T e_i then J), O(rows^3) for full / Cholesky,
// O(rows^2) per Lanczos step, O(product) per refinement step. Memory ~ 3 rows^2 doubles.
// G, when given, must be rows x rows symmetric (DataError otherwise). Throws DataError for an
// empty operator, non-finite products, or memory above max_bytes (before allocating).
OperatorSpectrum operator_spectrum(const LinearOperator& J, const Eigen::MatrixXd* G,
                                   const LargeSvdOptions& opt = {});

}  // namespace attnspec
