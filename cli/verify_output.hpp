// The JSON documents of `attnspec verify` (their members: report/check_output.hpp, which also
// prints the human tables) and its exit-code rule. An empty `report` (verify --no-report) prints
// no report key. CPU only.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"

namespace attnspec::cli {

void print_runs_json(std::ostream& os, const std::vector<CheckRun>& runs,
                     const std::string& report);
// `verify CHECK --instance F --json`: the replayed record with the file and group it came from,
// its check's kind and source.
void print_replay_json(std::ostream& os, const CheckResult& r, const std::string& file,
                       const std::string& group, const std::string& kind,
                       const std::string& source);
// --fail-on: one threshold, violated | inconclusive | never (default inconclusive), optionally
// with "readings" after a comma (or alone: the default threshold with readings): by default only
// theorem checks decide the exit code; with readings, reading checks do too. Experiments never.
struct FailOn {
    std::string threshold = "inconclusive";
    bool readings = false;
};
// Errors: Usage naming the value (an unknown word, two thresholds, never with readings).
FailOn parse_fail_on(const std::string& text);
// 1 when a deciding check (above) is violated; 2 when one is inconclusive or decided nothing and
// the threshold is inconclusive; else 0 (README exit codes).
int verify_exit_code(const std::vector<CheckRun>& runs, const std::string& fail_on);

}  // namespace attnspec::cli
