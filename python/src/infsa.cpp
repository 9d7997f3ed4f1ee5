// Infinite Self-Attention (lib/include/attnspec/infsa/): the affinity Â, the Neumann-kernel
// analysis `attnspec neumann` runs (analyze_neumann) and the dense kernel, the closure C V,
// centralities, Collatz-Wielandt-certified Perron pairs (dense, or matrix-free on the tiled ReLU
// operator), Linear-InfSA (the two-sweep form and its weights) and fidelity (one (Q, K), or the
// table `attnspec fidelity` builds). Results go back as dicts python/attnspec/infsa.py turns into
// objects. Every computation runs without the GIL.
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/random.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/centrality.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/fidelity_table.hpp"
#include "attnspec/infsa/linear_infsa.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/neumann_analysis.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "attnspec/io/provenance.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/report/infsa_sections.hpp"
#include "bindings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace attnspec::python {
namespace {

nb::tuple interval(const Interval& i) { return nb::make_tuple(i.lo, i.hi); }

nb::dict perron_dict(const PerronResult& p) {
    nb::dict d;
    d["rho"] = p.rho, d["rho_enclosure"] = interval(p.rho_enc), d["vec"] = p.vec;
    d["residual"] = p.residual, d["gap_ratio"] = p.gap_ratio, d["vec_error"] = p.vec_error;
    d["iterations"] = p.iterations, d["converged"] = p.converged, d["left"] = p.left;
    return d;
}

nb::dict centralities_dict(const Centralities& c) {
    nb::dict d;
    d["katz_out"] = c.katz_out, d["katz_in"] = c.katz_in, d["leak"] = c.leak;
    d["expected_steps"] = c.expected_steps, d["min_leak"] = c.min_leak;
    d["probabilistic"] = c.probabilistic;
    d["left"] = perron_dict(c.left), d["right"] = perron_dict(c.right);
    return d;
}

nb::dict invariants_dict(const NeumannInvariants& iv) {
    nb::dict d;
    d["min_entry"] = iv.min_entry, d["min_diag_minus_1"] = iv.min_diag_minus_1;
    d["min_offdiag"] = iv.min_offdiag, d["commutator"] = iv.commutator;
    d["residual"] = iv.residual, d["residual_bound"] = iv.residual_bound;
    d["kappa_F"] = iv.kappa_F, d["lu_growth"] = iv.lu_growth, d["entry_tol"] = iv.entry_tol;
    return d;
}

nb::dict analysis_dict(const NeumannAnalysis& a) {
    nb::dict d;
    d["n"] = static_cast<long>(a.n), d["gamma"] = a.gamma, d["frobenius"] = a.norms.frob;
    d["norm2"] = interval(a.norms.norm2), d["invariants"] = invariants_dict(a.invariants);
    d["centralities"] = centralities_dict(a.centralities);
    nb::list rows;
    for (const TruncationRow& r : a.truncation) rows.append(nb::make_tuple(r.K, r.bound, r.error));
    d["truncation"] = rows, d["target"] = a.target, d["K_for_target"] = a.K_for_target;
    d["closure_times_V"] = a.closure_times_V;
    return d;
}

// analyze_neumann (the `attnspec neumann` analysis) with the memory check the CLI makes first,
// and, with `kernel`, the dense N = (I - gamma Â)^{-1} from one more LU.
// The report `attnspec neumann --input F --out R` writes (write_neumann_section), atomically at
// `path`; Â given, so the source is this call.
void write_neumann_report(const std::string& path, const NeumannAnalysis& a,
                          const std::string& command) {
    Provenance prov;
    prov.command_line = command;
    NeumannSource src;
    src.source = "python:attnspec.infsa.neumann", src.affinity = "given";
    ReportWriter w(path, prov);
    write_neumann_section(w.root(), a, src);
    w.commit();
}

nb::dict neumann(const Eigen::MatrixXd& A_hat, double gamma, const Eigen::MatrixXd& V,
                 std::vector<int> orders, double target, bool kernel, const std::string& report,
                 const std::string& command) {
    NeumannAnalysisOptions opt;
    opt.gamma = gamma, opt.orders = std::move(orders), opt.target = target;
    check_neumann_options(opt);
    check_neumann_memory(double(A_hat.rows()), 0, double(V.cols()));
    NeumannAnalysis a;
    Eigen::MatrixXd N;
    {
        nb::gil_scoped_release unlocked;
        a = analyze_neumann(A_hat, opt, V);
        if (kernel) N = NeumannKernel(A_hat, gamma).kernel();
        if (!report.empty()) write_neumann_report(report, a, command);
    }
    nb::dict d = analysis_dict(a);
    d["kernel"] = N;
    return d;
}

Eigen::MatrixXd closure_times(const Eigen::MatrixXd& A_hat, double gamma, const Eigen::MatrixXd& V,
                              bool transpose) {
    nb::gil_scoped_release unlocked;
    const NeumannKernel nk(A_hat, gamma);
    return transpose ? nk.closure_transpose_times(V) : nk.closure_times(V);
}

nb::dict centralities_of(const Eigen::MatrixXd& A_hat, double gamma) {
    Centralities c;
    {
        nb::gil_scoped_release unlocked;
        const NeumannKernel nk(A_hat, gamma);
        c = centralities(A_hat, nk);
    }
    return centralities_dict(c);
}

PerronOptions perron_options(bool left, double rel_width, int max_iter) {
    PerronOptions o;
    o.left = left, o.rel_width = rel_width, o.max_iter = max_iter;
    return o;
}

nb::dict perron_dense(const Eigen::MatrixXd& B, bool left, double rel_width, int max_iter) {
    PerronResult p;
    {
        nb::gil_scoped_release unlocked;
        p = perron(B, perron_options(left, rel_width, max_iter));
    }
    return perron_dict(p);
}

// The Perron pair of A+ = ReLU(Q K^T / d_h) applied in tiles (never N x N), and ||A+||_F.
nb::dict perron_relu(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, bool left,
                     double rel_width, int max_iter, long tile) {
    PerronResult p;
    Interval frob;
    {
        nb::gil_scoped_release unlocked;
        const ReluKernelOp op(Q, K, tile);
        p = perron(op, perron_options(left, rel_width, max_iter));
        frob = op.frobenius();
    }
    nb::dict d = perron_dict(p);
    d["frobenius"] = interval(frob);
    return d;
}

nb::dict affinity_of(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const std::string& kind,
                     double eps) {
    AffinityOptions o;
    o.kind = affinity_kind_from_string(kind), o.eps = eps;
    Affinity a;
    {
        nb::gil_scoped_release unlocked;
        a = affinity(Q, K, o);
    }
    nb::dict d;
    d["A_hat"] = std::move(a.A_hat), d["frob_plus"] = a.frob_plus;
    return d;
}

nb::dict linear(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const Eigen::MatrixXd& V,
                double gamma, double eps) {
    LinearInfsaOptions o;
    o.gamma = gamma, o.eps = eps;
    LinearInfsaResult r;
    Eigen::VectorXd a;
    {
        nb::gil_scoped_release unlocked;
        r = linear_infsa(Q, K, V, o);
        a = linear_infsa_weights(Q, K, o);
    }
    nb::dict d;
    d["p"] = r.p, d["q_bar"] = r.q_bar, d["sum_e"] = r.sum_e, d["sum_s"] = r.sum_s;
    d["degenerate"] = r.degenerate, d["weights"] = a;
    return d;
}

nb::dict fidelity_dict(const Fidelity& f) {
    nb::dict d;
    for (int m = 0; m < 4; ++m) d[kFidelityMetrics[m]] = fidelity_metric(f, m);
    d["left"] = perron_dict(f.left), d["right"] = perron_dict(f.right);
    d["rho_hat"] = interval(f.rho_hat), d["frob_plus"] = interval(f.frob_plus);
    d["matrix_free"] = f.matrix_free;
    return d;
}

nb::dict fidelity_one(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, double gamma, double eps,
                      bool matrix_free, bool with_right) {
    Fidelity f;
    {
        nb::gil_scoped_release unlocked;
        f = matrix_free ? fidelity_matrix_free(Q, K, gamma, eps, with_right)
                        : fidelity_dense(Q, K, gamma, eps);
    }
    return fidelity_dict(f);
}

// The generated table of `attnspec fidelity` (fidelity_table(spec)), its records as dicts.
nb::list fidelity_generated(FidelitySpec spec, const std::string& report,
                            const std::string& command) {
    check_fidelity_memory(spec);
    FidelityTable t;
    {
        nb::gil_scoped_release unlocked;
        t = fidelity_table(spec);
        if (!report.empty()) {  // the report of `attnspec fidelity ... --out R`, atomically
            Provenance prov;
            prov.command_line = command, prov.seed = spec.seed;
            ReportWriter w(report, prov);
            write_fidelity_section(w.root(), t, spec);
            w.commit();
        }
    }
    nb::list l;
    for (const FidelityRecord& r : t.records) {
        nb::dict d = fidelity_dict(r.f);
        d["family"] = r.family, d["N"] = r.N, d["head"] = r.head, d["draw"] = r.draw;
        d["seed"] = r.seed;
        l.append(d);
    }
    return l;
}

nb::tuple draw(const std::string& family, long N, long d, double mu, std::uint64_t seed) {
    Eigen::MatrixXd Q, K;
    draw_family(family, N, d, mu, seed, Q, K);
    return nb::make_tuple(Q, K);
}

}  // namespace

void bind_infsa(nb::module_& m) {
    m.def("infsa_affinity", &affinity_of, "Q"_a, "K"_a, "kind"_a, "eps"_a,
          "Â = ReLU(Q K^T / d_h) / (||.||_F + eps) (kind 'relu') or the row softmax of "
          "Q K^T / sqrt(d_h) ('softmax'), and ||A+||_F (affinity()).");
    m.def("infsa_neumann", &neumann, "A_hat"_a, "gamma"_a, "V"_a, "orders"_a, "target"_a,
          "kernel"_a, "report"_a = "", "command"_a = "",
          "The analysis of `attnspec neumann` (analyze_neumann), and N when asked; with `report`, "
          "also its HDF5 report (as `--out`), written atomically.");
    m.def("infsa_closure_times", &closure_times, "A_hat"_a, "gamma"_a, "V"_a, "transpose"_a,
          "C V = N gamma Â V (or C^T V) by solves with one LU (NeumannKernel).");
    m.def("infsa_centralities", &centralities_of, "A_hat"_a, "gamma"_a,
          "Katz in/out, expected steps, the leak and the Perron pairs of Â (centralities()).");
    m.def("infsa_perron", &perron_dense, "B"_a, "left"_a, "rel_width"_a, "max_iter"_a,
          "CW-certified Perron pair of a dense B >= 0 (perron()).");
    m.def("infsa_perron_relu", &perron_relu, "Q"_a, "K"_a, "left"_a, "rel_width"_a, "max_iter"_a,
          "tile"_a,
          "CW-certified Perron pair of A+ = ReLU(Q K^T / d_h), matrix-free (ReluKernelOp).");
    m.def("infsa_linear", &linear, "Q"_a, "K"_a, "V"_a, "gamma"_a, "eps"_a,
          "Linear-InfSA (linear_infsa) and its weights a (linear_infsa_weights).");
    m.def("infsa_fidelity", &fidelity_one, "Q"_a, "K"_a, "gamma"_a, "eps"_a, "matrix_free"_a,
          "with_right"_a, "Cosines of Linear-InfSA's weights with the Perron/Katz vectors.");
    m.def(
        "infsa_fidelity_table",
        [](std::vector<std::string> families, std::vector<long> Ns, long d_h, long heads,
           long draws, double mu, double gamma, double eps, std::uint64_t seed, bool matrix_free,
           bool with_right, const std::string& report, const std::string& command) {
            FidelitySpec s;
            s.families = std::move(families), s.Ns = std::move(Ns), s.d_h = d_h;
            s.heads = heads, s.draws = draws, s.mu = mu, s.gamma = gamma, s.eps = eps;
            s.seed = seed, s.matrix_free = matrix_free, s.with_right = with_right;
            return fidelity_generated(std::move(s), report, command);
        },
        "families"_a, "Ns"_a, "d_h"_a, "heads"_a, "draws"_a, "mu"_a, "gamma"_a, "eps"_a, "seed"_a,
        "matrix_free"_a, "with_right"_a, "report"_a = "", "command"_a = "",
        "The records of `attnspec fidelity` on generated data; with `report`, also its HDF5 "
        "report (as `--out`), written atomically.");
    m.def("infsa_draw_family", &draw, "family"_a, "N"_a, "d"_a, "mu"_a, "seed"_a,
          "Seeded (Q, K) of a family: gaussian, shared-mean, independent-means (draw_family).");
    m.def("instance_seed", &instance_seed, "master"_a, "i"_a,
          "The seed of instance i of a run with master seed `master` (base/random.hpp).");
}

}  // namespace attnspec::python
