// `attnspec verify --mpi` under mpirun. Instance mode (the default): every rank runs every check
// and evaluates its share of each check's instances; the ranks exchange the results after every
// batch and rank 0 commits the report atomically. Shard mode (with --time-budget or
// --search-seconds, whose clocks the ranks would not agree on): rank r of K runs shard r/K
// (verify_shard.hpp) into a private hidden file beside the report, rank 0 merges the shards with
// `report merge`'s code (report/merge.hpp) and commits the report atomically. Built with MPI only
// when CMake's ATTNSPEC_MPI found it (cmake/attnspecMPI.cmake); otherwise --mpi is refused. CPU
// only.
#pragma once
#include <functional>
#include <string>

#include "attnspec/proofs/instance_spread.hpp"
#include "verify_shard.hpp"

namespace attnspec::cli {

// Runs shard `s` of the selection, writing the shard report `path` (quiet: no progress, no table);
// returns verify's exit code for its checks (0, 1 violated, 2 inconclusive).
using ShardRunner = std::function<int(const ShardSpec& s, const std::string& path, bool quiet)>;

// Whether this build has MPI.
bool mpi_compiled();

// Every rank runs its shard; when all succeed rank 0 merges them into `target` and prints the
// merged table, and every rank exits with the run's verdict code (1 when any shard found a
// violation, else 2 when any was inconclusive, else 0). When any rank fails, no report is written
// (the previous one stays), every rank's shard file is removed, the failing rank reports its own
// error and exit code and the others exit with the largest failing code. Without MPI in the
// build: Error(NoDevice) (exit 69) naming the remedy.
int run_verify_mpi(const std::string& target, const std::string& command_line,
                   const ShardRunner& run, bool quiet);

// Instance mode (verify --mpi without a wall-clock limit): every rank runs the whole selection
// with RunOptions::spread set to `spread` (RunLoop evaluates its share of every batch of
// instances and exchanges the results, proofs/instance_spread.hpp); `local_ranks` is how many
// ranks share this node. It returns the run's exit code and, on rank 0, `commit`, which writes
// the report and prints the table: called only when no rank failed.
struct SpreadOutcome {
    int verdict = 0;
    std::function<void()> commit;
};
using SpreadRunner =
    std::function<SpreadOutcome(proofs::InstanceSpread& spread, int local_ranks, bool quiet)>;

// Runs `run` on every rank and commits on rank 0 when every rank succeeded. A rank that fails
// reports its own error (rank 0 as main() does, rank r > 0 as "rank r: error: ...") and exits with
// its code; the others stop at their next exchange (or at the end)
// with the largest failing code and the line "another rank failed; no report was written"; no
// report is written (the previous one stays). When rank 0 cannot write the report every rank
// exits with its code. Without MPI in the build: Error(NoDevice) (exit 69).
int run_verify_mpi_spread(const SpreadRunner& run, bool quiet);

}  // namespace attnspec::cli
