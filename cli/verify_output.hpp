// Printing of check runs (human tables and --json) and the exit-code rule of `attnspec verify`.
// An empty `report` (verify --no-report) prints no report line / key. CPU only.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/base/json.hpp"

namespace attnspec::cli {

void print_runs_human(std::ostream& os, const std::vector<CheckRun>& runs,
                      const std::string& report);
void print_runs_json(std::ostream& os, const std::vector<CheckRun>& runs,
                     const std::string& report);
void print_record_human(std::ostream& os, const CheckResult& r);  // every factor
void json_check_result(JsonWriter& j, const CheckResult& r);      // one full record
// `verify CHECK --instance F --json`: the replayed record with the file and group it came from.
void print_replay_json(std::ostream& os, const CheckResult& r, const std::string& file,
                       const std::string& group);
// fail_on: "violated" | "inconclusive" | "never" (README exit codes).
int verify_exit_code(const std::vector<CheckRun>& runs, const std::string& fail_on);

}  // namespace attnspec::cli
