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
    "Computes the exact Jacobian of softmax(s X W_Q W_K^T X^T) X W_V (SC Thm 3.3) by\n"
    "the structured closed form, column-major vec (rows i + N c; columns a + D b for W,\n"
    "m + N a for X). Prints shape, Frobenius and max norms and time per head; writes the\n"
    "inputs, and J when it is at most --store-limit (16 MiB) or --store-j asks, to the report.\n"
    "With --svd, kappa(J) takes the spectral engine's path (J J^T from the factors, matrix-free\n"
    "refinement) and a J above --store-limit is not formed at all; long solves show their\n"
    "progress and an estimate on stderr. Input files follow the one attention input schema\n"
    "(reports/SCHEMA.md, \"Attention input files\"): heads at the root or /heads/<name>/,\n"
    "X shared at the root or one per head (then no layer norm is reported), optional C_*,\n"
    "biases b_Q, b_K, b_V (J at Q = X W_Q + 1 b_Q^T, ...; --bias drop for the paper's\n"
    "bias-free form) and attribute s. Exit codes: 0 ok, 64 usage, 65 bad data or\n"
    "oversized problem, 66 input missing, 73 cannot create the report, 74 I/O error.\n\n"
    "examples: (times in CPU seconds, user + system, on 2 cores with OpenBLAS Cooperlake\n"
    "kernels; a busy machine takes longer in wall time)\n"
    "  attnspec jacobian --random 128,384,32 --seed 1 --token-dist layernorm --svd auto\n"
    "      (MiniLM size: kappa(J) in ~2.5 s, 0.3 GB; the 1.1 GiB J is not formed)\n"
    "  attnspec jacobian --random 16,8,4 --wrt input --scale invsqrt \\\n"
    "      --correction lambda:10 --weight-scale 3\n"
    "  attnspec jacobian --input layer.h5 --heads 4 --json --out reports/out/layer_J.h5\n"
    "  attnspec jacobian --input datasets/embedded/attention_heads.h5 --no-report\n"
    "  attnspec jacobian --input biased_heads.h5 --bias drop --svd full   (kappa(J) of the\n"
    "      bias-free form of heads that carry biases; --bias keep, the default, uses them)\n"
    "  attnspec jacobian --dataset minilm-l6:0:0 --svd auto   (layer 0, head 0 of the real\n"
    "      model on sentence 0, s = 1/sqrt(d) from the file; NAME:l:h:* = every sentence,\n"
    "      one block of heads per sentence; under a second)\n"
    "  attnspec jacobian --random 64,128,32 --svd auto --store-j   (kappa(J) and the 200 MB J\n"
    "      in the report, written uncompressed; ~2 s)\n"
    "  attnspec jacobian --random 128,384,32 --max-memory 2GiB --store-limit 0\n"
    "      (J is 1.1 GiB: computed and its norms reported, not written to the report; ~2 s)\n"
    "  attnspec jacobian --random 197,768,64 --token-dist layernorm --scale invsqrt \\\n"
    "      --svd extremal --max-memory 8GiB   (ViT-B head: kappa(J) from J J^T, a 12608^2\n"
    "      Gram matrix, and matrix-free refinement; ~1 min wall, 2.6 GB, progress on stderr)\n"
    "  attnspec jacobian --random 197,768,64 --seed 1 --token-dist gaussian --scale 1 \\\n"
    "      --svd extremal --certify always --max-memory 10GiB --no-report   (ViT-B head,\n"
    "      kappa(J) = 1.486e7: the refined lower end is 0; the double-double certificate on\n"
    "      J J^T from the head's factors encloses kappa to 3e-8 relative, both ends proved\n"
    "      (no A2), with one factorization; ~5 min wall, 9 GB)\n"
    "  attnspec jacobian --random 32,64,16 --seed 3 --svd extremal --certify always --no-report\n"
    "      (sigma_min certified by one double-double Cholesky of J J^T - tau I + c w w^T and\n"
    "      Temple's bound; on this well-conditioned head it matches the refined enclosure)\n"
    "  attnspec jacobian --random 64,128,32 --token-dist gaussian --scale 1 --weight-scale 1.3 \\\n"
    "      --svd extremal --no-report   (kappa(J) ~ 1.9e6: the refined lower end of sigma_min is\n"
    "      0; --certify auto proves both ends to ~2e-8 relative in double-double; ~2 s CPU,\n"
    "      0.3 GB)\n";

void declare_options(po::options_description& desc, Options& o) {
    desc.add_options()(
        "input", po::value(&o.input),
        "HDF5 input in the attention input schema (reports/SCHEMA.md, \"Attention input files\"): "
        "W_Q, W_K, W_V (D x d) at the root or /heads/<name>/W_Q... for several heads (file "
        "order); X (N x D) at the root (shared) or per head; optional C_Q, C_K, C_V, biases "
        "b_Q, b_K, b_V (d,) and attribute s. datasets/embedded/attention_heads.h5 is one")(
        "bias", po::value(&o.bias),
        "keep (default): J at the input's biases, Q = X W_Q + 1 b_Q^T, K, V likewise; drop: "
        "the paper's bias-free form. The report's bias_form says which was used")(
        "random", po::value(&o.random),
        "generate a random instance of sizes N,D,d (e.g. 128,384,32)")(
        "dataset", po::value(&o.dataset),
        dataset_option_help("the selected heads on their sentence; an omitted sentence part "
                            "means sentence 0, '*' every sentence (one block of heads each)")
            .c_str())(
        "token-dist", po::value(&o.token_dist),
        "distribution of the token rows of the random X: gaussian (i.i.d. N(0,1), default) "
        "or layernorm (each row centred, unit variance); --random only")(
        "weight-scale", real_value(&o.weight_scale, "--weight-scale", 0, 1e300, true),
        "random weights are N(0, w^2/D) (default w = 1); --random only")(
        "wrt", po::value(&o.wrt),
        "weights: J = [J_Q, J_K, J_V] (Nd x 3Dd, default); input: J_X (Nd x ND)")(
        "scale", po::value(&o.scale),
        "logit scale s: 1 (the paper, default) or invsqrt (1/sqrt(d))")(
        "correction", po::value(&o.correction),
        "fixed SpecA correction C of every weight: none "
        "(default; uses C_* from --input if present), lambda:<l> (l I_{D x d}) or svd (Thm 3.5). "
        "J is evaluated at W + C")(
        "heads", count_value(&o.heads, "--heads", 1, kMaxDim),
        "number of heads H sharing X (default 1); per-head J blocks, "
        "the full-layer J is block diagonal (weights) or their stack (input)")(
        "store-j", po::bool_switch(&o.store_j),
        "form J and write it into the report whatever its size (up to --max-memory); "
        "uncompressed above 64 MiB")(
        "store-limit", po::value(&o.store_limit),
        "without --store-j, write J into the report only up to this size (default 16MiB; "
        "inputs and norms are always written); with --svd a J above it is not formed at all")(
        "quiet,q", po::bool_switch(&o.quiet), "no progress on stderr (also off with --json)");
    add_memory_option(desc, o.max_memory);
    add_common_options(desc, o.common, "jacobian.h5");
    desc.add_options()(
        "svd", po::value(&o.svd),
        "also compute sigma_max, sigma_min, kappa (strict and nz), rank, enclosures and triplet "
        "residuals of each head's J with the spectral engine: full (all eigenvalues of J J^T), "
        "extremal (Lanczos), auto (full up to --full-upto rows). J J^T is assembled from the "
        "factors and "
        "the refinement is matrix-free: no route needs dense J, which is formed only with "
        "--store-j or below --store-limit. Progress with an estimate on stderr")(
        "full-upto", count_value(&o.full_upto, "--full-upto", 1, kMaxDim),
        "--svd auto: all eigenvalues of J J^T up to this many rows (default 512: dsyevd is slow "
        "on 2 cores above), Lanczos above; a J whose full rank Lanczos cannot prove falls back to "
        "all eigenvalues up to 4x "
        "this (announced on stderr with its expected time)")(

        "certify", po::value(&o.certify),
        "with --svd: certified lower bound on sigma_min by a verified Cholesky of J J^T - tau I: "
        "in double-double, J J^T assembled from the head's factors (proofs/spectral_enclosure.md "
        "§8: rounding ~(n/8)^2 u^2, resolves sigma_min to ~2e-8 relative at kappa(J) ~ 1e7; "
        "the first factorization, of J J^T - tau I + c w w^T with the engine's vector w and tau "
        "just above lambda_min, bounds the second eigenvalue and Temple's bound then encloses "
        "sigma_min on both sides, so one factorization usually suffices; "
        "n^2 N + n^3 / 6 double-double multiply-adds per factorization, 40 n^2 bytes; a ViT-B "
        "head, n = 12608, takes ~5 min on 2 cores), else in double (Rump, §6); when neither fits "
        "or proves "
        "enough, the deflated certificate (§7: dsyevr of J J^T, Cholesky of J J^T + s V V^T - "
        "beta I, Ritz block from J^T V); each announced with its expected time. auto (default: "
        "when the refined bound is 0 or wider than 1e-6 relative, fits --max-memory and needs "
        "<= 6e10 double-double multiply-adds or 5e11 flops, e.g. up to a (128, 384, 32) head; a "
        "ViT-B head only under always), "
        "always, never. At a head the factors are computed in double-double too, with a proved "
        "bound on ||J~ - J|| (assuming expl within 2 ulp) that replaces the product error (A2) "
        "on both ends of sigma_min where that is narrower; elsewhere the lower end subtracts "
        "A2's pad");
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
