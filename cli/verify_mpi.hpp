// `attnspec verify --mpi` under mpirun: rank r of K runs shard r/K (verify_shard.hpp) into a
// private hidden file beside the report, rank 0 merges the shards with `report merge`'s code
// (report_merge.hpp) and commits the report atomically. Built with MPI only when CMake's
// ATTNSPEC_MPI found it (cmake/attnspecMPI.cmake); otherwise --mpi is refused. CPU only.
#pragma once
#include <functional>
#include <string>

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

}  // namespace attnspec::cli
