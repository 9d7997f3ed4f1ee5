// The check-kernel report section and its page (report/kernel_check_report.hpp).
#include "attnspec/report/kernel_check_report.hpp"

#include "attnspec/base/errors.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/io/kernel_reproducer.hpp"
#include "attnspec/report/names.hpp"

namespace attnspec {
namespace {

namespace kn = names::kernel_check;
using kernels::ElementReport;
using kernels::KernelCheckResult;

// The columns of one element list, in the order the group holds them.
constexpr const char* kColumns[] = {"got", "reference", "error", "bound", "allowed", "baseline"};

// A list of worst elements as a group: index (n x rank) and one column per kColumns entry.
// Nothing is written for an empty list.
void write_elements(H5Group& g, const char* name, const std::vector<ElementReport>& list) {
    if (list.empty()) return;
    H5Group L = g.group(name);
    const auto rank = static_cast<Eigen::Index>(list.front().index.size());
    Eigen::MatrixXd index(static_cast<Eigen::Index>(list.size()), rank);
    std::vector<double> cols[6];
    for (std::size_t i = 0; i < list.size(); ++i) {
        const ElementReport& e = list[i];
        for (Eigen::Index c = 0; c < rank && c < static_cast<Eigen::Index>(e.index.size()); ++c)
            index(static_cast<Eigen::Index>(i), c) = double(e.index[static_cast<std::size_t>(c)]);
        const double v[6] = {e.got, e.reference, e.error, e.bound, e.allowed, e.baseline};
        for (int c = 0; c < 6; ++c) cols[c].push_back(v[c]);
    }
    L.write(kn::kIndex, index);
    for (int c = 0; c < 6; ++c) L.write(kColumns[c], cols[c]);
}

void write_tensor(H5Group& G, const std::string& name, const KernelCheckResult& r) {
    H5Group T = G.group(name);
    T.attr(kn::kVerdict, verdict_name(r.verdict)), T.attr(kn::kSummary, r.summary);
    T.attr("rows", std::int64_t(r.rows)), T.attr("masked_rows", std::int64_t(r.masked_rows));
    T.attr("rows_beyond_rule", std::int64_t(r.rows_beyond_rule));
    T.attr("elements_beyond_bound", std::int64_t(r.elements_beyond_bound));
    T.attr("nonfinite", std::int64_t(r.nonfinite));
    T.attr("nonfinite_expected", std::int64_t(r.nonfinite_expected));
    T.attr("nonfinite_mismatch", std::int64_t(r.nonfinite_mismatch));
    T.attr("tensor_error", r.tensor_error), T.attr("tensor_baseline", r.tensor_baseline);
    T.attr("tensor_allowed", r.tensor_allowed), T.attr("tensor_floor", r.tensor_floor);
    T.attr("worst_rule_ratio", r.worst_rule_ratio);
    T.attr("worst_bound_ratio", r.worst_bound_ratio);
    T.attr("baseline_bound_ratio", r.baseline_bound_ratio);
    T.attr("max_reference_error", r.max_reference_error);
    T.attr("has_lse", std::int64_t(r.has_lse));
    if (r.has_lse) {
        T.attr("lse_error", r.lse_error), T.attr("lse_baseline", r.lse_baseline);
        T.attr("lse_allowed", r.lse_allowed), T.attr("lse_bound_ratio", r.lse_bound_ratio);
        T.attr("lse_beyond_bound", std::int64_t(r.lse_beyond_bound));
        write_elements(T, kn::kWorstLse, r.worst_lse);
    }
    write_elements(T, kn::kWorstByBound, r.worst_by_bound);
    write_elements(T, kn::kWorstByRule, r.worst_by_rule);
}

std::string fmt(double x) { return format_cell(x, 4); }

// The worst elements of `list` (a group written by write_elements) as a table. DataError when
// `index` is not (n, rank) or a column not (n,); every shape is checked and the whole table held
// against the memory budget before anything is read.
PageTable element_table(const H5Reader& r, const std::string& list) {
    const std::string ix_path = list + "/" + kn::kIndex;
    const auto dims = r.shape(ix_path);
    if (dims.size() != 2)
        fail_data(r.path() + ": dataset '" + ix_path + "' is not 2-D (rank " +
                  std::to_string(dims.size()) + ")");
    const std::size_t n = dims[0], rank = dims[1];
    for (const char* c : kColumns) {
        const auto d = r.shape(list + "/" + c);
        if (d.size() != 1 || d[0] != n)
            fail_data(r.path() + ": dataset '" + list + "/" + c + "' is not 1-D of length " +
                      std::to_string(n));
    }
    r.check_fits(double(n) * double(rank + 6) * (8 + 64),
                 "reading and printing " + std::to_string(n) + " elements of " + list);
    std::vector<hsize_t> got;
    const std::vector<double> index = r.array(ix_path, got, true);
    std::vector<std::string> ix;
    ix.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::int64_t> e;
        e.reserve(rank);
        for (std::size_t c = 0; c < rank; ++c)
            e.push_back(r.count_value(index[i * rank + c], ix_path));
        ix.push_back(kernels::shape_text(e));
    }
    PageTable t;
    t.convention =
        "error = |got - reference|; bound: the rounding bound there; allowed: the "
        "row's factor x baseline error + floor";
    t.text("index", ix);
    for (const char* c : kColumns) t.numbers(c, r.array(list + "/" + c, got, true), 7);
    return t;
}

}  // namespace

void write_kernel_check_section(H5Group& root, const kernels::KernelCheckRun& run) {
    H5Group G = root.group(kn::kGroup);
    G.attr(kn::kOp, run.op), G.attr(kn::kVerdict, verdict_name(run.verdict));
    G.attr(kn::kSummary, run.summary), G.attr("dtype", run.dtype);
    G.attr("accumulate", run.accumulate), G.attr("mask", run.mask);
    G.attr("scale", run.scale), G.attr("factor", run.factor), G.attr("seconds", run.seconds);
    G.attr("inputs", run.inputs), G.attr("output", run.output);
    G.attr("reproducer", run.reproducer);
    if (run.infsa) G.attr("gamma", run.gamma), G.attr("eps", run.eps);
    if (!run.correction.empty()) G.attr("correction", run.correction), G.attr("lambda", run.lambda);
    if (!run.generator.empty()) {
        G.attr("case", run.generator), G.attr("case_seed", std::to_string(run.seed));
        G.write("case_shape", run.shape);
    }
    std::vector<std::string> names;
    for (const auto& t : run.tensors) names.push_back(t.first);
    G.write(kn::kTensors, names);
    if (!run.tensors.empty()) {
        const KernelCheckResult& r = *run.tensors.front().second;
        G.write("q_shape", r.q_shape), G.write("k_shape", r.k_shape);
        G.write("v_shape", r.v_shape), G.attr("inputs_exact", std::int64_t(r.inputs_exact));
    }
    for (const auto& [name, r] : run.tensors) write_tensor(G, name, *r);
}

Page kernel_check_page(const H5Reader& r) {
    const std::string g = std::string("/") + kn::kGroup;
    Page p;
    p.kind = "check-kernel";
    const std::string op = r.attr_as_text(g, kn::kOp);
    p.summary.push_back("Checked: " + op + " at dtype " + r.attr_as_text(g, "dtype") +
                        ", accumulate " + r.attr_as_text(g, "accumulate") + ", mask " +
                        r.attr_as_text(g, "mask") + ", scale " + fmt(r.attr_double(g, "scale")) +
                        ", factor " + fmt(r.attr_double(g, "factor")) + "; inputs " +
                        r.attr_as_text(g, "inputs") + ", output " + r.attr_as_text(g, "output") +
                        ".");
    p.summary.push_back("Verdict: " + r.attr_as_text(g, kn::kVerdict) + ". " +
                        r.attr_as_text(g, kn::kSummary));
    if (r.has_attr(g, "case"))
        p.summary.push_back("Inputs from the stress case " + r.attr_as_text(g, "case") + ", seed " +
                            r.attr_as_text(g, "case_seed") + ".");
    const std::string repro = r.attr_as_text(g, "reproducer");
    if (!repro.empty()) {
        kernels::KernelCheckRun run;  // the options the replay needs
        run.op = op, run.dtype = r.attr_as_text(g, "dtype");
        run.accumulate = r.attr_as_text(g, "accumulate"), run.mask = r.attr_as_text(g, "mask");
        run.scale = r.attr_double(g, "scale"), run.factor = r.attr_double(g, "factor");
        if (r.has_attr(g, "correction"))
            run.correction = r.attr_as_text(g, "correction"),
            run.lambda = r.attr_double(g, "lambda");
        p.summary.push_back("Reproducer: " + repro + "; replay: `" + reproducer_replay(run, repro) +
                            "`.");
    }
    const std::vector<std::string> tensors = r.strings(g + "/" + kn::kTensors);
    if (tensors.size() > 16)  // o, lse; dq, dk, dv; do_t: a page per output, never thousands
        fail_data(r.path() + ": '" + g + "/" + kn::kTensors + "' lists " +
                  std::to_string(tensors.size()) + " tensors (at most 16)");
    for (const std::string& name : tensors) {
        const std::string t = g + "/" + name;
        PageSection sec{"check-kernel/" + name, name + ": " + r.attr_as_text(t, kn::kVerdict), {}};
        sec.para(r.attr_as_text(t, kn::kSummary));
        PageTable fig;
        fig.convention = "errors are absolute, in the output's units; ratios <= 1 are within";
        std::vector<std::string> what;
        std::vector<double> val;
        for (const char* a : {"rows", "masked_rows", "rows_beyond_rule", "elements_beyond_bound",
                              "nonfinite", "tensor_error", "tensor_baseline", "tensor_allowed",
                              "tensor_floor", "worst_rule_ratio", "worst_bound_ratio",
                              "baseline_bound_ratio", "max_reference_error"}) {
            what.emplace_back(a);
            val.push_back(r.attr_double(t, a));
        }
        fig.text("figure", what).numbers("value", val, 6);
        sec.table(fig);
        for (const char* list : {kn::kWorstByBound, kn::kWorstByRule, kn::kWorstLse}) {
            if (!r.exists(t + "/" + list)) continue;
            sec.para(std::string("Worst elements (") + list + "):");
            sec.table(element_table(r, t + "/" + list));
        }
        p.sections.push_back(sec);
    }
    return p;
}

}  // namespace attnspec
