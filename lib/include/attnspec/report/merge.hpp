// `attnspec report merge SHARD.h5... --out R.h5` (and rank 0 of `verify --mpi`): checks that shard
// reports of `verify --shard i/n` are the n parts of one run (same selection, options and build;
// every index once) and writes the report the unsharded run writes: the same check groups in
// selection order and the same counterexample files. CPU only.
#pragma once
#include <string>
#include <vector>

namespace attnspec {

struct MergedReport {
    std::string target;               // the report written
    int shards = 0;                   // shard files merged
    std::vector<std::string> checks;  // check groups, in selection order
    long counterexample_files = 0;    // files copied into the companion directory
};

// Refuses, before writing anything, with Error(DataError) naming the files and what differs:
// a file that is no shard report, shards whose count, selection, run options (seed, trials, ...)
// or build (tool version, git sha, compiler, BLAS, ...) differ, a duplicate or missing index, a
// check held by no shard or by two, a counterexample directory that lacks a file its run names.
// Missing file: NoInput; `target` one of the shards: Usage; unwritable target: CantCreate.
// Writes `target` atomically (ReportWriter) with `command_line` as its command line; the shard
// attributes are left out. Cost: copies every check group and counterexample file once.
MergedReport merge_shard_reports(const std::vector<std::string>& shards, const std::string& target,
                                 const std::string& command_line);

// The first line of `a` and `b` ("key=value" lines) that differs, as "b-line vs a-line" ("(none)"
// for a missing line); "" when none does.
std::string first_difference(const std::string& a, const std::string& b);

// The text `report merge` and `verify --mpi` print: "merged N shard(s) ... into R" and the
// verdict table of the merged report.
std::string merged_report_text(const MergedReport& m);

}  // namespace attnspec
