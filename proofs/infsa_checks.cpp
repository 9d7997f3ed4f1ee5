// IS checks (proofs/infsa_neumann.md). Symbols: A_hat = Â, N = (I - gamma Â)^{-1}, N_K truncation.
#include "attnspec/proofs/infsa_checks.hpp"

#include <chrono>
#include <cmath>
#include <complex>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::proofs {

namespace {

constexpr double u = kUnitRoundoff;
double gam(double n) { return gamma_n(n); }

}  // namespace

CheckResult check_infsa_neumann(const Eigen::MatrixXd& A_hat, double gamma,
                                const std::vector<int>& Ks, const NeumannPlant& plant) {
    const NeumannKernel nk(A_hat, gamma);  // validates; certifies gamma rho < 1
    const Eigen::Index n = A_hat.rows();
    Eigen::MatrixXd N = nk.kernel();
    N(0, n - 1) += plant.kernel_shift;
    const NeumannInvariants inv = neumann_invariants(nk, A_hat, N);
    const Interval s2 = norm2_enclosure(A_hat);
    const double fA = A_hat.norm();

    CheckResult res;
    res.check = "infsa.neumann";
    res.claim =
        "N = (I - gamma A)^{-1}: residual <= LU bound, N >= I >= 0, AN = NA, "
        "||N - N_K||_2 <= (gamma||A||_2)^{K+1}/(1 - gamma||A||_2)";
    res.conventions = {
        {"kernel", "LU (dgetrf) inverse of I - gamma A_hat, column by column"},
        {"norm2", "CW enclosure of rho(A^T A) (A >= 0), upper end used in the bound"},
        {"residual", "Frobenius, ||(I - gamma A) N - I||_F"}};
    res.hypotheses.push_back(
        {"A_nonnegative", A_hat.minCoeff() >= 0, "min entry " + format_number(A_hat.minCoeff())});
    res.hypotheses.push_back({"gamma_rho_lt_1", gamma * nk.rho().hi < 1,
                              "gamma * rho_hi = " + format_number(gamma * nk.rho().hi)});

    res.tolerances.push_back(
        {"residual_bound", inv.residual_bound,
         "Higham Thm 9.4: (M + dM_j) x_j = e_j, |dM_j| <= g_3n |L||U|; + g_{n+1} "
         "for evaluating M N - I; Frobenius over columns; LU growth measured"});
    res.comparisons.push_back(compare(
        "residual", "||(I-gA)N - I||_F", inv.residual, Interval::point(inv.residual), Relation::le,
        "LU bound", inv.residual_bound, Interval::point(inv.residual_bound), true));
    // |N_c - N| <= e_N entrywise (a posteriori from the residual): signs hold up to e_N.
    const double eN = inv.entry_tol;
    res.tolerances.push_back(
        {"entry_tol", eN, "||N_c - N||_2 <= ||N_c||_F ||R||_F / (1 - ||R||_F)"});
    const double neg = -inv.min_entry;
    res.comparisons.push_back(compare("N_nonnegative", "-min N_ij", neg, Interval::around(neg, eN),
                                      Relation::le, "0", 0, Interval::point(0), true));
    const Eigen::MatrixXd NmI = N - Eigen::MatrixXd::Identity(n, n);
    const double negI = -NmI.minCoeff();
    res.comparisons.push_back(compare("N_ge_I", "-min (N - I)_ij", negI, Interval::around(negI, eN),
                                      Relation::le, "0", 0, Interval::point(0), true));
    // ||A N_c - N_c A||_F <= 2 ||A||_F e_N (exact N commutes) + 2 g_n ||A||_F ||N_c||_F (gemm).
    const double comm_tol = (2 * fA * eN + 2 * gam(n + 2.0) * fA * N.norm()) * (1 + gam(4.0 * n));
    res.tolerances.push_back({"commutator_tol", comm_tol,
                              "exact N commutes; ||N_c - N||_F <= e_N, gemm rounding g_n "
                              "|A||N|, one subtraction"});
    res.comparisons.push_back(compare("commutes", "||AN - NA||_F", inv.commutator,
                                      Interval::point(inv.commutator), Relation::le, "tolerance",
                                      comm_tol, Interval::point(comm_tol), true));

    // Truncation: ||N - N_K||_2 enclosed by svd(N_c - N_K) +- (e_N + Horner rounding).
    int tested = 0;
    double worst_ratio = 0;
    for (int K : Ks) {
        Eigen::MatrixXd NK = neumann_truncated(A_hat, gamma, K);
        NK(0, 0) += plant.truncation_shift;
        const double bound = truncation_bound(gamma, s2.hi, K);
        const double q = gamma * s2.hi;
        const double horner = K * gam(n + 2.0) * std::sqrt(double(n)) * (1 + gamma * fA / (1 - q));
        const SvdResult sv = svd(Eigen::MatrixXd(N - NK));
        const double slack = sv.radius[0] + eN + horner;
        if (bound < 100 * slack) continue;  // below the rounding floor: not decidable, skipped
        ++tested;
        worst_ratio = std::max(worst_ratio, sv.sigma[0] / bound);
        const std::string name = "truncation_K" + std::to_string(K);
        res.comparisons.push_back(
            compare(name, "||N - N_K||_2", sv.sigma[0], Interval::around(sv.sigma[0], slack),
                    Relation::le, "(g s)^{K+1}/(1 - g s)", bound, Interval::point(bound), true));
        res.values.emplace_back(name + "_error", sv.sigma[0]);
        res.values.emplace_back(name + "_bound", bound);
    }
    res.values.insert(res.values.begin(), {{"n", double(n)},
                                           {"gamma", gamma},
                                           {"norm2_lo", s2.lo},
                                           {"norm2_hi", s2.hi},
                                           {"frobenius", fA},
                                           {"rho_hi", nk.rho().hi},
                                           {"residual", inv.residual},
                                           {"residual_bound", inv.residual_bound},
                                           {"lu_growth", inv.lu_growth},
                                           {"kappa_F", inv.kappa_F},
                                           {"commutator", inv.commutator},
                                           {"min_entry", inv.min_entry},
                                           {"truncation_orders_tested", double(tested)},
                                           {"truncation_worst_ratio", worst_ratio}});
    res.instance = {{"A_hat", A_hat}};
    res.finalize();
    return res;
}

CheckResult check_infsa_perron(const Eigen::MatrixXd& A_hat, const NonnegOperator* op) {
    const DenseNonnegOp dense(A_hat);
    const NonnegOperator& use = op ? *op : dense;
    const Eigen::Index n = A_hat.rows();
    PerronOptions o;
    const PerronResult L = perron(use, o);
    o.left = false;
    const PerronResult R = perron(use, o);
    // Independent reference: the spectral radius from Eigen's EigenSolver (Hessenberg QR).
    const Eigen::VectorXcd ev = Eigen::EigenSolver<Eigen::MatrixXd>(A_hat, false).eigenvalues();
    double rho_ref = 0;
    for (Eigen::Index i = 0; i < ev.size(); ++i) rho_ref = std::max(rho_ref, std::abs(ev[i]));
    // Simple eigenvalue: |error| <= backward error / |v^T u| (normalised Perron vectors).
    const double vu = std::max(std::abs(L.vec.dot(R.vec)), 1e-300);
    const double ref_rad = 64 * n * u * A_hat.norm() / vu;

    CheckResult res;
    res.check = "infsa.perron";
    res.claim = "Collatz-Wielandt: min (A^T x)_i/x_i <= rho(A) <= max (A^T x)_i/x_i, A >= 0, x > 0";
    res.conventions = {
        {"iteration", "power iteration on A^T from x = 1/sqrt(n), CW bounds every step"},
        {"reference", "max |lambda| of Eigen::EigenSolver, radius 64 n u ||A||_F / (v^T u)"}};
    res.hypotheses.push_back({"A_nonnegative", A_hat.minCoeff() >= 0, ""});
    res.tolerances.push_back({"reference_radius", ref_rad,
                              "Bauer-Fike for a simple eigenvalue: backward error c n u ||A|| over "
                              "v^T u; c = 64 covers Hessenberg QR (measured << 1 of it)"});
    res.comparisons.push_back(compare("rho_enclosure", "rho (CW)", L.rho, L.rho_enc, Relation::eq,
                                      "rho (EigenSolver)", rho_ref,
                                      Interval::around(rho_ref, ref_rad)));
    res.comparisons.push_back(compare("rho_enclosure_right", "rho (CW, right)", R.rho, R.rho_enc,
                                      Relation::eq, "rho (EigenSolver)", rho_ref,
                                      Interval::around(rho_ref, ref_rad)));
    res.values = {{"n", double(n)},
                  {"rho_lo", L.rho_enc.lo},
                  {"rho_hi", L.rho_enc.hi},
                  {"rho_ref", rho_ref},
                  {"width_rel", (L.rho_enc.hi - L.rho_enc.lo) / L.rho_enc.hi},
                  {"iterations", double(L.iterations)},
                  {"residual_left", L.residual},
                  {"residual_right", R.residual},
                  {"gap_ratio", L.gap_ratio},
                  {"vec_error_estimate", L.vec_error},
                  {"vTu", vu}};
    res.instance = {{"A_hat", A_hat}};
    res.finalize();
    return res;
}

namespace {

template <class F>
CheckRun run_grid(const RunOptions& opt, const std::string& check, const std::string& claim,
                  const std::string& headline, F one) {
    RunLoop loop(opt, check, claim, headline);
    std::vector<long> Ns = {1, 2, 8, 31, 64};
    if (opt.thorough) Ns.push_back(200);
    if (!opt.shape.empty()) Ns = {opt.shape[0]};
    const std::vector<std::string> fams = {"gaussian/relu", "shared-mean/relu", "gaussian/softmax"};
    std::vector<std::string> names;
    for (long N : Ns)
        for (const auto& fam : fams) names.push_back("N=" + std::to_string(N) + "/" + fam);
    const long per = loop.per_regime(names, 2, 20);
    std::uint64_t i = 0;
    for (long N : Ns)
        for (const auto& fam : fams) {
            const std::string regime = "N=" + std::to_string(N) + "/" + fam;
            for (long t = 0; t < per && !loop.stopped(); ++t, ++i) {
                if (loop.skip(i, regime)) continue;
                const std::uint64_t seed = loop.seed(i);
                loop.submit(regime, seed, [&one, N, fam, seed]() -> std::optional<CheckResult> {
                    Eigen::MatrixXd Q, K;
                    const bool shared = fam.rfind("shared", 0) == 0;
                    draw_family(shared ? "shared-mean" : "gaussian", N, 16, 1.0, seed, Q, K);
                    AffinityOptions ao;
                    ao.kind = fam.find("softmax") != std::string::npos ? AffinityKind::softmax
                                                                       : AffinityKind::relu;
                    const Affinity A = affinity(Q, K, ao);
                    if (A.A_hat.maxCoeff() == 0) return std::nullopt;  // all scores <= 0
                    return one(A.A_hat);
                });
            }
        }
    return loop.finish();
}

}  // namespace

CheckRun run_infsa_neumann(const RunOptions& opt) {
    return run_grid(opt, "infsa.neumann",
                    "Neumann kernel invariants and truncation bound (gamma = 0.95)", "residual",
                    [](const Eigen::MatrixXd& A) { return check_infsa_neumann(A, 0.95); });
}

CheckRun run_infsa_perron(const RunOptions& opt) {
    return run_grid(opt, "infsa.perron",
                    "Collatz-Wielandt enclosure of rho(A_hat) contains the spectral radius",
                    "rho_enclosure",
                    [](const Eigen::MatrixXd& A) { return check_infsa_perron(A); });
}

}  // namespace attnspec::proofs
