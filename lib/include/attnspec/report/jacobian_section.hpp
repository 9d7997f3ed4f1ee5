// Report section of `attnspec jacobian`: the group /jacobian with the run's attributes, the
// inputs (X shared or per head, weights, corrections, biases), per-head norms, timings, block
// norms, the optional spectrum (report/spectrum_record.hpp) and J itself when stored. Layout:
// reports/SCHEMA.md, "attnspec jacobian". HDF5 via io/h5.hpp. CPU only.
#pragma once
#include <string>

#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/io/attention_input.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec {

// Written head by head as the analysis runs (analyse_jacobians' sink), so that only one J is in
// memory. Every call throws Error(IoError) when HDF5 refuses a write.
class JacobianSection {
  public:
    // Creates `jacobian` under `parent` with the attributes of the run (wrt, correction,
    // bias_form, H, source, vec, evaluated_at, shared_X; N, D, d, s when every head has the same)
    // and /X when the heads share it. `bias_form` is apply_bias_form's label. `in` must outlive
    // the section.
    JacobianSection(H5Group& parent, const AttentionHeads& in, JacobianWrt wrt,
                    const std::string& source, const std::string& correction,
                    const std::string& bias_form);
    // Group head_<h>: spectrum/, X (own X only), W_*, C_*, b_* (when set), attributes name, N, D,
    // d, s, frobenius, max_abs, seconds, frobenius_J_{Q,K,V} (when J was formed, wrt weights), and
    // J (or J_X) when `J` is not empty. O(size of J) bytes written.
    void write_head(std::size_t h, const HeadJacobian& r, const Eigen::MatrixXd& J);
    // The layer attributes: frobenius_layer (heads sharing X) or the note `layer` (own X per
    // head), and `stored`.
    void finish(const JacobianAnalysis& a);

  private:
    H5Group g_;
    const AttentionHeads& in_;
    JacobianWrt wrt_;
};

}  // namespace attnspec
