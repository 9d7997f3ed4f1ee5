// Real check runs for the instance-file and report targets: every registered check run once at
// start-up with one trial, no time budget and no counterexample search (deterministic); their
// results become the base files (a valid instance file per replayable result, a valid report) that
// the fuzz input then mutates.
#pragma once
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"

namespace attnspec::fuzz {

// Every check's run (at most 3 results each), computed once.
const std::vector<CheckRun>& check_pool();
// Paths (in temp_dir()) of valid instance files, one per result of a replayable check.
const std::vector<std::string>& base_instance_files();
// Paths (in temp_dir()) of valid reports: one with every run, then one per run.
const std::vector<std::string>& base_report_files();

}  // namespace attnspec::fuzz
