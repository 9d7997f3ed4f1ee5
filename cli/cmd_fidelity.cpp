// attnspec fidelity: how well Linear-InfSA's weights a approximate the Perron / Katz vectors of the
// InfSA affinity, over data families, draws, heads and N (proofs/infsa_fidelity.md).
// Options -> fidelity_table (generated, or io/qk_input blocks) -> report/infsa_sections -> text or
// JSON.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "attnspec/base/format.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/infsa/fidelity_table.hpp"
#include "attnspec/io/qk_input.hpp"
#include "attnspec/report/infsa_sections.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "dataset_option.hpp"
#include "memory_option.hpp"

namespace attnspec::cli {
namespace {

struct FidelityCli {
    CommonOptions common;
    FidelitySpec spec;
    std::string tokens = "256", families = "gaussian,shared-mean,independent-means", input;
    std::string max_memory, dataset;
};

// --help: the synopsis and the two examples after the options (docs/cli/ holds the rest).
// clang-format off
const char kSynopsis[] = "[--tokens N,...] [--dh d] [--heads H] [--family F,...] [--matrix-free] [--json]";
const char kHelp[] =
    "examples:\n"
    "  attnspec fidelity --tokens 128,512 --dh 64 --draws 5 --family gaussian,shared-mean\n"
    "  attnspec fidelity --dataset minilm-l6 --no-report   # every layer, head and sentence\n";
// clang-format on

void declare(po::options_description& desc, FidelityCli& o) {
    FidelitySpec& s = o.spec;
    o.common.seed = s.seed;
    auto add = desc.add_options();
    add("tokens", po::value(&o.tokens)->default_value(o.tokens), "token counts N, comma separated");
    add("dh", count_value(&s.d_h, "--dh", 1, kMaxDim), "head dimension d_h (default 64)");
    add("heads", count_value(&s.heads, "--heads", 1, kMaxDim),
        "heads per draw, or per --input (default 1)");
    add("family", po::value(&o.families)->default_value(o.families),
        "data families, comma separated");
    add("mu", real_value(&s.mu, "--mu", -1e300, 1e300), "mean strength of the family (default 1)");
    add("draws", count_value(&s.draws, "--draws", 1, kMaxDim), "draws per (family, N) (default 3)");
    add_common_options(desc, o.common, "fidelity.h5", kSeed);
    add("gamma", real_value(&s.gamma, "--gamma", 0, 1, true), "gamma in (0, 1) (default 0.95)");
    add("eps", real_value(&s.eps, "--eps", 0, 1e300),
        "epsilon of the normalisations (default 1e-6)");
    add("matrix-free", po::bool_switch(&s.matrix_free),
        "tiled Perron iteration, never N x N (left vector)");
    add("right", po::bool_switch(&s.with_right), "with --matrix-free: also the right vector");
    add("input", po::value(&o.input), "HDF5 file with Q and K (N x heads*d_h)");
    add("dataset", po::value(&o.dataset), dataset_option_help("real Q, K with biases").c_str());
    add_memory_option(desc, o.max_memory);
    add_common_options(desc, o.common, "fidelity.h5", kOut | kNoReport | kJson);
}

// A comma list; an empty item ("1,,2", a trailing comma) is a usage error naming `option`.
std::vector<std::string> split(const std::string& s, const std::string& option) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string p;
    while (std::getline(ss, p, ',')) {
        if (p.empty())
            fail_usage(option + " has an empty item in '" + s + "' (give a comma list like 1,2)");
        out.push_back(p);
    }
    if (!s.empty() && s.back() == ',')
        fail_usage(option + " has an empty item in '" + s + "' (give a comma list like 1,2)");
    return out;
}

// Usage errors for the options (the library re-checks its spec in its own terms).
void check_options(FidelityCli& o, const po::variables_map& vm) {
    if (!o.dataset.empty())
        reject_with_dataset(vm, "fidelity",
                            {"tokens", "dh", "family", "mu", "draws", "seed", "heads"});
    else if (!o.input.empty())
        reject_given(vm, "fidelity", {"tokens", "dh", "family", "mu", "draws", "seed"},
                     "to --input (it describes generated data)");
    FidelitySpec& s = o.spec;
    if (!(s.gamma < 1)) fail_usage("fidelity: --gamma must lie in (0, 1)");
    s.Ns.clear();
    for (const auto& t : split(o.tokens, "--tokens"))
        s.Ns.push_back(parse_dims(t, 1, "--tokens")[0]);
    s.families = split(o.families, "--family");
    if (s.Ns.empty() || s.families.empty())
        fail_usage("fidelity: --tokens and --family must not be empty");
    for (const auto& f : s.families)
        if (f != "gaussian" && f != "shared-mean" && f != "independent-means")
            fail_usage("fidelity: unknown family '" + f +
                       "' (gaussian, shared-mean, independent-means)");
    s.seed = o.common.seed;
}

void print_text(const FidelityTable& t, const FidelitySpec& s) {
    std::cout << "Linear-InfSA fidelity (" << (s.matrix_free ? "matrix-free" : "dense")
              << ", gamma " << format_number(s.gamma) << ", d_h " << s.d_h
              << (std::isnan(s.mu) ? "" : ", mu " + format_number(s.mu))
              << "): cos(a, .) min / median / mean / max\n";
    std::cout << std::left << std::setw(18) << "family" << std::setw(8) << "N" << std::setw(6)
              << "n";
    for (auto* m : kFidelityMetrics) std::cout << std::setw(30) << m;
    std::cout << "\n" << std::fixed << std::setprecision(4);
    for (const auto& g : t.groups) {
        std::cout << std::setw(18) << g.family << std::setw(8) << g.N << std::setw(6)
                  << g.records.size();
        for (const FidelityStats& st : g.stats) {
            std::ostringstream c;
            c << std::fixed << std::setprecision(4);
            if (st.count)
                c << st.min << "/" << st.median << "/" << st.mean << "/" << st.max;
            else
                c << "-";
            std::cout << std::setw(30) << c.str();
        }
        std::cout << "\n";
    }
}

// Memory (upper estimate of the largest record) and time (operation count / a measured rate) of a
// generated run on stderr, then the memory refusal (65) when it is above --max-memory.
void log_estimate(const FidelitySpec& s) {
    const FidelityEstimate e = fidelity_estimate(s);
    const double rate = measured_flop_rate();
    std::ostringstream os;
    os << std::setprecision(3) << "estimate: memory " << human_bytes(e.bytes)
       << " per instance (budget " << human_bytes(memory_limit_bytes()) << "), " << e.flops
       << " flops (operation count";
    if (s.matrix_free)
        os << ", assuming the cap of " << e.iterations << " Perron iterations per vector";
    os << "), " << (s.matrix_free ? "at most about " : "about ") << e.flops / rate << " s at "
       << rate / 1e9 << " GFLOP/s measured on one 512 x 64 tiled pass";
    log(os.str());
    check_fidelity_memory(s);
}

// Q, K blocks given by --input or --dataset (then the selector, labels and bias form too).
struct GivenBlocks {
    std::vector<Eigen::MatrixXd> Qs, Ks;
    std::string dtype;  // stored type of the arrays
    std::optional<DatasetSelector> sel;
    std::vector<std::string> labels;
    std::string bias_form;
};

// Reads the blocks and sets the spec's d_h from the data (mu does not apply to given data).
GivenBlocks load_blocks(FidelityCli& o) {
    GivenBlocks g;
    if (!o.dataset.empty()) {
        g.sel = dataset_selector(o.dataset);
        const std::vector<SelectedHead> heads = load_selected_heads(*g.sel);
        dataset_qk(heads, g.Qs, g.Ks);
        g.dtype = find_dataset(g.sel->name).dtype;
        g.labels = labels_of(heads);
        g.bias_form = qk_bias_form(heads);
    } else {
        QKInputOptions qo;
        qo.heads = o.spec.heads;
        qo.read_gamma = false;
        QKInput in = load_qk_input(o.input, qo);
        g.Qs = std::move(in.Qs), g.Ks = std::move(in.Ks), g.dtype = in.dtype;
    }
    o.spec.d_h = static_cast<long>(g.Qs[0].cols()), o.spec.mu = NAN;
    return g;
}

}  // namespace

int run_fidelity(const Invocation& inv) {
    FidelityCli o;
    po::options_description desc("fidelity options");
    declare(desc, o);
    po::variables_map vm;
    if (!parse(inv, "fidelity", kSynopsis, kHelp, desc, vm)) return 0;
    apply_memory_option(o.max_memory);
    check_options(o, vm);
    if (o.input.empty() && o.dataset.empty())
        log_estimate(o.spec);  // refuses above --max-memory, before any draw
    const FidelitySpec& spec = o.spec;
    const bool json = o.common.json;
    const std::string report = report_target(o.common, "fidelity.h5", {o.input});
    FidelityTable t;
    GivenBlocks given;
    if (!o.input.empty() || !o.dataset.empty()) {
        given = load_blocks(o);
        t = fidelity_table(given.Qs, given.Ks, spec);
    } else {
        Progress prog("fidelity", fidelity_instance_count(spec), !json);
        o.spec.progress = [&](long done) { prog.update(done); };
        t = fidelity_table(spec);
        prog.done();
    }
    if (!report.empty()) {
        ReportWriter w(report, provenance(inv, spec.seed));
        write_fidelity_section(w.root(), t, spec, given.dtype);
        if (given.sel) record_dataset(w.root(), *given.sel, given.labels, given.bias_form);
        w.commit();
        if (!json) log("report written to " + w.target());
    }
    if (json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "fidelity");
        if (given.sel) json_dataset(j, *given.sel, given.bias_form);
        write_fidelity_json(j, t, spec);
        j.end_object();
        j.finish();
    } else {
        if (given.sel)
            std::cout << "--dataset " << given.sel->describe() << ": " << given.labels.size()
                      << " head(s) x sentence(s); Q and K " << given.bias_form << "\n";
        print_text(t, spec);
    }
    return 0;
}

}  // namespace attnspec::cli
