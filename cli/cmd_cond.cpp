// attnspec cond: singular values and kappa, with enclosures, of any matrix stored in an HDF5 file.
// Computation: spectral/cond_analysis.hpp; input and report section: io/cond_io.hpp.
#include <cstdio>
#include <iostream>
#include <optional>

#include "attnspec/base/format.hpp"
#include "attnspec/io/cond_io.hpp"
#include "attnspec/spectral/cond_analysis.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "memory_option.hpp"

namespace attnspec::cli {
namespace {

const char* kSynopsis =
    "--input F.h5 --dataset PATH [--convention strict|nz] [--rtol R] "
    "[--method auto|jacobi|bdc|gesdd|gejsv] [--json] [--out F.h5 | --no-report]";
const char* kHelp =
    "Computes every singular value of the matrix with a rigorous enclosure (Weyl on\n"
    "the backward error of the whole SVD, tightened per triplet by compensated\n"
    "residuals and Temple's bound; proofs/spectral_enclosure.md), the numerical rank\n"
    "and kappa in both conventions with an interval that contains the exact value.\n\n"
    "examples:\n"
    "  attnspec cond --input reports/out/jacobian.h5 --dataset /jacobian/head_0/J\n"
    "  attnspec cond -i W.h5 -d /W_Q --convention nz --rtol 1e-10 --method gejsv --json\n"
    "  attnspec cond -i W.h5 -d /W_Q --out /tmp/cond_wq.h5\n"
    "  attnspec cond -i W.h5 -d /W_Q --no-report\n";

void write_json_interval(JsonWriter& j, const std::string& k, Interval iv) {
    j.key(k).begin_array().value(iv.lo).value(iv.hi).end_array();
}

void print_json(const CondAnalysis& a, const std::string& input, const std::string& dataset,
                const std::string& report) {
    const SvdResult& s = a.svd;
    const Eigen::Index r = s.sigma.size();
    JsonWriter j(std::cout);
    j.begin_object();
    json_header(j, "cond");
    j.kv("input", input).kv("dataset", dataset).kv("rows", static_cast<std::int64_t>(a.rows));
    j.kv("cols", static_cast<std::int64_t>(a.cols)).kv("method", s.method);
    j.kv("sigma_max", s.sigma[0]);
    write_json_interval(j, "sigma_max_enclosure", s.enclosure(0));
    j.kv("sigma_min", s.sigma[r - 1]);
    write_json_interval(j, "sigma_min_enclosure", s.enclosure(r - 1));
    j.kv("rank", static_cast<std::int64_t>(a.nz.rank));
    for (const Kappa* k : {&a.strict, &a.nz}) {
        j.key(std::string("kappa_") + to_string(k->convention)).begin_object();
        j.kv("value", k->value).kv("rtol", k->rtol).kv("rank", static_cast<std::int64_t>(k->rank));
        write_json_interval(j, "enclosure", k->enclosure);
        j.end_object();
    }
    j.kv("headline_convention", to_string(a.headline)).kv("residual", s.residual);
    j.kv("seconds", a.seconds);
    report.empty() ? j.key("report").null() : j.kv("report", report);
    j.key("sigma").values(std::vector<double>(s.sigma.data(), s.sigma.data() + r));
    j.end_object();
    j.finish();
}

void print_text(const CondAnalysis& a, const std::string& input, const std::string& dataset,
                const std::string& report) {
    const SvdResult& s = a.svd;
    const Eigen::Index r = s.sigma.size();
    std::printf("%s:%s  %ld x %ld  (%s, %.3g s)\n", input.c_str(), dataset.c_str(),
                static_cast<long>(a.rows), static_cast<long>(a.cols), s.method.c_str(), a.seconds);
    std::printf("sigma_max = %s (%s)\n", format_enclosure(s.sigma[0], s.lo[0], s.hi[0]).c_str(),
                s.basis[0].c_str());
    std::printf("sigma_min = %s (%s)\n",
                format_enclosure(s.sigma[r - 1], s.lo[r - 1], s.hi[r - 1]).c_str(),
                s.basis[r - 1].c_str());
    std::printf("rank = %ld (rtol %.3g)\n%s\n%s\n", static_cast<long>(a.nz.rank), a.nz.rtol,
                kappa_text(a.strict).c_str(), kappa_text(a.nz).c_str());
    const Kappa& k = a.headline_kappa();
    std::printf("headline (%s): kappa = %s\nreport: %s\n", to_string(a.headline),
                format_number(k.value, enclosure_digits(k.enclosure.lo, k.enclosure.hi)).c_str(),
                report.empty() ? "none (--no-report)" : report.c_str());
}

}  // namespace

int run_cond(const Invocation& inv) {
    po::options_description desc("cond options");
    std::string input, dataset, convention = "strict", method = "auto", max_memory;
    CondOptions co;
    CommonOptions common;
    desc.add_options()("input,i", po::value(&input)->required(), "HDF5 file holding the matrix")(
        "dataset,d", po::value(&dataset)->required(),
        "path of a rank-2 (or rank-1: a column) float64 or float32 dataset, e.g. "
        "/jacobian/head_0/J")(
        "convention", po::value(&convention)->default_value("strict"),
        "kappa convention for the headline: strict (sigma_1/sigma_r, inf when rank-deficient) "
        "or nz (sigma_1 / smallest sigma above rtol*sigma_1); both are always reported")(
        "rtol", real_value(&co.rtol, "--rtol", -1e300, 1e300),
        "relative rank threshold in [0, 1); negative = max(m, n) * eps (numpy matrix_rank)")(
        "method", po::value(&method)->default_value("auto"),
        "SVD backend: auto (jacobi if min(m,n) <= 64, else gesdd), jacobi, bdc, gesdd, gejsv "
        "(high relative accuracy for graded matrices)")(
        "out,o", po::value(&common.out),
        "report path (default reports/out/cond.h5, directory created), written atomically");
    add_common_options(desc, common, "cond.h5", kNoReport | kJson);
    add_memory_option(desc, max_memory);
    po::variables_map vm;
    if (!parse(inv, "cond", kSynopsis, kHelp, desc, vm)) return 0;
    apply_memory_option(max_memory);
    co.headline = kappa_convention_from_string(convention);
    co.svd.method = svd_method_from_string(method);
    if (!(co.rtol < 0) && !(co.rtol < 1))
        fail_usage("cond: --rtol must be below 1 (negative = default)");
    const std::string target = report_target(common, "cond.h5", {input});
    const Eigen::MatrixXd M = load_matrix_input(input, dataset);
    const CondAnalysis a = cond_analysis(M, co);
    std::optional<ReportWriter> rep;
    if (!target.empty()) {
        rep.emplace(target, provenance(inv, 0));
        write_cond_section(rep->root(), a, input, dataset);
        rep->commit();
    }
    (common.json ? print_json : print_text)(a, input, dataset, rep ? rep->target() : "");
    return 0;
}

}  // namespace attnspec::cli
