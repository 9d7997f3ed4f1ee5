// Printing of experiments (check runs of kind "experiment": a table, no verdict) for `verify`
// (human and --json) and `report show` / `report render` (reports/SCHEMA.md, "Experiments").
// CPU only.
#pragma once
#include <ostream>
#include <string>

#include "attnspec/base/check.hpp"
#include "attnspec/base/json.hpp"
#include "attnspec/report/experiment_records.hpp"

namespace attnspec {

// `verify`: the claim (the question), its source, what it measures, the rows of the table at lambda
// = 10 (all rows when the table has no lambda axis), the finding line, instances and time.
void print_experiment_human(std::ostream& os, const CheckRun& run);
// `verify --json`: one object of the "checks" array (kind, table as columns + rows).
void json_experiment_run(JsonWriter& j, const CheckRun& run);
// `verify CHECK --instance F` on an experiment record: the values and the curve, no verdict.
void print_experiment_record(std::ostream& os, const CheckResult& r);
// `report show`: like print_experiment_human, from a stored experiment.
std::string render_experiment_text(const StoredExperiment& e);
// The finding line of a specA-sweep style table ("lambda = 10 lowers kappa(J) ... in a of n
// curves ..."); empty when the table lacks the columns it counts. `report render` prints it above
// the whole table (report/verify_page.cpp).
std::string experiment_finding(const ExperimentTable& t);
// "What it measures: ..." from the table's attributes weights, correction, tokens and its lambda
// axis (specA-sweep); empty when the table has no weights attribute. Printed before the finding.
std::string experiment_measures(const ExperimentTable& t);

}  // namespace attnspec
