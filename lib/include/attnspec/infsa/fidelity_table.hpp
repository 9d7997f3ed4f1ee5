// The Linear-InfSA fidelity table (what `attnspec fidelity` reports, proofs/infsa_fidelity.md):
// one Fidelity record per (family, N, draw, head) of seeded draws (or per head of given Q, K),
// grouped per (family, N) with min / median / mean / max of each cosine (NaN ignored). Dense
// records cost an LU each (infsa/fidelity.hpp); matrix-free ones never hold N x N. CPU only.
#pragma once
#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/infsa/fidelity.hpp"

namespace attnspec {

struct FidelitySpec {
    std::vector<std::string> families{"gaussian", "shared-mean", "independent-means"};
    std::vector<long> Ns{256};  // token counts
    long d_h = 64, heads = 1, draws = 3;
    double mu = 1.0, gamma = 0.95, eps = 1e-6;
    std::uint64_t seed = 20251;  // master seed; instance i draws with instance_seed(seed, i)
    bool matrix_free = false, with_right = false;
    double max_bytes =
        0;  // refuse a record above this (fidelity_estimate); 0: memory_limit_bytes()
    std::function<void(long done)> progress;  // optional, after each generated instance
};

struct FidelityRecord {
    std::string family;  // a family name, or "input"
    long N = 0, head = 0, draw = 0;
    std::uint64_t seed = 0;  // replays the draw (draw_family); 0 for input
    Fidelity f;
};

// The four cosines, in report order, and their values in a Fidelity.
inline constexpr std::array<const char*, 4> kFidelityMetrics{"cos_left", "cos_right", "cos_katz_in",
                                                             "cos_katz_out"};
double fidelity_metric(const Fidelity& f, int m);  // m indexes kFidelityMetrics

struct FidelityStats {
    double min = NAN, median = NAN, mean = NAN, max = NAN;  // NaN when count == 0
    long count = 0;                                         // non-NaN values
};
// Order statistics of the non-NaN values of v (median: mean of the middle two). O(n log n).
FidelityStats fidelity_stats(std::vector<double> v);

struct FidelityGroup {
    std::string family;
    long N = 0;
    std::vector<std::size_t> records;    // indices into FidelityTable::records
    std::array<FidelityStats, 4> stats;  // per metric, kFidelityMetrics order
};

struct FidelityTable {
    std::vector<FidelityRecord> records;
    std::vector<FidelityGroup> groups;  // per (family, N), in order of first appearance
};

// What a fidelity run will need, from the sizes alone (nothing is drawn):
//   bytes: peak memory of the largest record, an upper estimate. Dense: Â, the LU and the
//     centralities' work, 6 N x N doubles, plus Q, K; matrix-free: Q, K and the row norms and
//     vectors of the tiled operator (4 N d_h + 16 N doubles) plus two 1024 x 1024 tiles.
//   flops: an operation count, not a measurement. Dense: per record 2 N^2 d_h (Q K^T) + 2/3 N^3
//     (LU) + 4 N^3 (centralities' solves, bounded); matrix-free: 4 N^2 d_h per Perron iteration
//     (one tiled pass of Q K^T and its enclosure), times `iterations` (an assumed count, at most
//     PerronOptions::max_iter = 500) and 2 with the right vector; summed over all records.
struct FidelityEstimate {
    double bytes = 0;       // largest record
    double flops = 0;       // whole run
    double iterations = 0;  // matrix-free Perron iterations assumed per vector (0 dense)
};
FidelityEstimate fidelity_estimate(const FidelitySpec& spec, double iterations = 500);
// DataError when fidelity_estimate(spec).bytes is above the budget (spec.max_bytes, else
// memory_limit_bytes()): parameter "matrix_free" in dense mode (N x N is what --matrix-free
// avoids), "max_bytes" otherwise. O(Ns).
void check_fidelity_memory(const FidelitySpec& spec);

// Flops per second of one tiled ReluKernelOp pass on a seeded 512 x 64 (Q, K), counted as in
// fidelity_estimate (4 N^2 d_h per pass): measured on this machine, a few milliseconds. Divides
// FidelityEstimate::flops for a time estimate.
double measured_flop_rate();

// Number of generated instances: families x Ns x draws x heads.
long fidelity_instance_count(const FidelitySpec& spec);

// Generated records: for each family, N, draw and head, instance i (in that order) draws Q, K
// with draw_family(family, N, d_h, mu, instance_seed(seed, i)). Throws DataError on gamma, eps,
// d_h, heads, draws or an N out of range (naming the parameter), on an empty family or N list,
// Usage on an unknown family (parameter "family"), and DataError (check_fidelity_memory) when a
// record would exceed the budget. Cost: one fidelity_dense / fidelity_matrix_free each.
FidelityTable fidelity_table(const FidelitySpec& spec);

// Records of given (sample, head) blocks Qs[h], Ks[h] (family "input", draw 0, seed 0), using
// spec's gamma, eps, matrix_free and with_right. Same per-record cost and failures.
FidelityTable fidelity_table(const std::vector<Eigen::MatrixXd>& Qs,
                             const std::vector<Eigen::MatrixXd>& Ks, const FidelitySpec& spec);

}  // namespace attnspec
