// Report section of `attnspec cond`: the group /cond written from a CondAnalysis
// (spectral/cond_analysis.hpp); its input matrix is read by io/matrix_input.hpp. Layout:
// reports/SCHEMA.md, "attnspec cond". HDF5 via io/h5.hpp. CPU only.
#pragma once
#include <string>

#include "attnspec/io/h5.hpp"
#include "attnspec/spectral/cond_analysis.hpp"

namespace attnspec {

// Creates the group `cond` under `parent`: attributes input, dataset, input_dtype (re-read from
// `input`: float32 or float64), method, rows, cols,
// residual, eta_U, eta_V, pad, seconds, headline_convention; datasets sigma, sigma_lo, sigma_hi,
// weyl_radius, triplet_residual, basis; groups kappa_strict/, kappa_nz/. Throws IoError.
void write_cond_section(H5Group& parent, const CondAnalysis& a, const std::string& input,
                        const std::string& dataset);

}  // namespace attnspec
