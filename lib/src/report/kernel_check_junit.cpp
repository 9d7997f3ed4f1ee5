// check-kernel's JUnit XML (report/kernel_check_junit.hpp).
#include "attnspec/report/kernel_check_junit.hpp"

#include <algorithm>

#include "attnspec/base/format.hpp"
#include "attnspec/io/provenance.hpp"

namespace attnspec {
namespace {

using kernels::ElementReport;
using kernels::KernelCheckResult;
using kernels::KernelVerdict;

std::string num(double x) { return format_number(x, 9); }

std::string element_line(const ElementReport& e) {
    return "  at " + kernels::shape_text(e.index) + ": got " + num(e.got) + ", reference " +
           num(e.reference) + ", error " + num(e.error) + ", rounding bound " + num(e.bound) +
           ", allowed " + num(e.allowed) + ", baseline error " + num(e.baseline) + "\n";
}

// The failure's body: the summary, the figures and the worst elements (by bound for wrong, by
// the rule for fail; the lse's when some lse element is beyond its bound).
std::string failure_text(const std::string& name, const KernelCheckResult& r,
                         const std::string& reproducer) {
    std::string t = name + ": " + verdict_name(r.verdict) + "\n" + r.summary + "\n";
    t += "tensor: max error " + num(r.tensor_error) + ", allowed " + num(r.tensor_allowed) +
         "; rows beyond their rule " + std::to_string(r.rows_beyond_rule) + " of " +
         std::to_string(r.rows) + "; elements beyond the rounding bound " +
         std::to_string(r.elements_beyond_bound) + ", NaN/Inf " + std::to_string(r.nonfinite) +
         "\n";
    const bool wrong = r.verdict == KernelVerdict::wrong;
    t += wrong ? "worst elements by error / rounding bound:\n"
               : "worst elements by error / allowed:\n";
    for (const ElementReport& e : wrong ? r.worst_by_bound : r.worst_by_rule) t += element_line(e);
    if (r.has_lse && r.lse_beyond_bound > 0) {
        t += "worst lse elements:\n";
        for (const ElementReport& e : r.worst_lse) t += element_line(e);
    }
    if (!reproducer.empty()) t += "reproducer: " + reproducer + "\n";
    return t;
}

std::string property(const std::string& name, const std::string& value) {
    return "      <property name=\"" + xml_escape(name) + "\" value=\"" + xml_escape(value) +
           "\"/>\n";
}

}  // namespace

std::string xml_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                const auto u = static_cast<unsigned char>(c);
                out += u < 0x20 && c != '\n' && c != '\t' ? '?' : c;
        }
    }
    return out;
}

std::string kernel_check_junit(const kernels::KernelCheckRun& run) {
    long failures = 0;
    for (const auto& t : run.tensors) failures += t.second->verdict != KernelVerdict::pass;
    const std::string n = std::to_string(run.tensors.size()), f = std::to_string(failures);
    const std::string suite = "attnspec check-kernel " + run.op;
    std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    x += "<testsuites name=\"" + xml_escape(suite) + "\" tests=\"" + n + "\" failures=\"" + f +
         "\" errors=\"0\" time=\"" + num(run.seconds) + "\">\n";
    x += "  <testsuite name=\"" + xml_escape(suite) + "\" tests=\"" + n + "\" failures=\"" + f +
         "\" errors=\"0\" skipped=\"0\" time=\"" + num(run.seconds) + "\" timestamp=\"" +
         xml_escape(utc_now_iso8601()) + "\">\n    <properties>\n";
    x += property("verdict", verdict_name(run.verdict)) + property("summary", run.summary);
    x += property("dtype", run.dtype) + property("accumulate", run.accumulate);
    x += property("mask", run.mask) + property("scale", num(run.scale));
    if (!run.correction.empty())
        x += property("correction", run.correction) + property("lambda", num(run.lambda));
    x += property("factor", num(run.factor)) + property("inputs", run.inputs);
    x += property("output", run.output);
    if (run.infsa) x += property("gamma", num(run.gamma)) + property("eps", num(run.eps));
    if (!run.reproducer.empty()) x += property("reproducer", run.reproducer);
    if (!run.generator.empty()) {
        x += property("case", run.generator) + property("seed", std::to_string(run.seed));
        x += property("shape", kernels::shape_text(run.shape));
    }
    x += "    </properties>\n";
    // The check's wall time is one figure for all tensors: each testcase gets its share.
    const std::string share =
        num(run.seconds / double(std::max<std::size_t>(1, run.tensors.size())));
    for (const auto& [name, r] : run.tensors) {
        x += "    <testcase classname=\"" + xml_escape("attnspec.check-kernel." + run.op) +
             "\" name=\"" + xml_escape(name) + "\" time=\"" + share + "\"";
        if (r->verdict == KernelVerdict::pass) {
            x += "/>\n";
            continue;
        }
        x += ">\n      <failure type=\"" + std::string(verdict_name(r->verdict)) + "\" message=\"" +
             xml_escape(std::string(verdict_name(r->verdict)) + ": " + r->summary) + "\">" +
             xml_escape(failure_text(name, *r, run.reproducer)) + "</failure>\n    </testcase>\n";
    }
    return x + "  </testsuite>\n</testsuites>\n";
}

}  // namespace attnspec
