// attnspec fidelity: how well Linear-InfSA's weights a approximate the Perron / Katz vectors of the
// InfSA affinity, over data families, draws, heads and N (proofs/infsa_fidelity.md).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/centrality.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/base/random.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {
namespace {

struct Record {
    std::string family;
    long N = 0, head = 0, draw = 0;
    std::uint64_t seed = 0;
    Fidelity f;
};

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string p;
    while (std::getline(ss, p, ',')) if (!p.empty()) out.push_back(p);
    return out;
}

struct Stats {
    double min = NAN, median = NAN, mean = NAN, max = NAN;
    long count = 0;
};
Stats stats(std::vector<double> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
    Stats s;
    s.count = long(v.size());
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.min = v.front(), s.max = v.back();
    s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    double t = 0;
    for (double x : v) t += x;
    s.mean = t / double(v.size());
    return s;
}

const char* kMetrics[] = {"cos_left", "cos_right", "cos_katz_in", "cos_katz_out"};
double metric(const Fidelity& f, int m) {
    return m == 0 ? f.cos_left : m == 1 ? f.cos_right : m == 2 ? f.cos_katz_in : f.cos_katz_out;
}

}  // namespace

int run_fidelity(const Invocation& inv) {
    po::options_description desc("fidelity options");
    std::string tokens = "256", families = "gaussian,shared-mean,independent-means", input, out;
    long dh = 64, heads = 1, draws = 3;
    double mu = 1.0, gamma = 0.95, eps = 1e-6;
    std::uint64_t seed = 20251;
    bool json = false, matrix_free = false, right = false, no_report = false;
    desc.add_options()
        ("tokens", po::value(&tokens)->default_value(tokens), "token counts N, comma separated")
        ("dh", po::value(&dh)->default_value(dh), "head dimension d_h")
        ("heads", po::value(&heads)->default_value(heads), "heads per draw (independent (Q, K) each)")
        ("family", po::value(&families)->default_value(families),
         "data families: gaussian, shared-mean, independent-means (comma separated)")
        ("mu", po::value(&mu)->default_value(mu), "mean strength for shared-mean / independent-means")
        ("draws", po::value(&draws)->default_value(draws), "draws per (family, N)")
        ("seed", po::value(&seed)->default_value(seed), "master seed (each instance derives its own)")
        ("gamma", po::value(&gamma)->default_value(gamma), "gamma in (0, 1)")
        ("eps", po::value(&eps)->default_value(eps, "1e-6"), "epsilon of the Frobenius / L1 normalisations")
        ("matrix-free", po::bool_switch(&matrix_free), "tiled Perron iteration, never N x N (left vector only; Katz skipped)")
        ("right", po::bool_switch(&right), "with --matrix-free: also the right Perron vector")
        ("input", po::value(&input), "HDF5 file with Q and K (N x heads*d_h); --heads splits the columns")
        ("out", po::value(&out), "report path (default reports/out/fidelity.h5)")
        ("no-report", po::bool_switch(&no_report), "do not write the HDF5 report")
        ("json", po::bool_switch(&json), "one JSON document on stdout");
    po::variables_map vm;
    if (!parse(inv, "fidelity", "[--tokens N,...] [--dh d] [--heads H] [--family F,...] [--matrix-free] [--json]",
               "Cosine between Linear-InfSA's weights a and the left Perron vector v of Â (what a\n"
               "approximates), the right Perron vector u, Katz-in C^T 1 and Katz-out C 1, per draw and head;\n"
               "prints min / median / mean / max per (family, N). Dense mode needs O(N^2) memory and an LU\n"
               "(O(N^3)); --matrix-free works in tiles of Q K^T (O(N d_h) memory) and certifies rho(Â) with\n"
               "Collatz-Wielandt bounds.\n\nexamples:\n"
               "  attnspec fidelity --tokens 128,512 --dh 64 --draws 5 --family gaussian,shared-mean\n"
               "  attnspec fidelity --tokens 65536 --dh 64 --draws 1 --family shared-mean --matrix-free --json\n"
               "  attnspec fidelity --input qk.h5 --heads 12 --json   # real activations\n",
               desc, vm))
        return 0;
    if (!(gamma > 0 && gamma < 1)) fail_usage("fidelity: --gamma must lie in (0, 1)");
    if (dh <= 0 || heads <= 0 || draws <= 0) fail_usage("fidelity: --dh, --heads and --draws must be positive");
    if (!(eps >= 0)) fail_usage("fidelity: --eps must be >= 0");
    std::vector<long> Ns;
    for (const auto& t : split(tokens)) Ns.push_back(parse_dims(t, 1, "--tokens")[0]);
    const auto fams = split(families);
    if (Ns.empty() || fams.empty()) fail_usage("fidelity: --tokens and --family must not be empty");
    for (const auto& f : fams)
        if (f != "gaussian" && f != "shared-mean" && f != "independent-means")
            fail_usage("fidelity: unknown family '" + f + "' (gaussian, shared-mean, independent-means)");
    if (!matrix_free)
        for (long N : Ns) check_allocation(3 * 8.0 * double(N) * double(N), 8.0 * (1ull << 30), "dense fidelity at N = " + std::to_string(N) + " (use --matrix-free)");

    std::vector<Record> recs;
    auto one = [&](const std::string& fam, long N, long h, long dr, std::uint64_t s, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K) {
        Record r{fam, N, h, dr, s, {}};
        r.f = matrix_free ? fidelity_matrix_free(Q, K, gamma, eps, right) : fidelity_dense(Q, K, gamma, eps);
        recs.push_back(std::move(r));
    };
    if (!input.empty()) {
        H5Reader rd(input);
        const Eigen::MatrixXd Q = rd.matrix("Q"), K = rd.matrix("K");
        if (Q.rows() != K.rows() || Q.cols() != K.cols()) fail_data(input + ": Q and K shapes differ");
        if (Q.cols() % heads) fail_data(input + ": " + std::to_string(Q.cols()) + " columns do not split into " + std::to_string(heads) + " heads");
        const long d = Q.cols() / heads;
        for (long h = 0; h < heads; ++h)
            one("input", long(Q.rows()), h, 0, 0, Q.middleCols(h * d, d), K.middleCols(h * d, d));
    } else {
        const long total = long(fams.size() * Ns.size()) * draws * heads;
        Progress prog("fidelity", total, !json);
        std::uint64_t i = 0;
        for (const auto& fam : fams)
            for (long N : Ns)
                for (long dr = 0; dr < draws; ++dr)
                    for (long h = 0; h < heads; ++h, ++i) {
                        const std::uint64_t s = instance_seed(seed, i);
                        Eigen::MatrixXd Q, K;
                        draw_family(fam, N, dh, mu, s, Q, K);
                        one(fam, N, h, dr, s, Q, K);
                        prog.update(long(i) + 1);
                    }
        prog.done();
    }

    // Summaries per (family, N).
    struct Group { std::string fam; long N; std::vector<const Record*> rs; };
    std::vector<Group> groups;
    for (const auto& r : recs) {
        auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.fam == r.family && g.N == r.N; });
        if (it == groups.end()) groups.push_back({r.family, r.N, {}}), it = groups.end() - 1;
        it->rs.push_back(&r);
    }
    auto group_stats = [&](const Group& g, int m) {
        std::vector<double> v;
        for (auto* r : g.rs) v.push_back(metric(r->f, m));
        return stats(v);
    };
    if (!no_report) {
        ReportWriter w(report_path(out, "fidelity.h5"), provenance(inv, seed));
        H5Group G = w.root().group("fidelity");
        G.attr("gamma", gamma), G.attr("eps", eps), G.attr("mu", mu), G.attr("d_h", std::int64_t(dh));
        G.attr("mode", matrix_free ? "matrix-free" : "dense");
        G.attr("affinity", "relu: ReLU(QK^T/d_h)/(||.||_F + eps)");
        G.attr("weights", "Linear-InfSA a_j = s_j/(sum s + eps)");
        std::vector<std::string> fam;
        std::vector<std::int64_t> N, head, draw, sd, iters;
        std::vector<double> cols[4], rlo, rhi;
        for (const auto& r : recs) {
            fam.push_back(r.family), N.push_back(r.N), head.push_back(r.head), draw.push_back(r.draw);
            sd.push_back(std::int64_t(r.seed)), iters.push_back(r.f.left.iterations);
            for (int m = 0; m < 4; ++m) cols[m].push_back(metric(r.f, m));
            rlo.push_back(r.f.rho_hat.lo), rhi.push_back(r.f.rho_hat.hi);
        }
        G.write("family", fam), G.write("N", N), G.write("head", head), G.write("draw", draw);
        G.write("seed", sd), G.write("perron_iterations", iters), G.write("rho_hat_lo", rlo), G.write("rho_hat_hi", rhi);
        for (int m = 0; m < 4; ++m) G.write(kMetrics[m], cols[m]);
        w.commit();
        if (!json) log("report written to " + w.target());
    }
    if (json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "fidelity");
        j.kv("mode", matrix_free ? "matrix-free" : "dense").kv("gamma", gamma).kv("eps", eps).kv("mu", mu).kv("d_h", std::int64_t(dh));
        j.key("summary").begin_array();
        for (const auto& g : groups) {
            j.begin_object().kv("family", g.fam).kv("N", std::int64_t(g.N)).kv("count", std::int64_t(g.rs.size()));
            for (int m = 0; m < 4; ++m) {
                const Stats s = group_stats(g, m);
                j.key(kMetrics[m]).begin_object().kv("min", s.min).kv("median", s.median).kv("mean", s.mean).kv("max", s.max).end_object();
            }
            j.end_object();
        }
        j.end_array();
        j.key("records").begin_array();
        for (const auto& r : recs) {
            j.begin_object().kv("family", r.family).kv("N", std::int64_t(r.N)).kv("head", std::int64_t(r.head)).kv("draw", std::int64_t(r.draw)).kv("seed", r.seed);
            for (int m = 0; m < 4; ++m) j.kv(kMetrics[m], metric(r.f, m));
            j.key("rho_hat").begin_array().value(r.f.rho_hat.lo).value(r.f.rho_hat.hi).end_array();
            j.kv("perron_converged", r.f.left.converged).kv("perron_vec_error", r.f.left.vec_error).end_object();
        }
        j.end_array().end_object();
        j.finish();
    } else {
        std::cout << "Linear-InfSA fidelity (" << (matrix_free ? "matrix-free" : "dense") << ", gamma " << gamma
                  << ", d_h " << dh << ", mu " << mu << "): cos(a, .) min / median / mean / max\n";
        std::cout << std::left << std::setw(18) << "family" << std::setw(8) << "N" << std::setw(6) << "n";
        for (auto* m : kMetrics) std::cout << std::setw(30) << m;
        std::cout << "\n" << std::fixed << std::setprecision(4);
        for (const auto& g : groups) {
            std::cout << std::setw(18) << g.fam << std::setw(8) << g.N << std::setw(6) << g.rs.size();
            for (int m = 0; m < 4; ++m) {
                const Stats s = group_stats(g, m);
                std::ostringstream c;
                c << std::fixed << std::setprecision(4);
                if (s.count) c << s.min << "/" << s.median << "/" << s.mean << "/" << s.max;
                else c << "-";
                std::cout << std::setw(30) << c.str();
            }
            std::cout << "\n";
        }
    }
    return 0;
}


}  // namespace attnspec::cli
