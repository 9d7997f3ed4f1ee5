// The input of `attnspec cond`: one matrix read from any numeric dataset of an HDF5 file. CPU only.
#pragma once
#include <Eigen/Dense>
#include <string>

namespace attnspec {

// The rank-2 (or rank-1: one column) float32 or float64 dataset `dataset` of `file`, as h5py
// shows it, as double. Cost: one read, 8 m n bytes. Throws NoInput (file missing or unreadable),
// DataError naming the file and dataset (absent, rank 0 or > 2, empty, another stored type, NaN/
// Inf, or reading and decomposing it would need 32 m n bytes, more than memory_limit_bytes():
// refused before reading, parameter "max_bytes").
Eigen::MatrixXd load_matrix_input(const std::string& file, const std::string& dataset);

}  // namespace attnspec
