// verify's JSON documents (the members from report/check_output.hpp) and its exit-code rule
// (verify_output.hpp).
#include "verify_output.hpp"

#include "attnspec/report/check_output.hpp"
#include "cli.hpp"

namespace attnspec::cli {

void print_runs_json(std::ostream& os, const std::vector<CheckRun>& runs,
                     const std::string& report) {
    JsonWriter j(os);
    j.begin_object();
    json_header(j, "verify");
    json_check_runs(j, runs, report);
    j.end_object();
    j.finish();
}

void print_replay_json(std::ostream& os, const CheckResult& r, const std::string& file,
                       const std::string& group, const std::string& kind,
                       const std::string& source) {
    JsonWriter j(os);
    j.begin_object();
    json_header(j, "verify --instance");
    json_replay(j, r, file, group, kind, source);
    j.end_object();
    j.finish();
}

FailOn parse_fail_on(const std::string& text) {
    FailOn f;
    bool threshold = false;
    for (std::size_t start = 0;;) {
        const std::size_t comma = text.find(',', start);
        const std::string word = text.substr(start, comma - start);
        if (word == "readings" && !f.readings) {
            f.readings = true;
        } else if ((word == "violated" || word == "inconclusive" || word == "never") &&
                   !threshold) {
            f.threshold = word;
            threshold = true;
        } else {
            fail_usage(
                "--fail-on must be violated, inconclusive or never, optionally with "
                "',readings' (or readings alone), got '" +
                text + "'");
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (f.readings && f.threshold == "never")
        fail_usage("--fail-on '" + text +
                   "': never exits 0 whatever was violated, readings or not");
    return f;
}

int verify_exit_code(const std::vector<CheckRun>& runs, const std::string& fail_on) {
    const FailOn f = parse_fail_on(fail_on);
    if (f.threshold == "never") return 0;
    bool violated = false, inconclusive = false;
    for (const auto& r : runs) {
        if (r.kind == "experiment") continue;              // experiments have no verdict
        if (r.kind == "reading" && !f.readings) continue;  // readings map, they do not decide
        violated |= r.verdict == Verdict::violated;
        // a run with no applicable instance decided nothing: it fails CI like an inconclusive one
        inconclusive |= r.verdict == Verdict::inconclusive || r.verdict == Verdict::not_applicable;
    }
    if (violated) return static_cast<int>(ExitCode::Violated);
    if (inconclusive && f.threshold == "inconclusive")
        return static_cast<int>(ExitCode::Inconclusive);
    return 0;
}

}  // namespace attnspec::cli
