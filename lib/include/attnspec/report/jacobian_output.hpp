// What `attnspec jacobian` prints on stdout: the text lines (per head J's size, norms and time,
// each head's spectrum, the layer norm, the report) or the members of its --json object. The
// report itself is report/jacobian_section.hpp. CPU only.
#pragma once
#include <ostream>
#include <string>

#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/base/json.hpp"
#include "attnspec/io/attention_input.hpp"

namespace attnspec {

// `report`: the report written ("" for none); `not_stored_cause`: why J is not in the report, in
// the caller's terms (printed only when the plan does not store J).
void print_jacobian_text(std::ostream& os, const AttentionHeads& in, const JacobianAnalysis& a,
                         const std::string& corr, const std::string& bias_form,
                         const std::string& report, const std::string& not_stored_cause);
// The members of the --json object after its header: shape, names, norms, spectra, the layer
// norm (null when not known), stored, report (null for none).
void json_jacobian(JsonWriter& j, const AttentionHeads& in, const JacobianAnalysis& a,
                   const std::string& corr, const std::string& bias_form,
                   const std::string& report);

}  // namespace attnspec
