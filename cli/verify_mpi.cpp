// verify --mpi (verify_mpi.hpp): the MPI part is compiled only with ATTNSPEC_WITH_MPI.
#include "verify_mpi.hpp"

#include "attnspec/base/errors.hpp"

#ifdef ATTNSPEC_WITH_MPI
#include <mpi.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <random>
#include <vector>

#include "attnspec/io/provenance.hpp"
#include "attnspec/report/merge.hpp"
#include "cli.hpp"
#endif

namespace attnspec::cli {

#ifndef ATTNSPEC_WITH_MPI

bool mpi_compiled() { return false; }

[[noreturn]] void no_mpi() {
    throw Error(ExitCode::NoDevice,
                "--mpi: this attnspec was built without MPI (install openmpi-bin and "
                "libopenmpi-dev and configure with -DATTNSPEC_MPI=ON); on this build split the run "
                "with --shard i/n and combine the shards with 'attnspec report merge'");
}

int run_verify_mpi(const std::string&, const std::string&, const ShardRunner&, bool) { no_mpi(); }

int run_verify_mpi_spread(const SpreadRunner&, bool) { no_mpi(); }

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

// Every rank's `mine`, in rank order (collective). Every rank sees the same sizes, so all refuse
// together (DataError) a total above what one MPI call carries.
std::vector<std::string> allgather(const std::string& mine) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long long n = static_cast<long long>(mine.size());
    std::vector<long long> sizes(static_cast<size_t>(size));
    MPI_Allgather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    std::vector<int> counts(static_cast<size_t>(size)), offsets(static_cast<size_t>(size));
    long long total = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
        offsets[r] = static_cast<int>(total);
        counts[r] = static_cast<int>(sizes[r]);
        total += sizes[r];
        if (total > INT_MAX)
            throw Error(ExitCode::DataError,
                        "--mpi: one exchange would carry more than 2 GiB of results; use fewer "
                        "--trials per run or --shard");
    }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), static_cast<int>(n), MPI_CHAR, all.data(), counts.data(),
                   offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> out(static_cast<size_t>(size));
    for (size_t r = 0; r < out.size(); ++r)
        out[r] = all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(counts[r]));
    return out;
}

// What decides a result's last bits besides the inputs: the build and the BLAS with its kernels
// (the same attributes `report merge` requires shards to share).
std::string build_fingerprint() {
    std::string f;
    for (const auto& [k, v] : build_versions()) f += k + "=" + v + "\n";
    return f;
}

// Every exchange opens with a status reduction: 0 from a rank that is running, its exit code
// from a rank that failed outside an instance (it makes this one reduction and stops). A failed
// rank's single reduction thus meets the others' next one, inside an exchange or the final one,
// and every rank learns of the failure without a collective call left unmatched.
class MpiSpread final : public proofs::InstanceSpread {
  public:
    MpiSpread(int rank, int size, int plant) : rank_(rank), size_(size), plant_(plant) {}
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int peer_failure() const { return peer_failure_; }

    void share(std::vector<Slot>& slots) override {
        if (plant_ == rank_)  // tests/mpi: this rank fails outside an instance
            throw Error(ExitCode::Internal, "planted failure of rank " + std::to_string(rank_) +
                                                " (ATTNSPEC_MPI_PLANT_FAILURE)");
        if (const int code = reduce_max(0); code != 0) {
            peer_failure_ = code;
            throw Error(static_cast<ExitCode>(code), "another rank failed");
        }
        const std::vector<std::string> all = allgather(proofs::encode_owned_slots(slots));
        for (int r = 0; r < size_; ++r)
            if (r != rank_) proofs::decode_owned_slots(all[static_cast<size_t>(r)], slots);
    }

  private:
    int rank_, size_, plant_;
    int peer_failure_ = 0;
};

// ATTNSPEC_MPI_PLANT_FAILURE=r (tests/mpi only): rank r fails at its first exchange; -1 if unset.
int planted_failure() {
    const char* v = std::getenv("ATTNSPEC_MPI_PLANT_FAILURE");
    return v != nullptr && *v != '\0' ? std::atoi(v) : -1;
}

// How many ranks of this job run on this node (they share its cores).
int local_ranks() {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int n = 1;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
}

}  // namespace

int run_verify_mpi_spread(const SpreadRunner& run, bool quiet) {
    MpiSession mpi;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MpiSpread spread(rank, size, planted_failure());
    const int local = local_ranks();
    std::exception_ptr failure;
    SpreadOutcome out;
    try {
        // Ranks that would compute different last bits cannot make one serial run's report.
        const std::vector<std::string> builds = allgather(build_fingerprint());
        for (size_t r = 1; r < builds.size(); ++r)
            if (builds[r] != builds[0])
                throw Error(ExitCode::Usage,
                            "--mpi: rank " + std::to_string(r) +
                                " runs another build or BLAS than rank 0 (" +
                                first_difference(builds[0], builds[r]) +
                                "), so the ranks' results would not make one run's report; give "
                                "every node the same build and BLAS kernels (ATTNSPEC_BLAS_CORE), "
                                "or run --shard parts and 'attnspec report merge'");
        out = run(spread, local, quiet || rank > 0);
    } catch (...) {
        failure = std::current_exception();
    }
    // A rank that learnt of a failure inside an exchange has made its last collective call.
    const int failed = spread.peer_failure() != 0
                           ? spread.peer_failure()
                           : reduce_max(failure ? summarize_exception(failure).code : 0);
    int commit_failed = 0;
    if (!failed) {
        if (rank == 0) {
            try {
                if (out.commit) out.commit();
            } catch (...) {
                failure = std::current_exception();
                commit_failed = summarize_exception(failure).code;
            }
        }
        MPI_Bcast(&commit_failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (failure && spread.peer_failure() == 0) {
        if (rank == 0) std::rethrow_exception(failure);  // main() reports it (MPI_Finalize first)
        log("rank " + std::to_string(rank) + ": error: " + summarize_exception(failure).message);
        return summarize_exception(failure).code;
    }
    if (failed || commit_failed) {
        log("rank " + std::to_string(rank) +
            ": stopped: " + (failed ? "another rank failed" : "rank 0 could not write the report") +
            "; no report was written");
        return failed ? failed : commit_failed;
    }
    return out.verdict;
}

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
    const int failed = reduce_max(failure ? summarize_exception(failure).code : 0);
    // 1 (violated) outranks 2 (inconclusive): order them 0 < 2 < 1 for the reduction
    const int worst = reduce_max(verdict == 1 ? 2 : verdict == 2 ? 1 : 0);
    if (!failed && rank == 0) {
        try {
            std::cout << merged_report_text(merge_shard_reports(paths, target, command_line));
        } catch (...) {
            failure = std::current_exception();
        }
    }
    int merge_failed = rank == 0 && failure ? summarize_exception(failure).code : 0;
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
