// verify --mpi (verify_mpi.hpp): the MPI part is compiled only with ATTNSPEC_WITH_MPI.
#include "verify_mpi.hpp"

#include "attnspec/base/errors.hpp"

#ifdef ATTNSPEC_WITH_MPI
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <random>
#include <vector>

#include "cli.hpp"
#include "report_merge.hpp"
#endif

namespace attnspec::cli {

#ifndef ATTNSPEC_WITH_MPI

bool mpi_compiled() { return false; }

int run_verify_mpi(const std::string&, const std::string&, const ShardRunner&, bool) {
    throw Error(ExitCode::NoDevice,
                "--mpi: this attnspec was built without MPI (install openmpi-bin and "
                "libopenmpi-dev and configure with -DATTNSPEC_MPI=ON); on this build split the run "
                "with --shard i/n and combine the shards with 'attnspec report merge'");
}

#else

bool mpi_compiled() { return true; }

namespace {

struct MpiSession {
    MpiSession() { MPI_Init(nullptr, nullptr); }
    ~MpiSession() { MPI_Finalize(); }
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;
};

int reduce_max(int v) {
    int out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

// The exit code an exception stands for (as main() maps it).
int code_of(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const Error& x) {
        return static_cast<int>(x.code());
    } catch (const std::bad_alloc&) {
        return static_cast<int>(ExitCode::OutOfMemory);
    } catch (...) {
        return static_cast<int>(ExitCode::Internal);
    }
}

// "<dir>/.<name>.mpi-<tag>.shard-<r>-of-<K>.h5": hidden, beside the target, one per run (the
// tag is rank 0's pid and a random number, shared by every rank).
std::string shard_path(const std::string& target, unsigned long tag, int rank, int size) {
    const auto slash = target.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : target.substr(0, slash);
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%lx", tag);
    return dir + "/." + base + ".mpi-" + hex + ".shard-" + std::to_string(rank) + "-of-" +
           std::to_string(size) + ".h5";
}

void remove_shard(const std::string& path) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    std::filesystem::remove_all(path.substr(0, path.size() - 3) + ".counterexamples", ec);
}

}  // namespace

int run_verify_mpi(const std::string& target, const std::string& command_line,
                   const ShardRunner& run, bool quiet) {
    MpiSession mpi;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long tag = rank == 0 ? (static_cast<unsigned long>(::getpid()) << 24) ^
                                        (std::random_device{}() & 0xffffffUL)
                                  : 0;
    MPI_Bcast(&tag, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    std::vector<std::string> paths;
    paths.reserve(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) paths.push_back(shard_path(target, tag, r, size));

    std::exception_ptr failure;
    int verdict = 0;
    try {
        verdict = run(ShardSpec{rank, size}, paths[static_cast<size_t>(rank)], quiet || rank > 0);
    } catch (...) {
        failure = std::current_exception();
    }
    const int failed = reduce_max(failure ? code_of(failure) : 0);
    // 1 (violated) outranks 2 (inconclusive): order them 0 < 2 < 1 for the reduction
    const int worst = reduce_max(verdict == 1 ? 2 : verdict == 2 ? 1 : 0);
    if (!failed && rank == 0) {
        try {
            std::cout << merged_report_text(merge_shard_reports(paths, target, command_line));
        } catch (...) {
            failure = std::current_exception();
        }
    }
    int merge_failed = rank == 0 && failure ? code_of(failure) : 0;
    MPI_Bcast(&merge_failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    remove_shard(paths[static_cast<size_t>(rank)]);
    if (failure) std::rethrow_exception(failure);  // main() reports it (MPI_Finalize first)
    if (failed || merge_failed) {
        log("rank " + std::to_string(rank) +
            ": stopped: " + (failed ? "another rank failed" : "rank 0 could not write the report") +
            "; no report was written");
        return failed ? failed : merge_failed;
    }
    return worst == 2 ? 1 : worst == 1 ? 2 : 0;
}

#endif

}  // namespace attnspec::cli
