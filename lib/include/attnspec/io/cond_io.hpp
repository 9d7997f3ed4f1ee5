// Input and report section of `attnspec cond`: one matrix read from any numeric dataset of an HDF5
// file, and the group /cond written from a CondAnalysis (spectral/cond_analysis.hpp). Layout:
// reports/SCHEMA.md, "attnspec cond". HDF5 via io/h5.hpp. CPU only.
#pragma once
#include <Eigen/Dense>
#include <string>

#include "attnspec/io/h5.hpp"
#include "attnspec/spectral/cond_analysis.hpp"

namespace attnspec {

// The rank-2 (or rank-1: one column) float32 or float64 dataset `dataset` of `file`, as h5py
// shows it, as double. Cost: one read, 8 m n bytes. Throws NoInput (file missing or unreadable),
// DataError naming the file and dataset (absent, rank 0 or > 2, empty, another stored type, NaN/
// Inf, or reading and decomposing it would need 32 m n bytes, more than memory_limit_bytes():
// refused before reading, parameter "max_bytes").
Eigen::MatrixXd load_matrix_input(const std::string& file, const std::string& dataset);

// Creates the group `cond` under `parent`: attributes input, dataset, input_dtype (re-read from
// `input`: float32 or float64), method, rows, cols,
// residual, eta_U, eta_V, pad, seconds, headline_convention; datasets sigma, sigma_lo, sigma_hi,
// weyl_radius, triplet_residual, basis; groups kappa_strict/, kappa_nz/. Throws IoError.
void write_cond_section(H5Group& parent, const CondAnalysis& a, const std::string& input,
                        const std::string& dataset);

}  // namespace attnspec
