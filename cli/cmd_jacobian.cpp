// attnspec jacobian: dense J (weights) or J_X (input) of attention heads, from an HDF5 input in
// the attention input schema or a seeded random instance; prints shape, norms and timing; writes
// the inputs and J to a report. Computation: attention/jacobian_analysis.hpp; report section:
// io/jacobian_io.hpp; input: io/attention_input.hpp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>

#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/io/attention_input.hpp"
#include "attnspec/io/jacobian_io.hpp"
#include "attnspec/io/spectrum_io.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "dataset_option.hpp"
#include "engine_progress.hpp"
#include "memory_option.hpp"

namespace attnspec::cli {
namespace {

struct Options {
    CommonOptions common;
    std::string input, random, wrt = "weights", scale = "1", correction = "none";
    std::string token_dist = "gaussian", max_memory, store_limit = "16MiB", svd, bias = "keep";
    bool store_j = false, quiet = false;
    std::string certify = "auto";
    long heads = 1, full_upto = 512;
    double weight_scale = 1.0;
    std::string dataset;  // --dataset selector (sentence 0 unless given)
};

const char* kSynopsis =
    "(--input F.h5 | --random N,D,d [--seed S] | --dataset NAME[:l[:h[:s]]]) [options]";
const char* kHelp =
    "examples:\n"
    "  attnspec jacobian --random 128,384,32 --seed 1 --token-dist layernorm --svd auto\n"
    "  attnspec jacobian --dataset minilm-l6:0:0 --svd auto\n";

void declare_options(po::options_description& desc, Options& o) {
    desc.add_options()("input", po::value(&o.input),
                       "HDF5 heads file (the attention input schema)")(
        "bias", po::value(&o.bias), "keep (default) or drop the input's biases")(
        "random", po::value(&o.random), "random instance of sizes N,D,d, e.g. 128,384,32")(
        "dataset", po::value(&o.dataset),
        dataset_option_help("heads on sentence 0 unless given").c_str())(
        "token-dist", po::value(&o.token_dist), "random X rows: gaussian (default) or layernorm")(
        "weight-scale", real_value(&o.weight_scale, "--weight-scale", 0, 1e300, true),
        "random weights N(0, w^2/D) (default w = 1)")("wrt", po::value(&o.wrt),
                                                      "weights (J, default) or input (J_X)")(
        "scale", po::value(&o.scale), "logit scale s: 1 (default) or invsqrt (1/sqrt(d))")(
        "correction", po::value(&o.correction),
        "SpecA correction: none (default), lambda:<l> or svd")(
        "heads", count_value(&o.heads, "--heads", 1, kMaxDim),
        "number of heads H sharing X (default 1)")("store-j", po::bool_switch(&o.store_j),
                                                   "write J into the report whatever its size")(
        "store-limit", po::value(&o.store_limit), "write J only up to this size (default 16MiB)")(
        "quiet,q", po::bool_switch(&o.quiet), "no progress on stderr (also off with --json)");
    add_memory_option(desc, o.max_memory);
    add_common_options(desc, o.common, "jacobian.h5");
    desc.add_options()("svd", po::value(&o.svd),
                       "also sigma_max, sigma_min, kappa(J): full, extremal or auto")(
        "full-upto", count_value(&o.full_upto, "--full-upto", 1, kMaxDim),
        "--svd auto: all eigenvalues up to R rows (default 512)")(
        "certify", po::value(&o.certify),
        "with --svd: certify sigma_min: auto (default), always, never");
}

// The heads: read from --input, or a seeded random layer sharing X.
AttentionHeads load(const Options& o, double max_bytes) {
    if (!o.dataset.empty()) return selected_attention_heads(dataset_selector(o.dataset, true));
    if (!o.input.empty()) {
        AttentionHeads in = load_attention_heads(o.input);
        if (o.heads != 1 && o.heads != static_cast<long>(in.size()))
            fail_data("--heads " + std::to_string(o.heads) + " but " + o.input + " holds " +
                      std::to_string(in.size()) + " head(s)");
        return in;
    }
    const auto dims = parse_dims(o.random, 3, "--random");
    RandomSpec rs;
    rs.N = dims[0], rs.D = dims[1], rs.d = dims[2], rs.H = o.heads, rs.seed = o.common.seed;
    rs.token_dist = o.token_dist, rs.weight_scale = o.weight_scale;
    check_allocation(8.0 * rs.N * rs.D + 24.0 * rs.D * rs.d * rs.H, max_bytes, "the random input",
                     "max_bytes");
    return attention_heads(random_multihead(rs), "random input");
}

// Exactly one of --input, --random, --dataset, without the options that do not apply to it.
void check_sources(const Options& o, const po::variables_map& vm) {
    if (!o.dataset.empty())
        return reject_with_dataset(vm, "jacobian",
                                   {"random", "token-dist", "seed", "weight-scale", "heads"});
    if (o.input.empty() == o.random.empty())
        fail_usage("jacobian: give exactly one of --input, --random and --dataset");
    if (!o.input.empty())
        reject_given(vm, "jacobian", {"token-dist", "seed", "weight-scale"},
                     "to --input (it sets how --random draws)");
}

// The report's source attribute: the input file, the dataset selector or the random spec.
std::string source_of(const Options& o, const AttentionHeads& in) {
    if (!o.dataset.empty()) return "dataset:" + in.source;
    return o.input.empty() ? "random:" + o.random + ",tokens=" + o.token_dist : o.input;
}

// Why J is not in the report, in terms of the options.
std::string not_stored_cause(const JacobianPlan& p) {
    if (p.dense) return "above --store-limit";
    return std::string(p.fits ? "not formed" : "not formed, above --max-memory") +
           ": --svd needs no dense J, --store-j forms it";
}

// "" when every head is described by the header line, else " (name; N, D, d = ...; s = ...)".
std::string head_label(const AttentionHeads& in, std::size_t h) {
    const Head& hd = in.heads[h];
    if (in.uniform()) return in.names[h] == std::to_string(h) ? "" : " (" + in.names[h] + ")";
    std::ostringstream os;
    os << " (" << in.names[h] << "; N, D, d = " << hd.N() << ", " << hd.D() << ", " << hd.d()
       << "; s = " << hd.s << ")";
    return os.str();
}

void print_json(const AttentionHeads& in, const JacobianAnalysis& a, const std::string& corr,
                const std::string& bias_form, const std::string& report) {
    const bool u = in.uniform();
    const Head& h0 = in.heads[0];
    JsonWriter j(std::cout);
    auto dim = [&](const char* k, Eigen::Index v) {
        u ? j.kv(k, static_cast<std::int64_t>(v)) : j.key(k).null();
    };
    j.begin_object();
    json_header(j, "jacobian");
    j.kv("wrt", to_string(a.plan.wrt));
    dim("N", h0.N()), dim("D", h0.D()), dim("d", h0.d());
    j.kv("H", static_cast<std::int64_t>(in.size()));
    u ? j.kv("s", h0.s) : j.key("s").null();
    j.kv("correction", corr);
    j.kv("bias_form", bias_form);
    dim("rows", a.heads[0].rows), dim("cols", a.heads[0].cols);
    j.kv("shared_X", in.shared_X).key("names").begin_array();
    for (const auto& n : in.names) j.value(n);
    j.end_array();
    std::vector<double> frob, maxabs, secs;
    for (const auto& r : a.heads) frob.push_back(r.frobenius), maxabs.push_back(r.max_abs);
    for (const auto& r : a.heads) secs.push_back(r.seconds);
    if (std::all_of(frob.begin(), frob.end(), [](double x) { return std::isfinite(x); }))
        j.key("frobenius").values(frob);
    if (a.plan.dense) j.key("max_abs").values(maxabs).key("seconds").values(secs);
    if (a.heads[0].has_spectrum) {
        j.key("spectrum").begin_array();
        for (const auto& r : a.heads) {
            j.begin_object();
            write_operator_spectrum(j, r.spectrum);
            j.end_object();
        }
        j.end_array();
    }
    std::isfinite(a.frobenius_layer) ? j.kv("frobenius_layer", a.frobenius_layer)
                                     : j.key("frobenius_layer").null();
    j.kv("stored", a.plan.store);
    report.empty() ? j.key("report").null() : j.kv("report", report);
    j.end_object();
    j.finish();
}

void print_text(const AttentionHeads& in, const JacobianAnalysis& a, const std::string& corr,
                const std::string& bias_form, const std::string& report) {
    const std::string what = jacobian_symbol(a.plan.wrt);
    const Head& h0 = in.heads[0];
    std::cout << what << " of attention, H = " << in.size();
    if (in.uniform())
        std::cout << ", (N, D, d) = (" << h0.N() << ", " << h0.D() << ", " << h0.d()
                  << "), s = " << h0.s;
    else
        std::cout << ", (N, D, d) and s per head";
    std::cout << ", correction " << corr << ", " << bias_form << "\n";
    for (std::size_t h = 0; h < a.heads.size(); ++h) {
        const HeadJacobian& r = a.heads[h];
        std::cout << "head " << h << head_label(in, h) << ": " << what << " " << r.rows << " x "
                  << r.cols << (a.plan.dense ? "" : " (not formed)");
        if (std::isfinite(r.frobenius))
            std::cout << ", ||" << what << "||_F = " << format_number(r.frobenius)
                      << (a.plan.dense ? "" : " (from J J^T)");
        if (a.plan.dense)
            std::cout << ", max |entry| = " << format_number(r.max_abs) << ", "
                      << format_number(r.seconds, 3) << " s";
        std::cout << "\n";
    }
    for (std::size_t h = 0; h < a.heads.size() && a.heads[h].has_spectrum; ++h) {
        const auto& sp = a.heads[h].spectrum;
        std::cout << "head " << h << " spectrum (" << sp.method << ", "
                  << format_number(sp.seconds, 3) << " s): sigma_max = "
                  << format_enclosure(sp.max.sigma, sp.max.enclosure.lo, sp.max.enclosure.hi)
                  << ", sigma_min = "
                  << format_enclosure(sp.min.sigma, sp.min.enclosure.lo, sp.min.enclosure.hi)
                  << ", rank " << sp.rank << "\n  residuals ||Jv - s u||, ||J^T u - s v||: max "
                  << format_number(sp.max.res_u) << ", " << format_number(sp.max.res_v) << "; min "
                  << format_number(sp.min.res_u) << ", " << format_number(sp.min.res_v) << "\n  "
                  << kappa_text(sp.strict) << "\n  " << kappa_text(sp.nz) << "\n";
        for (const auto& n : sp.notes) std::cout << "  note: " << n << "\n";
    }
    if (in.size() > 1 && a.shared_X && std::isfinite(a.frobenius_layer))
        std::cout << "layer: ||" << what << "||_F = " << format_number(a.frobenius_layer) << " ("
                  << (a.plan.wrt == JacobianWrt::weights ? "block diagonal" : "stacked") << ")\n";
    else if (in.size() > 1 && a.shared_X)
        std::cout << "layer: ||" << what << "||_F not known (" << what << " not formed)\n";
    else if (in.size() > 1)
        std::cout << "layer: not reported (each head has its own X; a layer needs a shared X)\n";
    if (a.plan.dense) std::cout << "total " << format_number(a.seconds, 3) << " s; ";
    std::cout << (report.empty() ? "no report (--no-report)" : "report " + report)
              << (a.plan.store ? ""
                               : " (" + what + " not stored: " + not_stored_cause(a.plan) + ")")
              << "\n";
}

// The analysis options from the command line, checked before any work (usage errors: 64).
JacobianOptions jacobian_options(const Options& o, const po::variables_map& vm) {
    if (o.wrt != "weights" && o.wrt != "input")
        fail_usage("--wrt must be weights or input, got '" + o.wrt + "'");
    if (o.scale != "1" && o.scale != "invsqrt")
        fail_usage("--scale must be 1 or invsqrt, got '" + o.scale + "'");
    JacobianOptions jo;
    jo.wrt = o.wrt == "weights" ? JacobianWrt::weights : JacobianWrt::input;
    jo.max_bytes = jo.svd.max_bytes = apply_memory_option(o.max_memory);
    jo.store_bytes = parse_size(o.store_limit, "--store-limit", true);
    jo.store = o.store_j;
    if (o.store_j && o.common.no_report)
        fail_usage("--store-j writes J into the report: it does not go with --no-report");
    jo.spectrum = !o.svd.empty();
    if (jo.spectrum) jo.svd.mode = large_svd_mode_from_string(o.svd);
    jo.svd.certify = certify_mode_from_string(o.certify);
    jo.svd.full_upto = o.full_upto;
    if (given(vm, "full-upto") && (!jo.spectrum || jo.svd.mode != LargeSvdMode::auto_select))
        fail_usage("--full-upto applies to --svd auto only");
    if (given(vm, "certify") && !jo.spectrum)
        fail_usage("--certify certifies the SVD of --svd: give --svd (auto, full or extremal)");
    return jo;
}

}  // namespace

int run_jacobian(const Invocation& inv) {
    Options o;
    po::options_description desc("jacobian options");
    declare_options(desc, o);
    po::variables_map vm;
    if (!parse(inv, "jacobian", kSynopsis, kHelp, desc, vm)) return 0;
    check_sources(o, vm);
    JacobianOptions jo = jacobian_options(o, vm);
    const CorrectionSpec corr = CorrectionSpec::parse(o.correction);
    const BiasForm bias = bias_form_from_string(o.bias);
    EngineProgressView view(!o.quiet && !o.common.json);
    jo.svd.progress = view.progress(std::string("kappa(") + jacobian_symbol(jo.wrt) + ")");
    jo.progress = view.progress(jacobian_symbol(jo.wrt));
    jo.svd.notice = view.notice();
    const std::string target = report_target(o.common, "jacobian.h5", {o.input});
    AttentionHeads in = load(o, jo.max_bytes);
    if (in.corrections && corr.kind != CorrectionKind::none)
        fail_usage("--correction " + o.correction + " conflicts with the corrections stored in " +
                   o.input);
    const std::string bias_form = apply_bias_form(in.heads, bias);
    const bool set_scale = vm.count("scale") > 0 || (o.input.empty() && o.dataset.empty());
    for (Head& h : in.heads) {  // C from the spec; Head::effective() then uses W + C
        if (set_scale)
            h.s = logit_scale(o.scale == "1" ? LogitScale::one : LogitScale::inv_sqrt_d, h.d());
        if (!in.corrections) apply_correction(h, corr);
        h.validate(o.input.empty() ? "random input" : o.input);
    }
    const JacobianPlan plan = plan_jacobians(in.heads, jo);
    const std::string what = jacobian_symbol(jo.wrt);
    if (!plan.dense && !o.quiet)
        log("dense " + what + " (" + human_bytes(plan.bytes) + ") not formed: the spectrum uses " +
            what + " " + what + "^T and matrix-free products (--store-j forms and stores it)");
    const std::string corr_name = in.corrections ? "given" : corr.describe();
    std::optional<ReportWriter> rep;
    std::optional<JacobianSection> sec;
    if (!target.empty()) {
        rep.emplace(target, provenance(inv, o.common.seed));
        if (!o.dataset.empty())
            record_dataset(rep->root(), DatasetSelector::parse(in.source), in.names, bias_form);
        sec.emplace(rep->root(), in, jo.wrt, source_of(o, in), corr_name, bias_form);
    }
    const JacobianAnalysis a =
        analyse_jacobians(in.heads, in.shared_X, jo,
                          [&](std::size_t h, const HeadJacobian& r, const Eigen::MatrixXd& J) {
                              view.end();
                              if (sec) sec->write_head(h, r, J);
                              if (!o.common.json && plan.dense)
                                  log("head " + std::to_string(h) + ": " + what + " computed in " +
                                      format_number(r.seconds, 3) + " s");
                          });
    if (rep) sec->finish(a), rep->commit();
    (o.common.json ? print_json : print_text)(in, a, corr_name, bias_form,
                                              rep ? rep->target() : "");
    return 0;
}

}  // namespace attnspec::cli
