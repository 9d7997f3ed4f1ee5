// Writers of the InfSA report sections (layout: reports/SCHEMA.md, `attnspec neumann` and
// `attnspec fidelity`): the `/neumann` group of a NeumannAnalysis and the `/fidelity` group of a
// FidelityTable, each also as the members of an open JSON object (the commands' --json). HDF5
// through io/h5. CPU only.
#pragma once
#include <cmath>
#include <string>

#include "attnspec/base/json.hpp"
#include "attnspec/infsa/fidelity_table.hpp"
#include "attnspec/infsa/neumann_analysis.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec {

// Where the analysed Â came from (attributes of `/neumann`).
struct NeumannSource {
    std::string source;      // "generated:<family>,mu=<mu>" or "input:<path>"
    std::string affinity;    // "relu", "softmax" or "given"
    double eps = 0;          // Frobenius epsilon of the affinity
    double frob_plus = NAN;  // ||A+||_F before normalisation; NaN when Â was given
};

// Creates group `neumann` under `root` with its attributes, invariants/, truncation/,
// centralities/ and, when computed, closure_times_V. Cost O(N d_v) writes; Error(IoError) on an
// HDF5 failure.
void write_neumann_section(H5Group& root, const NeumannAnalysis& a, const NeumannSource& src);
// The same results as members of an open JSON object (after json_header). Never throws.
void write_neumann_json(JsonWriter& j, const NeumannAnalysis& a, const NeumannSource& src);

// Creates group `fidelity` under `root`: the spec's attributes and one row per record. Cost
// O(records); Error(IoError) on an HDF5 failure.
// `input_dtype`: the stored type of the --input arrays ("float32", "float64"), written as the
// attribute input_dtype; empty for generated families (no attribute).
void write_fidelity_section(H5Group& root, const FidelityTable& t, const FidelitySpec& spec,
                            const std::string& input_dtype = {});
// `mode`, the spec, `summary` (per group) and `records` as members of an open JSON object.
void write_fidelity_json(JsonWriter& j, const FidelityTable& t, const FidelitySpec& spec);

}  // namespace attnspec
