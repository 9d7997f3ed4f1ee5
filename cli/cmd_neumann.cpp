// attnspec neumann: InfSA Neumann-kernel analysis of one (sample, head): affinity norms, kernel
// invariants, truncation table, centralities and the absorbing-chain reading (proofs/infsa_*.md).
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/centrality.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/spectral/svd.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {
namespace {

std::vector<int> parse_orders(const std::string& s) {
    std::vector<int> Ks;
    std::stringstream ss(s);
    std::string p;
    while (std::getline(ss, p, ',')) {
        char* end = nullptr;
        const long k = std::strtol(p.c_str(), &end, 10);
        if (p.empty() || *end || k < 0 || k > 1000) fail_usage("--orders expects integers in [0, 1000], got '" + s + "'");
        Ks.push_back(int(k));
    }
    return Ks;
}

}  // namespace

int run_neumann(const Invocation& inv) {
    po::options_description desc("neumann options");
    std::string input, out, family = "gaussian", affinity_name = "relu", orders = "1,2,4,8,16,32";
    long tokens = 128, dh = 64;
    double gamma = 0.95, eps = 1e-6, mu = 1.0, target = 1e-6;
    std::uint64_t seed = 20251;
    bool json = false, no_report = false;
    desc.add_options()
        ("input", po::value(&input), "HDF5 with Q, K (N x d_h), optional V (N x d_v), optional A_hat (N x N, used as given), optional root attribute gamma")
        ("tokens", po::value(&tokens)->default_value(tokens), "N for generated Q, K")
        ("dh", po::value(&dh)->default_value(dh), "d_h for generated Q, K")
        ("family", po::value(&family)->default_value(family), "generated family: gaussian, shared-mean, independent-means")
        ("mu", po::value(&mu)->default_value(mu), "mean strength of the family")
        ("seed", po::value(&seed)->default_value(seed), "seed of the generated instance")
        ("gamma", po::value(&gamma), "gamma in (0, 1) (default: the file's attribute, else 0.95)")
        ("eps", po::value(&eps)->default_value(eps, "1e-6"), "epsilon of the Frobenius normalisation")
        ("affinity", po::value(&affinity_name)->default_value(affinity_name), "relu (the code's form) or softmax (row-stochastic)")
        ("orders", po::value(&orders)->default_value(orders), "truncation orders K for the table")
        ("target", po::value(&target)->default_value(target, "1e-6"), "truncation error target: report the K that reaches it")
        ("out", po::value(&out), "report path (default reports/out/neumann.h5)")
        ("no-report", po::bool_switch(&no_report), "do not write the HDF5 report")
        ("json", po::bool_switch(&json), "one JSON document on stdout");
    po::variables_map vm;
    if (!parse(inv, "neumann", "[--input FILE | --tokens N --dh d --family F] [--gamma g] [--json]",
               "Builds Â (ReLU(QK^T/d_h)/(||.||_F+eps) or row softmax), the Neumann kernel N = (I - gamma Â)^-1\n"
               "by LU, and reports: ||Â||_F, ||Â||_2 and rho(Â) with certified enclosures; the invariants\n"
               "N >= I >= 0, commutation, the residual against its LU bound; the truncation table\n"
               "||N - N_K||_2 against (gamma||Â||_2)^{K+1}/(1 - gamma||Â||_2) and the K for --target; Katz\n"
               "in/out, Perron vectors, expected steps N 1, and the leak R = 1 - gamma Â 1 (the absorbing-\n"
               "chain reading needs min R >= 0). Cost O(N^3); N up to a few thousand.\n\nexamples:\n"
               "  attnspec neumann --tokens 256 --dh 64 --family shared-mean --gamma 0.9\n"
               "  attnspec neumann --input head.h5 --json\n",
               desc, vm))
        return 0;
    const AffinityKind kind = affinity_kind_from_string(affinity_name);
    const std::vector<int> Ks = parse_orders(orders);
    if (!(target > 0)) fail_usage("neumann: --target must be > 0");
    Eigen::MatrixXd Q, K, V, A_hat;
    std::string source;
    if (!input.empty()) {
        H5Reader rd(input);
        if (rd.exists("A_hat")) {
            A_hat = rd.matrix("A_hat");
            if (A_hat.rows() != A_hat.cols() || A_hat.size() == 0) fail_data(input + ": A_hat must be square and non-empty");
        } else {
            Q = rd.matrix("Q"), K = rd.matrix("K");
        }
        if (rd.exists("V")) V = rd.matrix("V");
        if (!vm.count("gamma") && rd.has_attr("/", "gamma")) gamma = rd.attr_double("/", "gamma");
        source = "input:" + input;
    } else {
        if (tokens <= 0 || dh <= 0) fail_usage("neumann: --tokens and --dh must be positive");
        draw_family(family, tokens, dh, mu, seed, Q, K);
        source = "generated:" + family + ",mu=" + std::to_string(mu);
    }
    if (!(gamma > 0 && gamma < 1)) fail_data("neumann: gamma must lie in (0, 1), got " + std::to_string(gamma));
    double frob_plus = NAN;
    if (A_hat.size() == 0) {
        AffinityOptions ao;
        ao.kind = kind;
        ao.eps = eps;
        Affinity a = affinity(Q, K, ao);
        A_hat = std::move(a.A_hat);
        frob_plus = a.frob_plus;
    }
    const Eigen::Index n = A_hat.rows();
    if (V.size() && V.rows() != n) fail_data("neumann: V has " + std::to_string(V.rows()) + " rows, expected " + std::to_string(n));
    if (!json) log("N = " + std::to_string(n) + ", LU of I - gamma A_hat");
    const NeumannKernel nk(A_hat, gamma);  // refuses gamma rho >= 1
    const Eigen::MatrixXd N = nk.kernel();
    const NeumannInvariants iv = neumann_invariants(nk, A_hat, N);
    const AffinityNorms norms = affinity_norms(A_hat);
    const Centralities c = centralities(A_hat, nk);
    const double s_hi = norms.norm2.hi;
    struct Row { int K; double bound, error; };
    std::vector<Row> table;
    for (int Kt : Ks) {
        const Eigen::MatrixXd E = N - neumann_truncated(A_hat, gamma, Kt);
        table.push_back({Kt, truncation_bound(gamma, s_hi, Kt), svd(E).sigma[0]});
    }
    const int K_target = truncation_order(gamma, s_hi, target);
    Eigen::MatrixXd CV;
    if (V.size()) CV = nk.closure_times(V);

    if (!no_report) {
        ReportWriter w(report_path(out, "neumann.h5"), provenance(inv, seed));
        H5Group G = w.root().group("neumann");
        G.attr("source", source), G.attr("affinity", input.size() && Q.size() == 0 ? "given" : to_string(kind));
        G.attr("N", std::int64_t(n)), G.attr("gamma", gamma), G.attr("eps", eps);
        G.attr("frobenius", norms.frob), G.attr("frob_plus", frob_plus);
        G.attr("norm2_lo", norms.norm2.lo), G.attr("norm2_hi", norms.norm2.hi);
        G.attr("rho_lo", c.left.rho_enc.lo), G.attr("rho_hi", c.left.rho_enc.hi);
        H5Group I = G.group("invariants");
        I.attr("residual", iv.residual), I.attr("residual_bound", iv.residual_bound), I.attr("lu_growth", iv.lu_growth);
        I.attr("min_entry", iv.min_entry), I.attr("min_diag_minus_1", iv.min_diag_minus_1), I.attr("min_offdiag", iv.min_offdiag);
        I.attr("commutator", iv.commutator), I.attr("entry_tol", iv.entry_tol), I.attr("kappa_F", iv.kappa_F);
        H5Group T = G.group("truncation");
        std::vector<std::int64_t> ks;
        std::vector<double> b, e;
        for (const auto& r : table) ks.push_back(r.K), b.push_back(r.bound), e.push_back(r.error);
        T.write("K", ks), T.write("bound", b), T.write("error", e);
        T.attr("target", target), T.attr("K_for_target", std::int64_t(K_target));
        H5Group C = G.group("centralities");
        auto vec = [](const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); };
        C.write("katz_out", vec(c.katz_out)), C.write("katz_in", vec(c.katz_in)), C.write("leak", vec(c.leak));
        C.write("expected_steps", vec(c.expected_steps)), C.write("perron_left", vec(c.left.vec)), C.write("perron_right", vec(c.right.vec));
        C.attr("min_leak", c.min_leak), C.attr("probabilistic", c.probabilistic ? "yes" : "no");
        if (CV.size()) G.write("closure_times_V", CV);
        w.commit();
        if (!json) log("report written to " + w.target());
    }
    if (json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "neumann");
        j.kv("source", source).kv("N", std::int64_t(n)).kv("gamma", gamma).kv("eps", eps);
        j.kv("frobenius", norms.frob).key("norm2").begin_array().value(norms.norm2.lo).value(norms.norm2.hi).end_array();
        j.key("rho").begin_array().value(c.left.rho_enc.lo).value(c.left.rho_enc.hi).end_array();
        j.key("invariants").begin_object().kv("residual", iv.residual).kv("residual_bound", iv.residual_bound)
            .kv("residual_ok", iv.residual <= iv.residual_bound).kv("min_entry", iv.min_entry)
            .kv("min_diag_minus_1", iv.min_diag_minus_1).kv("entry_tol", iv.entry_tol).kv("commutator", iv.commutator).end_object();
        j.key("truncation").begin_array();
        for (const auto& r : table) j.begin_object().kv("K", r.K).kv("bound", r.bound).kv("error", r.error).kv("holds", r.error <= r.bound).end_object();
        j.end_array().kv("target", target).kv("K_for_target", K_target);
        j.key("centralities").begin_object().kv("katz_in_max", c.katz_in.maxCoeff()).kv("katz_out_max", c.katz_out.maxCoeff())
            .kv("expected_steps_max", c.expected_steps.maxCoeff()).kv("min_leak", c.min_leak)
            .kv("probabilistic", c.probabilistic).kv("perron_left_converged", c.left.converged)
            .kv("cos_left_katz_in", cosine(c.left.vec, c.katz_in)).end_object();
        if (CV.size()) j.kv("closure_times_V_norm", CV.norm());
        j.end_object();
        j.finish();
    } else {
        std::cout << std::setprecision(6) << "InfSA Neumann kernel, N = " << n << ", gamma = " << gamma << " (" << source << ")\n"
                  << "  ||A||_F = " << norms.frob << "   ||A||_2 in [" << norms.norm2.lo << ", " << norms.norm2.hi
                  << "]   rho(A) in [" << c.left.rho_enc.lo << ", " << c.left.rho_enc.hi << "]\n"
                  << "  residual ||(I - gA)N - I||_F = " << iv.residual << " (LU bound " << iv.residual_bound << ")\n"
                  << "  min N_ij = " << iv.min_entry << ", min N_ii - 1 = " << iv.min_diag_minus_1
                  << ", ||AN - NA||_F = " << iv.commutator << " (entry tolerance " << iv.entry_tol << ")\n"
                  << "  truncation   K   ||N - N_K||_2   bound\n";
        for (const auto& r : table)
            std::cout << "             " << std::setw(3) << r.K << "   " << std::setw(12) << r.error << "   " << r.bound
                      << (r.error <= r.bound ? "" : "   VIOLATED") << "\n";
        std::cout << "  K for error <= " << target << ": " << K_target << "\n"
                  << "  Katz in max " << c.katz_in.maxCoeff() << ", Katz out max " << c.katz_out.maxCoeff()
                  << ", expected steps max " << c.expected_steps.maxCoeff() << "\n"
                  << "  absorbing chain: min leak R = " << c.min_leak
                  << (c.probabilistic ? " >= 0: N_ij = expected visits to j from i\n"
                                      : " < 0: the probabilistic reading does NOT hold\n");
        if (CV.size()) std::cout << "  ||C V||_F = " << CV.norm() << "\n";
    }
    return 0;
}


}  // namespace attnspec::cli
