// attnspec jacobian: dense J (weights) or J_X (input) of attention heads, from an HDF5 input in
// the attention input schema or a seeded random instance; prints shape, norms and timing; writes
// the inputs and J to a report. Computation: attention/jacobian_analysis.hpp; report section:
// report/jacobian_section.hpp; input: io/attention_input.hpp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>

#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/io/attention_input.hpp"
#include "attnspec/report/jacobian_output.hpp"
#include "attnspec/report/jacobian_section.hpp"
#include "attnspec/report/spectrum_record.hpp"
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
    std::string certify = to_string(CertifyOptions{}.mode);  // the library's one default
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

// "with --svd: certify sigma_min: auto (default), always, never", the default marked from the
// library's CertifyOptions.
const char* certify_help() {
    static const std::string text = [] {
        std::string t = "with --svd: certify sigma_min: ";
        const CertifyMode modes[] = {CertifyMode::auto_select, CertifyMode::always,
                                     CertifyMode::never};
        for (const CertifyMode m : modes) {
            if (m != modes[0]) t += ", ";
            t += to_string(m);
            if (m == CertifyOptions{}.mode) t += " (default)";
        }
        return t;
    }();
    return text.c_str();
}

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
        "--svd auto: all eigenvalues up to R rows (default 512)")("certify", po::value(&o.certify),
                                                                  certify_help());
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

void print_json(const AttentionHeads& in, const JacobianAnalysis& a, const std::string& corr,
                const std::string& bias_form, const std::string& report) {
    JsonWriter j(std::cout);
    j.begin_object();
    json_header(j, "jacobian");
    json_jacobian(j, in, a, corr, bias_form, report);
    j.end_object();
    j.finish();
}

void print_text(const AttentionHeads& in, const JacobianAnalysis& a, const std::string& corr,
                const std::string& bias_form, const std::string& report) {
    print_jacobian_text(std::cout, in, a, corr, bias_form, report, not_stored_cause(a.plan));
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
    jo.svd.certify.mode = certify_mode_from_string(o.certify);
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
