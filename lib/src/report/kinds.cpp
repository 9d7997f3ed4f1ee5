// Pages of the single-analysis reports: /jacobian, /cond, /neumann, /fidelity (reports/SCHEMA.md),
// and which kind a report is.
#include "attnspec/report/kinds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/infsa/fidelity_table.hpp"
#include "attnspec/io/provenance.hpp"
#include "attnspec/report/kernel_check_report.hpp"
#include "attnspec/report/names.hpp"

namespace attnspec {

namespace {

namespace sp = names::spectrum;
namespace jn = names::jacobian;
namespace cn = names::cond;
namespace nn = names::neumann;
namespace fn = names::fidelity;
namespace dr = names::dataset_run;

// The length of the 1-D dataset `d` that sets a table's rows (DataError when it is not 1-D: a
// scalar or a matrix where a column belongs). One shape query; nothing is read.
std::size_t column_length(const H5Reader& r, const std::string& d) {
    const auto dims = r.shape(d);
    if (dims.size() != 1)
        fail_data(r.path() + ": dataset '" + d + "' is not 1-D (rank " +
                  std::to_string(dims.size()) + ")");
    return dims[0];
}

// The columns of one page table: 1-D numeric datasets of exactly n values each (DataError
// naming the first that is not), every shape checked and the whole table (each value read and
// printed as a cell of some 64 bytes) held against the memory budget before any is read.
std::vector<std::vector<double>> columns(const H5Reader& r, const std::vector<std::string>& ds,
                                         std::size_t n) {
    for (const std::string& d : ds) {
        const auto dims = r.shape(d);
        if (dims.size() != 1 || dims[0] != n)
            fail_data(r.path() + ": dataset '" + d + "' is not 1-D of length " + std::to_string(n));
    }
    r.check_fits(double(n) * double(ds.size()) * (8 + 64),
                 "reading and printing " + std::to_string(ds.size()) + " columns of " +
                     std::to_string(n) + " values");
    std::vector<std::vector<double>> out;
    out.reserve(ds.size());
    for (const std::string& d : ds) out.push_back(r.vector(d));
    return out;
}
double attr_or(const H5Reader& r, const std::string& o, const std::string& a, double dflt) {
    return r.has_attr(o, a) ? r.attr_double(o, a) : dflt;
}
std::string text_or(const H5Reader& r, const std::string& o, const std::string& a,
                    const std::string& dflt = "") {
    return r.has_attr(o, a) ? r.attr_as_text(o, a) : dflt;
}
std::string fmt(double x, int digits = 4) { return format_cell(x, digits); }
std::string range(double lo, double hi) {
    const int p = enclosure_digits(lo, hi);
    return "[" + format_number(lo, p) + ", " + format_number(hi, p) + "]";
}
std::string major(const std::string& version) { return version.substr(0, version.find('.')); }

// The kappa_strict / kappa_nz groups under `g` as one table (cond and Jacobian spectra).
PageTable kappa_table(const H5Reader& r, const std::string& g) {
    std::vector<std::string> conv;
    std::vector<double> v, lo, hi, rank, smin, rtol;
    for (const char* c : {"strict", "nz"}) {
        const std::string k = g + "/" + sp::kKappaPrefix + c;
        if (!r.exists(k)) continue;
        conv.emplace_back(c);
        v.push_back(r.attr_double(k, sp::kValue)), lo.push_back(r.attr_double(k, sp::kEnclosureLo));
        hi.push_back(r.attr_double(k, sp::kEnclosureHi)),
            rank.push_back(r.attr_double(k, sp::kRank));
        smin.push_back(r.attr_double(k, sp::kSigmaMinUsed)),
            rtol.push_back(r.attr_double(k, sp::kRtol));
    }
    PageTable t;
    t.convention =
        "kappa strict = sigma_max/sigma_min over every singular value (inf when one is 0); "
        "kappa nz = sigma_max over the smallest singular value above rtol * sigma_max";
    t.text("convention", conv).enclosed("kappa", v, lo, hi).intervals("enclosure", lo, hi);
    t.numbers("rank", rank);
    return t.numbers("sigma_min used", smin).numbers("rtol", rtol, 3);
}
}  // namespace

const std::vector<std::pair<std::string, std::string>>& report_kinds() {
    static const std::vector<std::pair<std::string, std::string>> k{
        {"verify", check_runs_group()}, {"jacobian", jn::kGroup},
        {"cond", cn::kGroup},           {"neumann", nn::kGroup},
        {"fidelity", fn::kGroup},       {"check-kernel", names::kernel_check::kGroup}};
    return k;
}

std::string report_kind(const H5Reader& r) {
    if (!r.has_attr("/", "schema_version"))
        fail_data(r.path() + " is HDF5 but not an attnspec report (no schema_version)");
    const std::string v = r.attr_as_text("/", "schema_version");
    if (major(v) != major(kSchemaVersion))
        fail_data(r.path() + ": report schema_version '" + v + "'; this attnspec reads schema " +
                  major(kSchemaVersion) + ".x (" + kSchemaVersion + ")");
    std::string groups, known;
    for (const auto& g : r.children("/")) {
        for (const auto& [kind, group] : report_kinds())
            if (g == group) return kind;
        groups += (groups.empty() ? "/" : ", /") + g;
    }
    // cond / neumann over the heads of a dataset (--dataset): /heads/<k>/[<matrix>/]<kind>.
    if (const auto found = dataset_groups(r); !found.empty()) return found.front().first;
    for (const auto& [kind, group] : report_kinds()) known += (known.empty() ? "" : ", ") + kind;
    const std::string root_kind = text_or(r, "/", "kind");
    fail_data(r.path() + ": a report of unknown kind (" +
              (root_kind.empty() ? "" : "root kind '" + root_kind + "', ") +
              (groups.empty() ? "no top-level group" : "top-level groups " + groups) +
              "); this attnspec renders " + known + " reports");
}

Page report_page(const H5Reader& r, const std::string& kind, const ReportSummary& s) {
    if (kind == "verify") return verify_page(s, r.path());
    if (kind == "jacobian") return jacobian_page(r);
    if ((kind == "cond" || kind == "neumann") && !r.exists("/" + kind))
        return dataset_page(r, kind);
    if (kind == "cond") return cond_page(r);
    if (kind == "neumann") return neumann_page(r);
    if (kind == "check-kernel") return kernel_check_page(r);
    return fidelity_page(r);
}

std::vector<std::pair<std::string, std::string>> dataset_groups(const H5Reader& r) {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string root = std::string("/") + dr::kHeads;
    if (!r.is_group(root)) return out;
    auto heads = r.children(root);
    std::stable_sort(heads.begin(), heads.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;  // 0, 1, ..., 10 in order
    });
    for (const auto& h : heads) {
        const std::string hg = root + "/" + h, neumann = hg + "/" + nn::kGroup;
        if (!r.is_group(hg)) continue;
        if (r.is_group(neumann)) out.emplace_back("neumann", neumann);
        for (const auto& m : r.children(hg))
            if (r.is_group(hg + "/" + m) && r.is_group(hg + "/" + m + "/" + cn::kGroup))
                out.emplace_back("cond", hg + "/" + m + "/" + cn::kGroup);
    }
    return out;
}

Page dataset_page(const H5Reader& r, const std::string& kind) {
    std::vector<std::string> labels;
    const std::string label_set = std::string("/") + dr::kDatasetHeads;
    if (r.exists(label_set)) labels = r.strings(label_set);
    Page p;
    p.kind = kind;
    std::size_t n = 0;
    for (const auto& [k, g] : dataset_groups(r)) {
        if (k != kind) continue;
        // /heads/<h>/[<matrix>/]<kind>: the head's label, and the matrix for cond.
        const std::string rest = g.substr(std::string("/").append(dr::kHeads).size() + 1);
        const std::string h = rest.substr(0, rest.find('/'));
        const std::size_t hi = std::strtoul(h.c_str(), nullptr, 10);
        std::string label = hi < labels.size() ? labels[hi] : "head " + h;
        if (kind == "cond")
            label += " " + rest.substr(h.size() + 1, rest.rfind('/') - h.size() - 1);
        Page one = kind == "cond" ? cond_page(r, g) : neumann_page(r, g);
        if (n < 8)
            for (const auto& line : one.summary) p.summary.push_back(label + ": " + line);
        for (auto& sec : one.sections) {
            sec.title = label + ": " + sec.title;
            p.sections.push_back(std::move(sec));
        }
        ++n;
    }
    if (n == 0) fail_data(r.path() + ": no /" + dr::kHeads + "/<k>/" + kind + " group");
    const std::string sel = text_or(r, "/", dr::kDataset, "a dataset");
    p.summary.insert(
        p.summary.begin(),
        "Dataset run: " + kind + " on " + std::to_string(n) + " " +
            (kind == "cond" ? "matrices" : "heads") + " selected by `" + sel + "`" +
            (r.has_attr("/", dr::kBiasForm) ? " (" + text_or(r, "/", dr::kBiasForm) + ")"
                                            : std::string()) +
            (n > 8 ? "; the first 8 are summarised below, every one has its section" : "") + ".");
    return p;
}

Page jacobian_page(const H5Reader& r) {
    const std::string g = std::string("/") + jn::kGroup;
    Page p;
    p.kind = "jacobian";
    const std::string wrt = r.attr_as_text(g, jn::kWrt), corr = r.attr_as_text(g, jn::kCorrection);
    std::vector<std::string> heads, names;
    std::vector<double> N, D, d, s, frob, maxabs, secs;
    std::vector<double> kv, klo, khi, smax, smin, rank;
    for (const auto& c : r.children(g)) {
        const std::string h = g + "/" + c;
        const std::string prefix = jn::kHeadPrefix;
        if (c.rfind(prefix, 0) != 0 || !r.is_group(h)) continue;
        heads.push_back(c.substr(prefix.size())), names.push_back(text_or(r, h, jn::kName));
        N.push_back(r.attr_double(h, jn::kN)), D.push_back(r.attr_double(h, jn::kD));
        d.push_back(r.attr_double(h, jn::kd)), s.push_back(r.attr_double(h, jn::ks));
        frob.push_back(attr_or(r, h, jn::kFrobenius, NAN)),
            maxabs.push_back(attr_or(r, h, jn::kMaxAbs, NAN));
        secs.push_back(attr_or(r, h, jn::kSeconds, NAN));
        const std::string spec = h + "/" + jn::kSpectrum, strict = spec + "/" + sp::kKappaStrict;
        if (!r.exists(spec)) continue;
        kv.push_back(r.attr_double(strict, sp::kValue));
        klo.push_back(r.attr_double(strict, sp::kEnclosureLo));
        khi.push_back(r.attr_double(strict, sp::kEnclosureHi));
        smax.push_back(r.attr_double(spec + "/" + sp::kSigmaMax, sp::kSigma));
        smin.push_back(r.attr_double(spec + "/" + sp::kSigmaMin, sp::kSigma));
        rank.push_back(r.attr_double(spec, sp::kRank));
    }
    const std::string form = "J = d vec(A) / d " +
                             std::string(wrt == "input" ? "vec(X)" : "[W_Q, W_K, W_V]") + " (" +
                             text_or(r, g, jn::kVec) + "), evaluated at " +
                             text_or(r, g, jn::kEvaluatedAt, "W") + ", correction " + corr;
    p.summary.push_back("Tested: the exact Jacobian of " + std::to_string(heads.size()) +
                        " head(s) with respect to the " + wrt + ", source " +
                        text_or(r, g, jn::kSource) + ".");
    if (r.has_attr(g, jn::kFrobeniusLayer))
        p.summary.push_back("Layer ||J||_F = " + fmt(r.attr_double(g, jn::kFrobeniusLayer)) + ".");
    if (!kv.empty()) {
        const auto w = std::max_element(kv.begin(), kv.end()) - kv.begin();
        p.summary.push_back("Look first at head " + heads[size_t(w)] +
                            ": the largest kappa(J) (strict) = " +
                            format_enclosure(kv[size_t(w)], klo[size_t(w)], khi[size_t(w)]) + ".");
    } else {
        p.summary.emplace_back("No spectrum stored (run `attnspec jacobian --svd` for kappa(J)).");
    }
    PageSection sec{"jacobian", "Jacobian per head", {}};
    PageTable t;
    t.convention = form + "; s as stored per head";
    t.text("head", heads).text("name", names).numbers("N", N).numbers("D", D).numbers("d", d);
    t.numbers("s", s)
        .numbers("||J||_F", frob)
        .numbers("max |J_ij|", maxabs)
        .durations("time", secs);
    sec.para("Stored: " + text_or(r, g, jn::kStored) +
             "; X shared by the heads: " + text_or(r, g, jn::kSharedX) + ".")
        .table(t);
    if (kv.size() == heads.size() && !kv.empty()) {
        PageTable k;
        k.convention = "kappa strict = sigma_max/sigma_min over every singular value of J";
        k.text("head", heads).numbers("sigma_max", smax).numbers("sigma_min", smin);
        k.numbers("rank", rank).enclosed("kappa(J) strict", kv, klo, khi);
        k.intervals("enclosure", klo, khi);
        sec.para("Spectra (`--svd`): rigorous enclosures, proofs/spectral_enclosure.md.").table(k);
    }
    p.sections.push_back(sec);
    return p;
}

Page cond_page(const H5Reader& r, const std::string& g) {
    Page p;
    p.kind = "cond";
    const std::string conv = r.attr_as_text(g, cn::kHeadlineConvention);
    const std::string k = g + "/" + sp::kKappaPrefix + conv;
    if (!r.exists(k)) fail_data(r.path() + ": no group '" + k + "'");
    const double kap = r.attr_double(k, sp::kValue);
    p.summary.push_back("Tested: kappa of " + r.attr_as_text(g, cn::kDataset) + " in " +
                        r.attr_as_text(g, cn::kInput) + " (" + fmt(r.attr_double(g, cn::kRows)) +
                        " x " + fmt(r.attr_double(g, cn::kCols)) + ", " +
                        text_or(r, g, cn::kInputDtype) + ") with " +
                        r.attr_as_text(g, cn::kMethod) + ".");
    p.summary.push_back("Headline (" + conv + "): kappa = " +
                        format_enclosure(kap, r.attr_double(k, sp::kEnclosureLo),
                                         r.attr_double(k, sp::kEnclosureHi)) +
                        ", rank " + fmt(r.attr_double(k, sp::kRank)) + ".");
    p.summary.push_back(
        "Decomposition residuals: ||M - U S V^T||_F = " + fmt(r.attr_double(g, cn::kResidual), 3) +
        ", ||U^T U - I||_F = " + fmt(r.attr_double(g, cn::kEtaU), 3) +
        ", ||V^T V - I||_F = " + fmt(r.attr_double(g, cn::kEtaV), 3) + "; time " +
        format_duration(r.attr_double(g, cn::kSeconds)) + ".");
    PageSection sec{"cond", "Condition number", {}};
    sec.table(kappa_table(r, g));
    const std::string sigma = g + "/" + cn::kSigma;
    const std::size_t n = column_length(r, sigma);
    const auto cols = columns(r, {sigma, g + "/" + cn::kSigmaLo, g + "/" + cn::kSigmaHi}, n);
    const auto &sig = cols[0], &lo = cols[1], &hi = cols[2];
    const auto basis = r.strings(g + "/" + cn::kBasis);
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < n; ++i)
        if (n <= 40 || i < 20 || i + 20 >= n) rows.push_back(i);
    std::vector<std::string> idx, bas;
    std::vector<double> a, b, c;
    for (auto i : rows)
        idx.push_back(std::to_string(i + 1)), a.push_back(sig[i]), b.push_back(lo[i]),
            c.push_back(hi[i]), bas.push_back(i < basis.size() ? basis[i] : "");
    PageTable t;
    t.convention = "singular values descending, each with its certified enclosure [lo, hi]";
    t.text("i", idx).enclosed("sigma_i", a, b, c).intervals("enclosure", b, c);
    sec.para(n > 40 ? "The 20 largest and 20 smallest of " + std::to_string(n) +
                          " singular values (all in the report)."
                    : "All " + std::to_string(n) + " singular values.")
        .table(t.text("basis", bas));
    p.sections.push_back(sec);
    return p;
}

Page neumann_page(const H5Reader& r, const std::string& g) {
    Page p;
    p.kind = "neumann";
    const double gamma = r.attr_double(g, nn::kGamma), rlo = r.attr_double(g, nn::kRhoLo),
                 rhi = r.attr_double(g, nn::kRhoHi);
    const std::string tr = g + "/" + nn::kTruncation, ce = g + "/" + nn::kCentralities;
    const std::size_t k = column_length(r, tr + "/" + nn::kK);
    const auto cols =
        columns(r, {tr + "/" + nn::kK, tr + "/" + nn::kError, tr + "/" + nn::kBound}, k);
    const auto &K = cols[0], &err = cols[1], &bound = cols[2];
    std::vector<std::string> ok;
    std::string broken;
    for (std::size_t i = 0; i < k; ++i) {
        ok.emplace_back(err[i] <= bound[i] ? "yes" : "NO");
        if (err[i] > bound[i] && broken.empty()) broken = fmt(K[i]);
    }
    const double kt = r.attr_double(tr, nn::kKForTarget);
    p.summary.push_back("Tested: the Neumann kernel of a " + fmt(r.attr_double(g, nn::kN)) +
                        "-token " + r.attr_as_text(g, nn::kAffinity) + " affinity (" +
                        r.attr_as_text(g, nn::kSource) + "), gamma = " + fmt(gamma, 6) + ".");
    p.summary.push_back(
        "rho(A_hat) in " + range(rlo, rhi) + ", so gamma rho = " + fmt(gamma * rhi, 4) +
        (gamma * rhi < 1 ? " < 1: the series converges." : " >= 1: no convergence."));
    p.summary.push_back(
        "Truncation: " +
        (kt < 0
             ? std::string("no K reaches the target (gamma ||A_hat||_2 >= 1)")
             : "K = " + fmt(kt) + " reaches the target " + fmt(r.attr_double(tr, nn::kTarget), 3)) +
        "; the bound holds at " +
        (broken.empty() ? "every K." : "not every K: look first at K = " + broken + "."));
    p.summary.push_back("min R = " + fmt(r.attr_double(ce, nn::kMinLeak)) + " (absorbing reading " +
                        (r.attr_as_text(ce, nn::kProbabilistic) == "yes" ? "valid" : "invalid") +
                        ").");
    PageSection sec{"neumann", "Neumann kernel", {}};
    PageTable t;
    t.convention =
        "error = ||N - N_K||_2 (largest singular value); bound = (gamma ||A_hat||_2)^(K+1) / "
        "(1 - gamma ||A_hat||_2) with the upper ||A_hat||_2 = " +
        fmt(r.attr_double(g, nn::kNorm2Hi), 6);
    t.numbers("K", K).numbers("error", err).numbers("bound", bound).text("error <= bound", ok);
    sec.table(t);
    PageTable inv;
    std::vector<std::string> names;
    std::vector<double> vals;
    const std::string invariants = g + "/" + nn::kInvariants;
    for (const auto& a : r.attr_names(invariants))
        names.push_back(a), vals.push_back(r.attr_double(invariants, a));
    inv.convention = "N = (I - gamma A_hat)^-1; residual = ||(I - gamma A_hat) N - I||_F";
    inv.text("invariant", names);
    inv.cols.emplace_back();
    for (double v : vals) inv.cols.back().push_back(fmt(v, 4));
    inv.names.emplace_back("value"), inv.right.push_back(true);
    sec.para("Invariants of the computed kernel.").table(inv);
    p.sections.push_back(sec);
    return p;
}

Page fidelity_page(const H5Reader& r) {
    const std::string g = std::string("/") + fn::kGroup, family = g + "/" + fn::kFamily;
    Page p;
    p.kind = "fidelity";
    const std::size_t n = column_length(r, g + "/" + fn::kN);
    const auto fam = r.strings(family);
    if (fam.size() != n)
        fail_data(r.path() + ": '" + family + "' is not of length " + std::to_string(n));
    const auto cols = columns(r,
                              {g + "/" + fn::kN, g + "/" + kFidelityMetrics[0],  // cos_left
                               g + "/" + kFidelityMetrics[1]},                   // cos_right
                              n);
    const auto &N = cols[0], &cl = cols[1], &cr = cols[2];
    // One row per (family, N): records, min / median / max of cos_left, min cos_right.
    std::map<std::pair<std::string, double>, std::vector<std::size_t>> cells;
    for (std::size_t i = 0; i < n; ++i) cells[{fam[i], N[i]}].push_back(i);
    std::vector<std::string> fams;
    std::vector<double> Ns, count, mn, med, mx, mnr;
    std::size_t worst = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (!(cl[i] >= cl[worst])) worst = i;
    for (const auto& [key, idx] : cells) {
        std::vector<double> v, w;
        for (auto i : idx) v.push_back(cl[i]), w.push_back(cr[i]);
        std::sort(v.begin(), v.end());
        fams.push_back(key.first), Ns.push_back(key.second), count.push_back(double(idx.size()));
        mn.push_back(v.front()), med.push_back(v[v.size() / 2]), mx.push_back(v.back());
        mnr.push_back(*std::min_element(w.begin(), w.end()));
    }
    p.summary.push_back("Tested: Linear-InfSA fidelity on " + std::to_string(n) + " records (" +
                        std::to_string(cells.size()) +
                        " family x N cells), gamma = " + fmt(r.attr_double(g, fn::kGamma), 6) +
                        ", mode " + r.attr_as_text(g, fn::kMode) + ", affinity " +
                        r.attr_as_text(g, fn::kAffinity) + ".");
    if (n)
        p.summary.push_back("Look first at the lowest cos(a, left Perron) = " + fmt(cl[worst], 4) +
                            ": family " + fam[worst] + ", N = " + fmt(N[worst]) + ".");
    PageSection sec{"fidelity", "Fidelity by family and N", {}};
    PageTable t;
    t.convention =
        "cos_left = cos(a, v) with v the left Perron vector of A_hat; cos_right = cos(a, u) "
        "with the right one (nan: not computed); weights " +
        text_or(r, g, fn::kWeights);
    t.text("family", fams).numbers("N", Ns).numbers("records", count).numbers("min cos_left", mn);
    t.numbers("median cos_left", med).numbers("max cos_left", mx).numbers("min cos_right", mnr);
    p.sections.push_back(sec.table(t));
    return p;
}

}  // namespace attnspec
