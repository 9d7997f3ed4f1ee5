// The one loader of Q/K(/V) input files (`attnspec neumann --input`, `attnspec fidelity --input`;
// layout: reports/SCHEMA.md, "Q/K input files"): root datasets Q, K (N x heads*d_h), optional V
// (N x heads*d_v), optional A_hat (N x N) and root attribute gamma, read with io/h5 into plain
// Eigen blocks split per head. CPU only.
#pragma once
#include <Eigen/Dense>
#include <optional>
#include <string>
#include <vector>

namespace attnspec {

struct QKInputOptions {
    long heads = 1;                // split the columns of Q, K (and V) into this many heads
    bool read_v = false;           // read V when the file has it
    bool accept_affinity = false;  // a file with A_hat is used as given: Q and K are then not read
    bool read_gamma = true;        // read the root attribute gamma when present
};

struct QKInput {
    std::string path;
    std::vector<Eigen::MatrixXd> Qs, Ks;  // one N x d_h block per head (empty with A_hat)
    std::vector<Eigen::MatrixXd> Vs;      // one N x d_v block per head when read_v and V exists
    std::vector<std::string> names;       // "head <h>", one per block
    Eigen::Index N = 0, d_h = 0;          // tokens; head dimension (0 with A_hat)
    std::string dtype;                    // stored type of Q (or A_hat): "float64" or "float32"
    Eigen::MatrixXd A_hat;                // the given affinity (accept_affinity), else empty
    std::optional<double> gamma;          // root attribute `gamma` (read_gamma and present)
    bool has_affinity() const { return A_hat.size() != 0; }
};

// Reads `path`. float32 or float64 values are converted to double; NaN/Inf refused. Throws
// Error(NoInput) when the file is missing or unreadable, Error(DataError) naming the file and
// dataset when it is not HDF5, lacks Q or K, a dataset is not a float32/float64 rank-1/2 array
// (the dtype is named), the declared arrays exceed memory_limit_bytes() (checked before any
// read; parameter "max_bytes"), Q and K differ in shape, V or
// A_hat has the wrong number of rows, A_hat is not square, or the columns do not split into
// `heads` (parameter "heads"). Cost: one read of each dataset (O(file size)).
QKInput load_qk_input(const std::string& path, const QKInputOptions& opt = {});

}  // namespace attnspec
