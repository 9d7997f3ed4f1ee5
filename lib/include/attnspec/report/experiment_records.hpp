// Experiment runs in a report (reports/SCHEMA.md, "Experiments"): a check run of kind
// "experiment" is stored as /checks/<name> with kind = "experiment", its result table under
// table/ and example records (curves, replayable) under records/ — and no verdict counts. Writer
// and reader of that layout; every name of it is spelled in experiment_records.cpp only. HDF5
// through io/h5.hpp; CPU only.
#pragma once
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/report/check_records.hpp"

namespace attnspec {

// Writes `run` (kind "experiment") as `parent`/<check>: attributes, table/ (one dataset per axis
// and per value column, in order) and records/instance_<i> for the first record of every regime
// without its shape prefix (at most 64). Errors: IoError.
void write_experiment_run(H5Group& parent, const CheckRun& run);

// Whether the run group at `path` (e.g. /checks/specA-sweep) holds an experiment.
bool is_experiment_group(const H5Reader& r, const std::string& path);

struct StoredExperiment {
    std::string name, claim, seed;
    std::string source;  // attribute source (docs/SOURCES.md); empty in reports written before it
    long instances = 0;
    double seconds = 0;
    ExperimentTable table;
    std::vector<StoredRecord> records;  // the stored example records, in file order
};
// Every experiment run under /checks, in file order (empty when none). Errors: DataError naming a
// missing attribute or a table column of the wrong length.
std::vector<StoredExperiment> read_experiment_runs(const H5Reader& r);

}  // namespace attnspec
