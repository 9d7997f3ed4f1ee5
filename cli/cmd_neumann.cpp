// attnspec neumann: InfSA Neumann-kernel analysis of one (sample, head): affinity norms, kernel
// invariants, truncation table, centralities and the absorbing-chain reading (proofs/infsa_*.md).
// Options -> Â (generated or io/qk_input) -> analyze_neumann -> report/infsa_sections -> text or
// JSON.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "attnspec/base/format.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/neumann_analysis.hpp"
#include "attnspec/io/qk_input.hpp"
#include "attnspec/report/infsa_sections.hpp"
#include "attnspec/report/names.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "dataset_option.hpp"
#include "memory_option.hpp"

namespace attnspec::cli {
namespace {

struct NeumannCli {
    CommonOptions common;
    std::string input, family = "gaussian", affinity_name = "relu", orders = "1,2,4,8,16,32";
    std::string max_memory, dataset;
    long tokens = 128, dh = 64;
    double gamma = 0.95, eps = 1e-6, mu = 1.0, target = 1e-6;
};

// --help: the synopsis and the two examples after the options (docs/cli/ holds the rest).
// clang-format off
const char kSynopsis[] = "[--input FILE | --dataset NAME[:l[:h[:s]]] | --tokens N --dh d --family F] [--gamma g] [--json]";
const char kHelp[] =
    "examples:\n"
    "  attnspec neumann --tokens 256 --dh 64 --family shared-mean --gamma 0.9\n"
    "  attnspec neumann --dataset minilm-l6:0:0   # head 0 of layer 0, every sentence\n";
// clang-format on

void declare(po::options_description& desc, NeumannCli& o) {
    o.common.seed = 20251;
    auto add = desc.add_options();
    add("input", po::value(&o.input), "HDF5 file with Q, K (N x d_h), optional A_hat, gamma");
    add("dataset", po::value(&o.dataset), dataset_option_help("real Q, K with biases").c_str());
    add("tokens", count_value(&o.tokens, "--tokens", 1, kMaxDim),
        "N for generated Q, K (default 128)");
    add("dh", count_value(&o.dh, "--dh", 1, kMaxDim), "d_h for generated Q, K (default 64)");
    add("family", po::value(&o.family)->default_value(o.family),
        "gaussian, shared-mean or independent-means");
    add("mu", real_value(&o.mu, "--mu", -1e300, 1e300), "mean strength of the family (default 1)");
    add_common_options(desc, o.common, "neumann.h5", kSeed);
    add("gamma", real_value(&o.gamma, "--gamma", -1e300, 1e300),
        "gamma in (0, 1) (default: the file's, else 0.95)");
    add("eps", real_value(&o.eps, "--eps", 0, 1e300),
        "epsilon of the Frobenius normalisation (default 1e-6)");
    add("affinity", po::value(&o.affinity_name)->default_value(o.affinity_name),
        "relu (the code's form) or softmax");
    add("orders", po::value(&o.orders)->default_value(o.orders),
        "truncation orders K for the table");
    add("target", real_value(&o.target, "--target", 0, 1e300, true),
        "report the K whose error reaches this (default 1e-6)");
    add_memory_option(desc, o.max_memory);
    add_common_options(desc, o.common, "neumann.h5", kOut | kNoReport | kJson);
}

std::vector<int> parse_orders(const std::string& s) {
    std::vector<int> Ks;
    std::stringstream ss(s);
    std::string p;
    while (std::getline(ss, p, ',')) {
        char* end = nullptr;
        const long k = std::strtol(p.c_str(), &end, 10);
        if (p.empty() || *end || k < 0 || k > 1000)
            fail_usage("--orders expects integers in [0, 1000], got '" + s + "'");
        Ks.push_back(int(k));
    }
    return Ks;
}

// "[lo, hi]" with the digits the enclosure supports.
std::string interval_text(const Interval& iv) {
    const int p = enclosure_digits(iv.lo, iv.hi);
    return "[" + format_number(iv.lo, p) + ", " + format_number(iv.hi, p) + "]";
}

void print_text(const NeumannAnalysis& a, const NeumannSource& src) {
    const NeumannInvariants& iv = a.invariants;
    const Centralities& c = a.centralities;
    std::cout << std::setprecision(6) << "InfSA Neumann kernel, N = " << a.n
              << ", gamma = " << a.gamma << " (" << src.source << ")\n"
              << "  ||A||_F = " << a.norms.frob << "   ||A||_2 in " << interval_text(a.norms.norm2)
              << "   rho(A) in " << interval_text(c.left.rho_enc) << "\n"
              << "  residual ||(I - gA)N - I||_F = " << iv.residual << " (LU bound "
              << iv.residual_bound << ")\n"
              << "  min N_ij = " << iv.min_entry << ", min N_ii - 1 = " << iv.min_diag_minus_1
              << ", ||AN - NA||_F = " << iv.commutator << " (entry tolerance " << iv.entry_tol
              << ")\n"
              << "  truncation   K   ||N - N_K||_2   bound\n";
    for (const auto& r : a.truncation)
        std::cout << "             " << std::setw(3) << r.K << "   " << std::setw(12) << r.error
                  << "   " << r.bound << (r.holds() ? "" : "   VIOLATED") << "\n";
    std::cout << "  K for error <= " << a.target << ": " << a.K_for_target << "\n"
              << "  Katz in max " << c.katz_in.maxCoeff() << ", Katz out max "
              << c.katz_out.maxCoeff() << ", expected steps max " << c.expected_steps.maxCoeff()
              << "\n"
              << "  absorbing chain: min leak R = " << c.min_leak
              << (c.probabilistic ? " >= 0: N_ij = expected visits to j from i\n"
                                  : " < 0: the probabilistic reading does NOT hold\n");
    if (a.closure_times_V.size()) std::cout << "  ||C V||_F = " << a.closure_times_V.norm() << "\n";
}

// Refuses the options that do not apply to the source (--dataset, --input or generated data);
// for generated data, the whole problem from the parsed sizes, before drawing anything.
void check_sources(const NeumannCli& o, const po::variables_map& vm) {
    const std::vector<std::string> generated = {"tokens", "dh", "family", "mu", "seed"};
    if (!o.dataset.empty())
        reject_with_dataset(vm, "neumann", generated);
    else if (!o.input.empty())
        reject_given(vm, "neumann", generated, "to --input (it describes generated data)");
    else
        check_neumann_memory(double(o.tokens), double(o.dh));
}

// One selected head's analysis (its source names the head).
struct HeadNeumann {
    NeumannSource src;
    NeumannAnalysis a;
};

void output_dataset(const Invocation& inv, const NeumannCli& o, const DatasetSelector& sel,
                    const std::vector<SelectedHead>& heads, const std::vector<HeadNeumann>& rs,
                    const std::string& report) {
    const std::string bias_form = qk_bias_form(heads);
    if (!report.empty()) {
        ReportWriter w(report, provenance(inv, o.common.seed));
        record_dataset(w.root(), sel, labels_of(heads), bias_form);
        H5Group all = w.root().group(names::dataset_run::kHeads);
        for (std::size_t k = 0; k < heads.size(); ++k) {
            H5Group g = selected_head_group(all, heads[k], k);
            write_neumann_section(g, rs[k].a, rs[k].src);
        }
        w.commit();
        if (!o.common.json) log("report written to " + w.target());
    }
    if (!o.common.json) {
        std::cout << "--dataset " << sel.describe() << ": " << rs.size() << " head(s); Q and K "
                  << bias_form << "\n";
        for (const HeadNeumann& r : rs) print_text(r.a, r.src);
        return;
    }
    JsonWriter j(std::cout);
    j.begin_object();
    json_header(j, "neumann");
    json_dataset(j, sel, bias_form);
    j.key("heads").begin_array();
    for (std::size_t k = 0; k < rs.size(); ++k) {
        j.begin_object().kv("label", heads[k].label);
        write_neumann_json(j, rs[k].a, rs[k].src);
        j.end_object();
    }
    j.end_array().end_object();
    j.finish();
}

// neumann --dataset: the analysis of every selected head and sentence on its real Q, K.
int run_neumann_dataset(const Invocation& inv, const NeumannCli& o,
                        const NeumannAnalysisOptions& opt, AffinityKind kind,
                        const std::string& report) {
    check_neumann_options(opt);  // gamma, target before reading
    const DatasetSelector sel = dataset_selector(o.dataset);
    const std::vector<SelectedHead> heads = load_selected_heads(sel);
    std::vector<Eigen::MatrixXd> Qs, Ks;
    dataset_qk(heads, Qs, Ks);
    std::vector<HeadNeumann> rs;
    for (std::size_t k = 0; k < heads.size(); ++k) {
        check_neumann_memory(double(Qs[k].rows()), double(Qs[k].cols()));
        Affinity af = affinity(Qs[k], Ks[k], AffinityOptions{kind, o.eps});
        NeumannSource src{"dataset:" + heads[k].label, to_string(kind), o.eps, af.frob_plus};
        rs.push_back({src, analyze_neumann(af.A_hat, opt, Eigen::MatrixXd())});
    }
    output_dataset(inv, o, sel, heads, rs, report);
    return 0;
}

}  // namespace

int run_neumann(const Invocation& inv) {
    NeumannCli o;
    po::options_description desc("neumann options");
    declare(desc, o);
    po::variables_map vm;
    if (!parse(inv, "neumann", kSynopsis, kHelp, desc, vm)) return 0;
    apply_memory_option(o.max_memory);
    check_sources(o, vm);
    const AffinityKind kind = affinity_kind_from_string(o.affinity_name);
    NeumannAnalysisOptions opt;
    opt.orders = parse_orders(o.orders);
    if (!(o.target > 0)) fail_usage("neumann: --target must be > 0");
    opt.target = o.target;
    opt.gamma = o.gamma;
    const std::string report = report_target(o.common, "neumann.h5", {o.input});
    if (!o.dataset.empty()) return run_neumann_dataset(inv, o, opt, kind, report);
    const bool json = o.common.json;
    NeumannSource src{"", to_string(kind), o.eps, NAN};
    Eigen::MatrixXd A_hat, V, Q, K;
    if (!o.input.empty()) {
        QKInputOptions qo;
        qo.read_v = qo.accept_affinity = true;
        qo.read_gamma = !vm.count("gamma");  // --gamma overrides the file's attribute
        QKInput in = load_qk_input(o.input, qo);
        if (in.gamma) opt.gamma = *in.gamma;
        if (!in.Vs.empty()) V = std::move(in.Vs[0]);
        if (in.has_affinity())
            A_hat = std::move(in.A_hat), src.affinity = "given";
        else
            Q = std::move(in.Qs[0]), K = std::move(in.Ks[0]);
        src.source = "input:" + o.input;
    } else {
        draw_family(o.family, o.tokens, o.dh, o.mu, o.common.seed, Q, K);
        src.source = "generated:" + o.family + ",mu=" + std::to_string(o.mu);
    }
    check_neumann_options(opt);  // gamma (from the file or --gamma) before building Â
    check_neumann_memory(double(A_hat.size() ? A_hat.rows() : Q.rows()), double(Q.cols()),
                         double(V.cols()));
    if (A_hat.size() == 0) {
        Affinity a = affinity(Q, K, AffinityOptions{kind, o.eps});
        A_hat = std::move(a.A_hat);
        src.frob_plus = a.frob_plus;
    }
    if (!json) {
        const double n = double(A_hat.rows());
        std::ostringstream est;
        est << std::setprecision(3) << "N = " << A_hat.rows()
            << ", LU of I - gamma A_hat; estimate "
            << human_bytes(neumann_memory_bytes(n, 0, double(V.cols()))) << " of memory, "
            << neumann_flops(n, opt.orders) << " flops (operation count)";
        log(est.str());
    }
    const NeumannAnalysis a = analyze_neumann(A_hat, opt, V);
    if (!report.empty()) {
        ReportWriter w(report, provenance(inv, o.common.seed));
        write_neumann_section(w.root(), a, src);
        w.commit();
        if (!json) log("report written to " + w.target());
    }
    if (json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "neumann");
        write_neumann_json(j, a, src);
        j.end_object();
        j.finish();
    } else {
        print_text(a, src);
    }
    return 0;
}

}  // namespace attnspec::cli
