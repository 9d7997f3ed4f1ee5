// attnspec jacobian: dense J (weights) or J_X (input) of an attention layer, from an HDF5 input
// or a seeded random instance; prints shape, norms and timing; writes inputs and J to a report.
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/io/spectrum_io.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {
namespace {

struct Options {
    std::string input, random, wrt = "weights", scale = "1", correction = "none", out;
    std::string tokens = "gaussian", max_memory = "4GiB", store_limit = "256MiB", svd;
    std::uint64_t seed = 0;
    long heads = 1;
    double weight_scale = 1.0;
    bool json = false;
};

double parse_bytes(const std::string& s, const std::string& option) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    const std::string unit = end ? end : "";
    double mult = 0;
    if (unit.empty() || unit == "B")
        mult = 1;
    else if (unit == "KiB")
        mult = 1024.0;
    else if (unit == "MiB")
        mult = 1024.0 * 1024;
    else if (unit == "GiB")
        mult = 1024.0 * 1024 * 1024;
    else if (unit == "TiB")
        mult = 1024.0 * 1024 * 1024 * 1024;
    if (mult == 0 || !(v >= 0) || !std::isfinite(v))
        fail_usage(option + " expects a size like 512MiB, 4GiB or a byte count, got '" + s + "'");
    return v * mult;
}

HeadWeights read_weights(const H5Reader& r, const std::string& p) {
    HeadWeights w;
    w.W_Q = r.matrix(p + "W_Q"), w.W_K = r.matrix(p + "W_K"), w.W_V = r.matrix(p + "W_V");
    if (r.exists(p + "C_Q")) w.C_Q = r.matrix(p + "C_Q");
    if (r.exists(p + "C_K")) w.C_K = r.matrix(p + "C_K");
    if (r.exists(p + "C_V")) w.C_V = r.matrix(p + "C_V");
    return w;
}

// Input file layout: reports/SCHEMA.md ("attnspec jacobian: input files and reports").
MultiHead load(const Options& o, bool scale_given, bool& file_corrections) {
    MultiHead m;
    if (!o.input.empty()) {
        const H5Reader r(o.input);
        m.X = r.matrix("X");
        if (r.is_group("heads")) {
            for (long h = 0; r.exists("heads/" + std::to_string(h)); ++h)
                m.heads.push_back(read_weights(r, "heads/" + std::to_string(h) + "/"));
            if (m.heads.empty()) fail_data(o.input + ": group 'heads' has no head '0'");
        } else {
            m.heads.push_back(read_weights(r, ""));
        }
        if (o.heads != 1 && o.heads != m.H())
            fail_data("--heads " + std::to_string(o.heads) + " but " + o.input + " holds " +
                      std::to_string(m.H()) + " head(s)");
        m.s = 1.0;
        if (r.has_attr("/", "s")) m.s = r.attr_double("/", "s");
        for (const auto& w : m.heads)
            file_corrections |= w.C_Q.size() + w.C_K.size() + w.C_V.size() > 0;
    } else {
        const auto dims = parse_dims(o.random, 3, "--random");
        RandomSpec rs;
        rs.N = dims[0], rs.D = dims[1], rs.d = dims[2], rs.H = o.heads, rs.seed = o.seed;
        rs.token_dist = o.tokens, rs.weight_scale = o.weight_scale;
        check_allocation(8.0 * rs.N * rs.D + 24.0 * rs.D * rs.d * rs.H,
                         parse_bytes(o.max_memory, "--max-memory"), "the random input");
        m = random_multihead(rs);
    }
    if (scale_given || o.input.empty())
        m.s = logit_scale(o.scale == "1" ? LogitScale::one : LogitScale::inv_sqrt_d,
                          m.heads[0].W_Q.cols());
    return m;
}

}  // namespace

int run_jacobian(const Invocation& inv) {
    Options o;
    po::options_description desc("jacobian options");
    desc.add_options()(
        "input", po::value(&o.input),
        "HDF5 input: X (N x D) and W_Q, W_K, W_V (D x d), optional "
        "C_Q, C_K, C_V, or heads/<h>/W_Q... for several heads; optional root attribute s "
        "(layout: reports/SCHEMA.md, jacobian section)")(
        "random", po::value(&o.random),
        "generate a random instance of sizes N,D,d (e.g. 128,384,32)")(
        "seed", po::value(&o.seed),
        "seed of the random instance (default 0), recorded in the report")(
        "tokens", po::value(&o.tokens),
        "token rows of the random X: gaussian (i.i.d. N(0,1), default) "
        "or layernorm (each row centred, unit variance)")(
        "weight-scale", po::value(&o.weight_scale),
        "random weights are N(0, w^2/D) (default w = 1)")(
        "wrt", po::value(&o.wrt),
        "weights: J = [J_Q, J_K, J_V] (Nd x 3Dd, default); input: J_X (Nd x ND)")(
        "scale", po::value(&o.scale),
        "logit scale s: 1 (the paper, default) or invsqrt (1/sqrt(d))")(
        "correction", po::value(&o.correction),
        "fixed SpecA correction C of every weight: none "
        "(default; uses C_* from --input if present), lambda:<l> (l I_{D x d}) or svd (Thm 3.5). "
        "J is evaluated at W + C")(
        "heads", po::value(&o.heads),
        "number of heads H sharing X (default 1); per-head J blocks, "
        "the full-layer J is block diagonal (weights) or their stack (input)")(
        "max-memory", po::value(&o.max_memory),
        "refuse problems whose dense J needs more (default 4GiB)")(
        "store-limit", po::value(&o.store_limit),
        "write J into the report only up to this size "
        "(default 256MiB; inputs and norms are always written)")(
        "out", po::value(&o.out), "report path (default reports/out/jacobian.h5)")(
        "json", po::bool_switch(&o.json), "one JSON document on stdout");
    desc.add_options()(
        "svd", po::value(&o.svd),
        "also compute sigma_max, sigma_min, kappa (strict and nz), rank, enclosures and triplet "
        "residuals of each head's J with the spectral engine: full (all eigenvalues of J J^T), "
        "extremal (Lanczos), auto (full up to 2048 rows). J J^T is assembled from the factors, "
        "so this works where dense J is refused (then J itself is skipped)");
    po::variables_map vm;
    if (!parse(
            inv, "jacobian", "(--input F.h5 | --random N,D,d [--seed S]) [options]",
            "Computes the exact Jacobian of softmax(s X W_Q W_K^T X^T) X W_V (SC Thm 3.3) by\n"
            "the structured closed form, column-major vec (rows i + N c; columns a + D b for W,\n"
            "m + N a for X). Prints shape, Frobenius and max norms and time per head; writes the\n"
            "inputs and J to the report. Exit codes: 0 ok, 64 usage, 65 bad data or oversized\n"
            "problem, 66 input missing, 73 cannot create the report, 74 I/O error.\n\n"
            "examples:\n"
            "  attnspec jacobian --random 128,384,32 --seed 1 --tokens layernorm\n"
            "  attnspec jacobian --random 16,8,4 --wrt input --scale invsqrt \\\n"
            "      --correction lambda:10 --weight-scale 3\n"
            "  attnspec jacobian --input layer.h5 --heads 4 --json --out reports/out/layer_J.h5\n"
            "  attnspec jacobian --random 128,384,32 --max-memory 2GiB --store-limit 0\n"
            "  attnspec jacobian --random 197,768,64 --svd auto   (ViT-B head: kappa(J) from J J^T\n"
            "      and matrix-free refinement; dense J, 15 GB, is skipped)\n"
            "      (J is 1.1 GiB: computed and its norms reported, not written to the report)\n",
            desc, vm))
        return 0;
    if (o.input.empty() == o.random.empty())
        fail_usage("jacobian: give exactly one of --input and --random");
    if (o.wrt != "weights" && o.wrt != "input")
        fail_usage("--wrt must be weights or input, got '" + o.wrt + "'");
    if (o.scale != "1" && o.scale != "invsqrt")
        fail_usage("--scale must be 1 or invsqrt, got '" + o.scale + "'");
    if (o.heads < 1) fail_usage("--heads must be >= 1");
    const CorrectionSpec corr = CorrectionSpec::parse(o.correction);
    const double max_mem = parse_bytes(o.max_memory, "--max-memory");
    const double store_limit = parse_bytes(o.store_limit, "--store-limit");
    bool file_corr = false;
    MultiHead m = load(o, vm.count("scale") > 0, file_corr);
    if (file_corr && corr.kind != CorrectionKind::none)
        fail_usage("--correction " + o.correction + " conflicts with the corrections stored in " +
                   o.input);
    const std::string src = o.input.empty() ? "random input" : o.input;
    m.validate(src);
    if (!file_corr)
        for (auto& w : m.heads) {  // C from the spec; Head::effective() then uses W + C
            Head tmp;
            tmp.W_Q = w.W_Q, tmp.W_K = w.W_K, tmp.W_V = w.W_V;
            apply_correction(tmp, corr);
            w.C_Q = tmp.C_Q, w.C_K = tmp.C_K, w.C_V = tmp.C_V;
        }
    m.validate(src);
    const bool wrt_w = o.wrt == "weights";
    const Eigen::Index N = m.X.rows(), D = m.X.cols(), d = m.heads[0].W_Q.cols(), H = m.H();
    const double bytes = wrt_w ? jacobian_weights_bytes(N, D, d) : jacobian_input_bytes(N, D, d);
    const std::string what = wrt_w ? "J" : "J_X";
    const bool want_svd = !o.svd.empty();
    LargeSvdOptions svd_opt;
    if (want_svd) svd_opt.mode = large_svd_mode_from_string(o.svd);
    // With --svd the spectrum comes from J J^T and matrix-free products: dense J is optional.
    const bool dense = !want_svd || bytes <= max_mem;
    if (!dense)
        log("dense " + what + " (" + human_bytes(bytes) + ") is above --max-memory: skipped; " +
            "the spectrum uses " + what + " " + what + "^T and matrix-free products");
    else
        check_allocation(bytes, max_mem, "dense " + what + " of one head");
    const bool store = dense && bytes <= store_limit;
    const std::string corr_name = file_corr ? "given" : corr.describe();

    ReportWriter rep(report_path(o.out, "jacobian.h5"), provenance(inv, o.seed));
    H5Group g = rep.root().group("jacobian");
    g.attr("wrt", o.wrt), g.attr("s", m.s), g.attr("correction", corr_name);
    g.attr("N", static_cast<std::int64_t>(N)), g.attr("D", static_cast<std::int64_t>(D));
    g.attr("d", static_cast<std::int64_t>(d)), g.attr("H", static_cast<std::int64_t>(H));
    g.attr("source", o.input.empty() ? "random:" + o.random + ",tokens=" + o.tokens : o.input);
    g.attr("vec",
           "column-major; rows i + N c of A (N x d); columns a + D b of W_* (blocks Q, K, V) or m "
           "+ N a of X");
    g.attr("evaluated_at", "W + C (corrections frozen)");
    g.write("X", m.X);
    std::vector<double> frob, maxabs, secs;
    std::vector<OperatorSpectrum> spectra;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (Eigen::Index h = 0; h < H; ++h) {
        const Head hd = m.head(h);
        auto t0 = std::chrono::steady_clock::now();
        const Eigen::MatrixXd J = !dense ? Eigen::MatrixXd()
                                  : wrt_w ? jacobian_weights(hd, max_mem)
                                          : jacobian_input(hd, max_mem);
        secs.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        frob.push_back(dense ? J.norm() : nan);
        maxabs.push_back(dense ? J.cwiseAbs().maxCoeff() : nan);
        H5Group gh = g.group("head_" + std::to_string(h));
        if (want_svd) {
            if (wrt_w) {
                spectra.push_back(jacobian_spectrum(hd, svd_opt));
            } else {
                const JacobianXOperator op(hd);
                const Eigen::MatrixXd G = jacobian_x_gram_outer(hd, svd_opt.max_bytes);
                spectra.push_back(operator_spectrum(op, &G, svd_opt));
            }
            H5Group gs = gh.group("spectrum");
            write_operator_spectrum(gs, spectra.back());
        }
        gh.write("W_Q", hd.W_Q), gh.write("W_K", hd.W_K), gh.write("W_V", hd.W_V);
        if (hd.C_Q.size()) gh.write("C_Q", hd.C_Q);
        if (hd.C_K.size()) gh.write("C_K", hd.C_K);
        if (hd.C_V.size()) gh.write("C_V", hd.C_V);
        gh.attr("frobenius", frob.back()), gh.attr("max_abs", maxabs.back()),
            gh.attr("seconds", secs.back());
        if (wrt_w && dense)
            for (int b = 0; b < 3; ++b)
                gh.attr(std::string("frobenius_J_") + "QKV"[b],
                        J.middleCols(b * D * d, D * d).norm());
        if (store) gh.write(what, J);
        if (!o.json)
            log("head " + std::to_string(h) + ": " + what + " computed in " +
                std::to_string(secs.back()) + " s");
    }
    double layer = 0, total = 0;
    for (size_t h = 0; h < frob.size(); ++h) layer += frob[h] * frob[h], total += secs[h];
    layer = std::sqrt(layer);
    g.attr("frobenius_layer", layer), g.attr("stored", store ? "yes" : "no (above --store-limit)");
    rep.commit();

    const std::string shape =
        std::to_string(N * d) + " x " + std::to_string(wrt_w ? 3 * D * d : N * D);
    if (o.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "jacobian");
        j.kv("wrt", o.wrt)
            .kv("N", static_cast<std::int64_t>(N))
            .kv("D", static_cast<std::int64_t>(D));
        j.kv("d", static_cast<std::int64_t>(d)).kv("H", static_cast<std::int64_t>(H)).kv("s", m.s);
        j.kv("correction", corr_name).kv("rows", static_cast<std::int64_t>(N * d));
        j.kv("cols", static_cast<std::int64_t>(wrt_w ? 3 * D * d : N * D));
        j.key("frobenius").values(frob);
        j.key("max_abs").values(maxabs);
        j.key("seconds").values(secs);
        if (want_svd) {
            j.key("spectrum").begin_array();
            for (const auto& sp : spectra) {
                j.begin_object();
                write_operator_spectrum(j, sp);
                j.end_object();
            }
            j.end_array();
        }
        j.kv("frobenius_layer", layer).kv("stored", store).kv("report", rep.target());
        j.end_object();
        j.finish();
    } else {
        std::cout << what << " of attention, H = " << H << ", (N, D, d) = (" << N << ", " << D
                  << ", " << d << "), s = " << m.s << ", correction " << corr_name << "\n";
        for (Eigen::Index h = 0; h < H; ++h)
            std::cout << "head " << h << ": " << what << " " << shape << ", ||" << what
                      << "||_F = " << frob[h] << ", max |entry| = " << maxabs[h] << ", " << secs[h]
                      << " s\n";
        for (size_t h = 0; h < spectra.size(); ++h) {
            const auto& sp = spectra[h];
            std::cout << "head " << h << " spectrum (" << sp.method << ", " << sp.seconds
                      << " s): sigma_max = " << sp.max.sigma << " in [" << sp.max.enclosure.lo
                      << ", " << sp.max.enclosure.hi << "], sigma_min = " << sp.min.sigma << " in ["
                      << sp.min.enclosure.lo << ", " << sp.min.enclosure.hi << "], rank "
                      << sp.rank << "\n  residuals ||Jv - s u||, ||J^T u - s v||: max "
                      << sp.max.res_u << ", " << sp.max.res_v << "; min " << sp.min.res_u << ", "
                      << sp.min.res_v << "\n  " << sp.strict.describe() << "\n  "
                      << sp.nz.describe() << "\n";
            for (const auto& n : sp.notes) std::cout << "  note: " << n << "\n";
        }
        if (H > 1)
            std::cout << "layer: ||" << what << "||_F = " << layer << " ("
                      << (wrt_w ? "block diagonal" : "stacked") << ")\n";
        std::cout << "total " << total << " s; report " << rep.target()
                  << (store ? "" : " (J not stored: above --store-limit)") << "\n";
    }
    return 0;
}


}  // namespace attnspec::cli
