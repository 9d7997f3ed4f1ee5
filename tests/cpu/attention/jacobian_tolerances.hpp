// Tolerances of the Jacobian route comparisons, shared by the attention tests (test_jacobian.cpp,
// test_bias.cpp). All absolute in Frobenius norm, scaled by the running-error magnitude M =
// jacobian_*_magnitude, n = N + D + d (+ 1 with biases). Reasons: proofs/jacobian_routes.md.
#pragma once
#include <cmath>

#include "test_support.hpp"

namespace attnspec::test {

// routes (a) vs (b), and the literal Kronecker form: each entry is a sum of <= n + 3 products
// whose absolute values sum to M (first-order bound gamma_{n+3} M per route) -> two routes:
// 2 gamma_{n+3} <= 4 n u for n >= 3 -> measured worst 0.09 n u -> headroom 45x.
inline double tol_routes(double n) { return 4 * n * kU; }
// complex step with h = 1e-30: truncation h^2 |A'''| / 6 underflows; what is left is the
// rounding of the complex forward pass (complex multiply <= sqrt(5) u, Brent-Percival-Zimmermann
// 2007), i.e. at most ~2x the real bound -> 8 n u -> measured worst 0.22 n u -> headroom 36x.
inline double tol_complex_step(double n) { return 8 * n * kU; }
// central differences with h = (3u)^(1/3) max(1, |w|): truncation h^2 |A'''| / 6 + rounding
// u |A| / h, both ~ h^2; |A'''| has no a-priori bound relative to M, so the factor is empirical:
// measured worst 1.66 h^2 (unsaturated grid) -> 16 h^2 -> headroom ~10x. Not used where the
// softmax saturates (lambda = 10): there |A'''| grows like the logit scale cubed.
inline double tol_fd() { return 16 * std::pow(3 * kU, 2.0 / 3.0); }

}  // namespace attnspec::test
