// The one home of the check-record schema (reports/SCHEMA.md, "/checks/<check>", "A record",
// "Instance files"): writers for a CheckResult, a CheckRun and a replayable instance file, and the
// readers that bring them back (summaries for `report`, records and stored inputs for replay).
// Every group, dataset and attribute name of a check record is spelled in check_records.cpp only.
// HDF5 through io/h5.hpp; CPU only.
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/io/provenance.hpp"

namespace attnspec {

// ---- writing --------------------------------------------------------------------------------

// The most instance files `verify` writes per check (every violated record up to this cap).
constexpr int kCounterexampleCap = 64;

// What write_counterexample_files wrote for one check run: the number of violated records and
// the file names (inside the directory given), in run order.
struct CounterexampleFiles {
    long violated = 0;
    int cap = kCounterexampleCap;
    std::string dir;                 // the directory as the report names it (companion dir)
    std::vector<std::string> names;  // "<check>-instance_<i>.h5", i = the record's run index
};

// Writes every run under `root`/checks/<check> (layout in reports/SCHEMA.md), at most 64 full
// records per run; with `files` (one per run, same order) also the counterexample attributes
// counterexample_files / counterexample_cap / counterexample_dir. Cost: O(instances) small
// attribute and dataset writes. Errors: IoError.
void write_check_runs(H5Group& root, const std::vector<CheckRun>& runs,
                      const std::vector<CounterexampleFiles>* files = nullptr);
// Write one check run as the group `parent`/<check>.
void write_check_run(H5Group& parent, const CheckRun& run,
                     const CounterexampleFiles* files = nullptr);
void write_check_result(H5Group& g, const CheckResult& r);

// A replayable instance file: root attributes kind = "attnspec-instance" and check, plus one
// record (write_check_result: its instance/* matrices and values/* are what replay reads) in the
// group /record, written atomically. `attnspec verify CHECK --instance F` replays it. Errors:
// CantCreate / IoError naming the cause (the target is left untouched, no temp is left).
void write_instance_file(const std::string& path, const CheckResult& r, const Provenance& prov);

// Every violated record of `run`, up to `max_files`, as instance files
// <dir>/<check>-instance_<i>.h5 (`dir` must exist: the report's companion staging directory,
// ReportWriter::companion_staging()). Errors as above.
CounterexampleFiles write_counterexample_files(const CheckRun& run, const std::string& dir,
                                               const Provenance& prov,
                                               int max_files = kCounterexampleCap);

class ReportWriter;

// A verify report's content, as `attnspec verify` and Python's `Results.to_report` write it:
// every violated record of each run (up to the cap) as an instance file in w's companion
// directory (write_counterexample_files into w.companion_staging()), then every run's section
// (write_check_runs, with those files named). The caller commits w. `note`, when given, gets one
// line per run with violated records: how many, how many written, where, and how to replay the
// first. Errors: IoError / CantCreate as the writers above.
void write_verify_runs(ReportWriter& w, const std::vector<CheckRun>& runs, const Provenance& prov,
                       const std::function<void(const std::string&)>& note = {});

// ---- reading (the same names, read back) -----------------------------------------------------

// The headline of one comparison of a stored record.
struct StoredComparison {
    std::string name, lhs_name, relation, rhs_name, verdict, basis;
    double lhs = 0, rhs = 0;
};

// The identity and comparisons of a stored record (a report's records/instance_<i> or an
// instance file's /record). `seed` is the decimal text as written, checked to be a decimal
// integer that fits 64 bits (DataError naming the attribute otherwise); `regime`/`seed` are
// empty when the record lacks them.
struct StoredRecord {
    std::string group;  // full path of the record group
    std::string check, regime, seed, verdict;
    bool is_worst = false;  // the run's tightest instance
    std::vector<StoredComparison> comparisons;
    // values/violation_robust of a violated thm3.4 / thm3.4-model record: 1 robust, 0 fragile
    // (reports/SCHEMA.md, "A record"); NaN when the record does not classify its violation.
    double violation_robust = std::numeric_limits<double>::quiet_NaN();
    // values/sigma_min/sigma_max(J) of an attention record; NaN when absent.
    double sigma_ratio = std::numeric_limits<double>::quiet_NaN();
};
// Errors: DataError naming a missing attribute.
StoredRecord read_check_record(const H5Reader& r, const std::string& group);

// One stored check run (/checks/<check>) without its per-instance table.
struct StoredRegime {
    std::string regime;
    long counts[4] = {0, 0, 0, 0};  // indexed by Verdict
    double worst_ratio = 0, median_ratio = 0;
};
struct CheckRunSummary {
    std::string name, claim, verdict, headline, search_effort;
    std::string source;  // where the statement comes from; empty in reports written before it
    std::string kind = "theorem";  // "theorem" or "reading" (attribute kind; theorem when absent)
    long instances = 0;
    long counts[4] = {0, 0, 0, 0};  // indexed by Verdict
    double seconds = 0;
    std::vector<StoredRegime> regimes;
    std::vector<StoredRecord> records;  // the stored full records, in file order
};
// Every check run of a report, in file order; empty when the report has no /checks group.
// Cost: reads the summary attributes, regime tables and record headers. Errors: DataError.
std::vector<CheckRunSummary> read_check_runs(const H5Reader& r);
// The top-level group read_check_runs reads ("checks").
const char* check_runs_group();

// Before a replay reads a file (`verify CHECK --instance F`, attnspec.checks.replay): its root
// schema_version is of the major version this attnspec reads (kSchemaVersion), as `report show`
// requires. Errors: DataError "F is HDF5 but not an attnspec report or instance file (no
// schema_version)", or naming the version found and the one read. O(1).
void check_replay_schema(const H5Reader& r);

// The record of `check` to replay in a file: an instance file's /record (DataError when it holds
// another check), or in a report /checks/<check>/records/<record>, or without `record` the first
// violated record, else the first one. Errors: DataError naming what is missing.
std::string find_replay_record(const H5Reader& r, const std::string& check,
                               const std::string& record = {});

// A stored input of a record: instance/<name> (matrix) and values/<name> (scalar). `group` may be
// "/" (an instance file's root). Errors: DataError naming the missing dataset or attribute.
Eigen::MatrixXd stored_matrix(const H5Reader& r, const std::string& group, const std::string& name);
double stored_value(const H5Reader& r, const std::string& group, const std::string& name);
// Whether the record stores the optional input instance/<name> (e.g. a head's C_Q).
bool has_stored_matrix(const H5Reader& r, const std::string& group, const std::string& name);
// Before a replay reads anything: the memory a replay of the instance in `group` needs,
// estimated from the declared shapes of its stored arrays (each matrix held in some 8 copies by
// a dense factorization; hidden states X of N tokens making N x N attention matrices), refused
// (DataError, parameter "max_bytes") above memory_limit_bytes(), naming the shapes. Returns
// the estimate as a line ("replaying '<group>' (W 40 x 40): estimate 100 KiB of memory").
std::string check_replay_size(const H5Reader& r, const std::string& group);

}  // namespace attnspec
