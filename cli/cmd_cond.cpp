// attnspec cond: singular values and kappa, with enclosures, of any matrix stored in an HDF5 file.
// Computation: spectral/cond_analysis.hpp; input: io/matrix_input.hpp; report section:
// report/cond_section.hpp.
#include <cstdio>
#include <iostream>
#include <optional>

#include "attnspec/base/format.hpp"
#include "attnspec/io/matrix_input.hpp"
#include "attnspec/report/cond_section.hpp"
#include "attnspec/report/names.hpp"
#include "attnspec/spectral/cond_analysis.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "dataset_option.hpp"
#include "memory_option.hpp"

namespace attnspec::cli {
namespace {

const char* kSynopsis =
    "(--input F.h5 --matrix PATH | --dataset NAME[:layer[:head]]) [--convention strict|nz] "
    "[--rtol R] [--method auto|jacobi|bdc|gesdd|gejsv] [--json] [--out F.h5 | --no-report]";
const char* kHelp =
    "examples:\n"
    "  attnspec cond --input reports/out/jacobian.h5 --matrix /jacobian/head_0/J\n"
    "  attnspec cond --dataset minilm-l6:0 --json --no-report\n";

void write_json_interval(JsonWriter& j, const std::string& k, Interval iv) {
    j.key(k).begin_array().value(iv.lo).value(iv.hi).end_array();
}

// The members of one matrix's analysis, inside an open object.
void json_members(JsonWriter& j, const CondAnalysis& a, const std::string& input,
                  const std::string& matrix) {
    const SvdResult& s = a.svd;
    const Eigen::Index r = s.sigma.size();
    j.kv("input", input).kv("matrix", matrix).kv("rows", static_cast<std::int64_t>(a.rows));
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
    j.key("sigma").values(std::vector<double>(s.sigma.data(), s.sigma.data() + r));
}

void print_json(const CondAnalysis& a, const std::string& input, const std::string& matrix,
                const std::string& report) {
    JsonWriter j(std::cout);
    j.begin_object();
    json_header(j, "cond");
    json_members(j, a, input, matrix);
    j.kv("dataset", matrix);  // the old name of "matrix", kept for readers of earlier output
    report.empty() ? j.key("report").null() : j.kv("report", report);
    j.end_object();
    j.finish();
}

// One matrix of a --dataset run: its head, which weight, its analysis.
struct DatasetCond {
    const SelectedHead* head;
    std::string weight;  // "W_Q", "W_K", "W_V"
    CondAnalysis a;
};

std::vector<DatasetCond> analyse_dataset(const std::vector<SelectedHead>& heads,
                                         const CondOptions& co) {
    std::vector<DatasetCond> out;
    for (const SelectedHead& h : heads) {
        const Head& w = h.head_input;
        for (const auto& [name, M] : {std::pair{"W_Q", &w.W_Q}, {"W_K", &w.W_K}, {"W_V", &w.W_V}})
            out.push_back({&h, name, cond_analysis(*M, co)});
    }
    return out;
}

void write_dataset_report(H5Group& root, const DatasetSelector& sel,
                          const std::vector<SelectedHead>& heads,
                          const std::vector<DatasetCond>& rs) {
    record_dataset(root, sel, labels_of(heads), "");
    H5Group all = root.group(names::dataset_run::kHeads);
    const std::string path = find_dataset(sel.name).path;
    for (std::size_t k = 0; k < heads.size(); ++k) {
        H5Group g = selected_head_group(all, heads[k], k);
        for (std::size_t m = 3 * k; m < 3 * k + 3; ++m) {
            H5Group w = g.group(rs[m].weight);
            write_cond_section(w, rs[m].a, path, heads[k].group + "/" + rs[m].weight);
        }
    }
}

void print_dataset(const DatasetSelector& sel, const std::vector<DatasetCond>& rs, bool json,
                   const std::string& report) {
    if (json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "cond");
        json_dataset(j, sel, "");
        const std::string path = find_dataset(sel.name).path;
        j.key("matrices").begin_array();
        for (const DatasetCond& r : rs) {
            j.begin_object().kv("label", r.head->label).kv("weight", r.weight);
            json_members(j, r.a, path, r.head->group + "/" + r.weight);
            j.end_object();
        }
        j.end_array();
        report.empty() ? j.key("report").null() : j.kv("report", report);
        j.end_object();
        j.finish();
        return;
    }
    std::printf("cond of W_Q, W_K, W_V for --dataset %s (headline convention %s)\n",
                sel.describe().c_str(), rs.empty() ? "-" : to_string(rs[0].a.headline));
    for (const DatasetCond& r : rs) {
        const Kappa& k = r.a.headline_kappa();
        std::printf(
            "%-24s %s  %ld x %ld  sigma_max %s  sigma_min %s  kappa %s  rank %ld\n",
            r.head->label.c_str(), r.weight.c_str(), static_cast<long>(r.a.rows),
            static_cast<long>(r.a.cols), format_number(r.a.svd.sigma[0], 6).c_str(),
            format_number(r.a.svd.sigma[r.a.svd.sigma.size() - 1], 6).c_str(),
            format_number(k.value, enclosure_digits(k.enclosure.lo, k.enclosure.hi)).c_str(),
            static_cast<long>(r.a.nz.rank));
    }
    std::printf("report: %s\n", report.empty() ? "none (--no-report)" : report.c_str());
}

// cond --dataset: W_Q, W_K, W_V of every selected head (weights only; X is not read).
int run_cond_dataset(const Invocation& inv, const std::string& text, const CondOptions& co,
                     const CommonOptions& common) {
    const DatasetSelector sel = dataset_selector(text);
    const std::string target = report_target(common, "cond.h5");
    const std::vector<SelectedHead> heads = load_selected_heads(sel, /*need_inputs=*/false);
    const std::vector<DatasetCond> rs = analyse_dataset(heads, co);
    std::optional<ReportWriter> rep;
    if (!target.empty()) {
        rep.emplace(target, provenance(inv, 0));
        write_dataset_report(rep->root(), sel, heads, rs);
        rep->commit();
    }
    print_dataset(sel, rs, common.json, rep ? rep->target() : "");
    return 0;
}

// The matrix path of --input: --matrix, or --dataset PATH (its old spelling, with a note).
// Returns "" when the run is a --dataset selection instead.
std::string matrix_path(const std::string& input, std::string matrix, const std::string& dataset) {
    if (input.empty()) {
        if (dataset.empty())
            fail_usage("cond: give --input F.h5 --matrix PATH, or --dataset NAME[:layer[:head]]");
        if (!matrix.empty())
            fail_usage(
                "cond: --matrix reads from --input; with --dataset the matrices are the "
                "selected heads' W_Q, W_K and W_V");
        return "";
    }
    if (!dataset.empty()) {
        if (!matrix.empty())
            fail_usage("cond: give --matrix once (--dataset PATH is its old name)");
        log("note: 'cond --input F --dataset PATH' is deprecated: write --matrix " + dataset +
            " (--dataset now selects a named dataset, see attnspec dataset list)");
        matrix = dataset;
    }
    if (matrix.empty()) fail_usage("cond: --input needs --matrix PATH (the HDF5 dataset to read)");
    return matrix;
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
    std::string input, matrix, dataset, convention = "strict", method = "auto", max_memory;
    CondOptions co;
    CommonOptions common;
    desc.add_options()("input,i", po::value(&input), "HDF5 file holding the matrix")(
        "matrix,m", po::value(&matrix), "with --input: the matrix's path, e.g. /W_Q")(
        "dataset,d", po::value(&dataset), "named dataset NAME[:l[:h]]: kappa of W_Q, W_K, W_V")(
        "convention", po::value(&convention)->default_value("strict"),
        "kappa of the headline: strict or nz")("rtol",
                                               real_value(&co.rtol, "--rtol", -1e300, 1e300),
                                               "rank threshold in [0, 1) (default max(m,n) eps)")(
        "method", po::value(&method)->default_value("auto"),
        "SVD: auto, jacobi, bdc, gesdd, gejsv")("out,o", po::value(&common.out),
                                                "report path (default reports/out/cond.h5)");
    add_common_options(desc, common, "cond.h5", kNoReport | kJson);
    add_memory_option(desc, max_memory);
    po::variables_map vm;
    if (!parse(inv, "cond", kSynopsis, kHelp, desc, vm)) return 0;
    apply_memory_option(max_memory);
    co.headline = kappa_convention_from_string(convention);
    co.svd.method = svd_method_from_string(method);
    if (!(co.rtol < 0) && !(co.rtol < 1))
        fail_usage("cond: --rtol must be below 1 (negative = default)");
    const std::string path = matrix_path(input, matrix, dataset);
    if (path.empty()) return run_cond_dataset(inv, dataset, co, common);
    const std::string target = report_target(common, "cond.h5", {input});
    const Eigen::MatrixXd M = load_matrix_input(input, path);
    const CondAnalysis a = cond_analysis(M, co);
    std::optional<ReportWriter> rep;
    if (!target.empty()) {
        rep.emplace(target, provenance(inv, 0));
        write_cond_section(rep->root(), a, input, path);
        rep->commit();
    }
    (common.json ? print_json : print_text)(a, input, path, rep ? rep->target() : "");
    return 0;
}

}  // namespace attnspec::cli
