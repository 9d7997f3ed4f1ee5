// The stdout of `attnspec jacobian` (report/jacobian_output.hpp).
#include "attnspec/report/jacobian_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "attnspec/base/format.hpp"
#include "attnspec/report/kappa_text.hpp"
#include "attnspec/report/spectrum_record.hpp"

namespace attnspec {

namespace {
// "" when every head is described by the header line, else " (name; N, D, d = ...; s = ...)".
std::string head_label(const AttentionHeads& in, std::size_t h) {
    const Head& hd = in.heads[h];
    if (in.uniform()) return in.names[h] == std::to_string(h) ? "" : " (" + in.names[h] + ")";
    std::ostringstream os;
    os << " (" << in.names[h] << "; N, D, d = " << hd.N() << ", " << hd.D() << ", " << hd.d()
       << "; s = " << hd.s << ")";
    return os.str();
}

}  // namespace

void json_jacobian(JsonWriter& j, const AttentionHeads& in, const JacobianAnalysis& a,
                   const std::string& corr, const std::string& bias_form,
                   const std::string& report) {
    const bool u = in.uniform();
    const Head& h0 = in.heads[0];
    auto dim = [&](const char* k, Eigen::Index v) {
        u ? j.kv(k, static_cast<std::int64_t>(v)) : j.key(k).null();
    };
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
}

void print_jacobian_text(std::ostream& os, const AttentionHeads& in, const JacobianAnalysis& a,
                         const std::string& corr, const std::string& bias_form,
                         const std::string& report, const std::string& not_stored_cause) {
    const std::string what = jacobian_symbol(a.plan.wrt);
    const Head& h0 = in.heads[0];
    os << what << " of attention, H = " << in.size();
    if (in.uniform())
        os << ", (N, D, d) = (" << h0.N() << ", " << h0.D() << ", " << h0.d() << "), s = " << h0.s;
    else
        os << ", (N, D, d) and s per head";
    os << ", correction " << corr << ", " << bias_form << "\n";
    for (std::size_t h = 0; h < a.heads.size(); ++h) {
        const HeadJacobian& r = a.heads[h];
        os << "head " << h << head_label(in, h) << ": " << what << " " << r.rows << " x " << r.cols
           << (a.plan.dense ? "" : " (not formed)");
        if (std::isfinite(r.frobenius))
            os << ", ||" << what << "||_F = " << format_number(r.frobenius)
               << (a.plan.dense ? "" : " (from J J^T)");
        if (a.plan.dense)
            os << ", max |entry| = " << format_number(r.max_abs) << ", "
               << format_number(r.seconds, 3) << " s";
        os << "\n";
    }
    for (std::size_t h = 0; h < a.heads.size() && a.heads[h].has_spectrum; ++h) {
        const auto& sp = a.heads[h].spectrum;
        os << "head " << h << " spectrum (" << sp.method << ", " << format_number(sp.seconds, 3)
           << " s): sigma_max = "
           << format_enclosure(sp.max.sigma, sp.max.enclosure.lo, sp.max.enclosure.hi)
           << ", sigma_min = "
           << format_enclosure(sp.min.sigma, sp.min.enclosure.lo, sp.min.enclosure.hi) << ", rank "
           << sp.rank << "\n  residuals ||Jv - s u||, ||J^T u - s v||: max "
           << format_number(sp.max.res_u) << ", " << format_number(sp.max.res_v) << "; min "
           << format_number(sp.min.res_u) << ", " << format_number(sp.min.res_v) << "\n  "
           << kappa_text(sp.strict) << "\n  " << kappa_text(sp.nz) << "\n";
        for (const auto& n : sp.notes) os << "  note: " << n << "\n";
    }
    if (in.size() > 1 && a.shared_X && std::isfinite(a.frobenius_layer))
        os << "layer: ||" << what << "||_F = " << format_number(a.frobenius_layer) << " ("
           << (a.plan.wrt == JacobianWrt::weights ? "block diagonal" : "stacked") << ")\n";
    else if (in.size() > 1 && a.shared_X)
        os << "layer: ||" << what << "||_F not known (" << what << " not formed)\n";
    else if (in.size() > 1)
        os << "layer: not reported (each head has its own X; a layer needs a shared X)\n";
    if (a.plan.dense) os << "total " << format_number(a.seconds, 3) << " s; ";
    os << (report.empty() ? "no report (--no-report)" : "report " + report)
       << (a.plan.store ? "" : " (" + what + " not stored: " + not_stored_cause + ")") << "\n";
}

}  // namespace attnspec
