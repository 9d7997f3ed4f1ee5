// Instance regimes shared by the attention checks (thm3.3, thm3.4, specA-sweep): the regime grid,
// seeded heads, the embedded input heads, and a head's storage in a record (replay). Regimes are
// described in proofs/thm_3_3.md ("Instances"). Eigen; CPU only.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec {
class H5Reader;  // io/h5.hpp: stored_head reads a record, <hdf5.h> stays out of this header
}  // namespace attnspec

namespace attnspec::proofs {

struct AttentionRegime {
    std::string shape;  // "N<D", "N>D", "d=1", "d=D", ...
    long N, D, d;
    std::string weights;  // "gauss-0.1" | "gauss-1" | "gauss-3" | "kappa-1e3" | "lambda-10"
    bool inv_sqrt_d;      // logit scale 1/sqrt(d) instead of 1
    std::string tokens;   // "gaussian" | "layernorm"
    std::string name() const;
};
// The regime grid of the options (--shape replaces the shapes, --thorough adds a large one).
std::vector<AttentionRegime> attention_regimes(const RunOptions& opt);
// Seeded head of a regime; corrections (lambda-10) are applied and frozen (SpecA, Def 3.6).
Head draw_head(const AttentionRegime& r, std::uint64_t seed);
// Head stored in a record's instance/ group (X, W_Q, W_K, W_V, optional C_*, b_*; values/s).
// Errors: DataError naming the missing dataset or value.
Head stored_head(const H5Reader& r, const std::string& group);
void store_head(CheckResult& res, const Head& h);
// Every head of a file in the attention input schema (reports/SCHEMA.md, "Attention input
// files"; read by io/attention_input.hpp), in file order, in the paper's bias-free form: biases
// b_Q, b_K, b_V the file may hold are dropped (the theorem checks test the statements as made).
// Errors: NoInput (missing), DataError (malformed, shapes, NaN).
std::vector<std::pair<std::string, Head>> load_heads(const std::string& path);

}  // namespace attnspec::proofs
