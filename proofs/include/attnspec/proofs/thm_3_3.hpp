// thm3.3 (SC §3): the closed-form attention Jacobian blocks J_Q, J_K, J_V and J_X against the
// complex-step witness. Statement: proofs/thm_3_3.md. Eigen; CPU only.
#pragma once
#include <Eigen/Dense>
#include <functional>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// Route (a) closed-form J (and J_X) against the complex-step witness, per block Q, K, V, X:
// ||J_a - J_cs||_F <= tol_cs(n) ||M||_F with M the running-error magnitude (proofs/thm_3_3.md).
// `closed_form` replaces route (a) (tests plant wrong ones). Cost O(n) Jacobian evaluations.
using JacobianFn = std::function<Eigen::MatrixXd(const Head&)>;
CheckResult check_thm_3_3(const Head& h, const JacobianFn& closed_form = {});

CheckRun run_thm_3_3(const RunOptions& opt);

}  // namespace attnspec::proofs
