// The registry of executable checks, listed by `attnspec verify --list` and run by `--all` in
// table order. CPU only. The convention, one check = three files with one stem:
//   proofs/<stem>.md                          statement, conventions, slack, planted violation
//   proofs/<stem>.cpp                         check_<stem>(...) -> CheckResult (pure, one
//                                             instance) and run_<stem>(RunOptions) -> CheckRun
//   proofs/include/attnspec/proofs/<stem>.hpp both, opening with what it checks and the .md
// (thm_3_8.* also holds lemma3.7; infsa_checks.* holds infsa.neumann and infsa.perron;
// attention_instances.* the regimes of thm3.3 and thm3.4 and the head storage). A check is
// registered by one row of the explicit table of registry.cpp, one named field per line, which
// reads like the command table of cli/cli.cpp. How checks run (RunOptions, RunLoop, the runner
// lock, the scheduler): run_loop.hpp, which the checks' headers include; this header includes it
// and is included by no check.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec {
class H5Reader;  // io/h5.hpp: only the replay entries need it, so <hdf5.h> stays out of checks
}  // namespace attnspec

namespace attnspec::proofs {

// What a check is (docs/SOURCES.md, "Per check"). Written as the `kind` attribute of its report
// group (reports/SCHEMA.md) and given by `verify --list`, the console, --json and the page.
//   theorem     a reconstructed statement of a paper (or one it rests on): its violations are
//               findings, and only theorems decide verify's exit code by default
//   reading     an alternative reading of an informal claim, tested to map where it holds (a
//               violation is a map of where the reading fails, not a finding against the paper);
//               it decides the exit code only with --fail-on ...,readings
//   experiment  a table, no verdict; never decides the exit code
enum class CheckKind { theorem, reading, experiment };
const char* to_string(CheckKind k);  // "theorem", "reading", "experiment"

// What one check cost in `verify --all --seed 20251 --threads 1` (2 cores, idle, OpenBLAS with
// the kernels attnspec picks, 2026-12-01): seconds and instances. Only the ratios between checks
// matter: they order the shards of --shard and the side-by-side checks of --threads, costliest
// first (estimated_cost). A check with no measurement (seconds 0) counts 1 s.
struct RunCost {
    double seconds = 0;
    double instances = 0;
};

struct CheckInfo {
    std::string name;            // "thm3.5"
    std::string summary;         // one line
    std::string statement_file;  // proofs/<file>.md
    std::function<CheckRun(const RunOptions&)> run;
    // Re-runs the check on a stored instance: `group` holds instance/<matrices> and values/ attrs
    // (a record of a report, or the root of an instance file). Empty when not replayable.
    std::function<CheckResult(const H5Reader&, const std::string& group)> replay;
    // Where the statement comes from (docs/SOURCES.md), e.g. "SC summary, Thm 3.5". Every
    // statement is reconstructed from a summary of its paper, not quoted from the paper.
    std::string source;
    CheckKind kind = CheckKind::theorem;
    bool needs_dataset = false;  // runs on RunOptions::dataset; --all skips it when that is ""
    RunCost cost;                // measured, for scheduling (RunCost)
};

// The explicit table, in statement order (the order of `verify --all` and of the report).
const std::vector<CheckInfo>& registry();
const CheckInfo* find_check(const std::string& name);  // nullptr when unknown

// Runs `c` with the options' --regime filter applied to it: a filter that matches no regime of
// the check is a usage error (RunLoop::finish); search regimes ("search/...", thm3.4) run only
// when a filter value contains "search" (they start from the random instances the other values
// select). Cost: the check's run, less the search when the filter does not name it.
CheckRun run_check(const CheckInfo& c, RunOptions opt);

// Re-runs `c` on the record `group` of `r` (report/check_records.hpp: find_replay_record) and gives
// the result the record's seed and regime. Cost: one instance of the check. Errors: Usage when the
// check cannot replay, DataError when the record lacks an input.
CheckResult replay_record(const CheckInfo& c, const H5Reader& r, const std::string& group);

// The estimated cost (seconds on 2 cores) of running `c` with `opt`: the check's measured time per
// instance (CheckInfo::cost) times the instances the options ask for; 1 s for a check without a
// measurement. What --shard splits by (cli/verify_shard.cpp) and run_checks orders by.
double estimated_cost(const CheckInfo& c, const RunOptions& opt);

// Runs `checks` through run_check, side by side with opt.threads > 1 (run_side_by_side,
// run_loop.hpp: its order, errors and events; the costs are estimated_cost), and returns their
// runs in `checks` order.
std::vector<CheckRun> run_checks(const std::vector<const CheckInfo*>& checks, const RunOptions& opt,
                                 const CheckEvents& events = {});

}  // namespace attnspec::proofs
