// Printing of check runs and replayed records, human tables and JSON members, for `verify` and
// `verify --instance`; the robustness label `report show` and `report render` print too. An empty
// `report` (verify --no-report) prints no report line / key. CPU only.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/base/json.hpp"

namespace attnspec {

void print_runs_human(std::ostream& os, const std::vector<CheckRun>& runs,
                      const std::string& report);
// The members "statements", "report" (unless empty) and "checks" of `verify --json`, written into
// an open object (the caller writes the object and its header).
void json_check_runs(JsonWriter& j, const std::vector<CheckRun>& runs, const std::string& report);
// A replayed record, every factor; `kind` and `source` are its check's (proofs/registry.hpp).
void print_record_human(std::ostream& os, const CheckResult& r, const std::string& kind,
                        const std::string& source);
void json_check_result(JsonWriter& j, const CheckResult& r);  // one full record
// The members of `verify CHECK --instance F --json` into an open object: the file and group the
// record came from, its check's kind and source, "robust" where it classifies its violation, and
// the record.
void json_replay(JsonWriter& j, const CheckResult& r, const std::string& file,
                 const std::string& group, const std::string& kind, const std::string& source);
// "robust violation", "fragile violation (sigma_min/sigma_max(J) = ...)" for a violated record
// that carries values/violation_robust (thm3.4, thm3.4-model; reports/SCHEMA.md), else "".
std::string robustness_label(double violation_robust, double sigma_ratio);

}  // namespace attnspec
