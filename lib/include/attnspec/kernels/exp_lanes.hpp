// exp over an array, several values at a time (vector lanes), with a stated error bound: the
// float64 references' exponentials (proofs/kernel_tolerance.md, "The reference's exp").
#pragma once

namespace attnspec::kernels {

// The relative error bound of exp_lanes, in units u = 2^-53: |y - exp(x)| <= kExpLanesError u
// exp(x) wherever exp(x) is a normal double (the proof gives 3.82; glibc's exp, used beyond the
// range, is within 2).
constexpr double kExpLanesError = 4;

// y[j] = exp(x[j]) for j < n (x == y allowed): Cody-Waite reduction x = k ln 2 + r, |r| <= 0.3466,
// the degree-13 Taylor polynomial of exp(r) by Horner's rule, then 2^k; the same IEEE operations
// on every target (compiled with -ffp-contract=off: no FMA), so the same bits on any x86-64 CPU.
// Values with |x| > 708 or NaN go through std::exp (within 1 ulp, underflow and overflow as it
// gives them).
void exp_lanes(const double* x, double* y, long n);

// exp_lanes where the caller knows every |x[j]| <= kExpLanesRange or NaN: the same values (NaN
// for NaN) without the range scan.
constexpr double kExpLanesRange = 708;
void exp_lanes_in_range(const double* x, double* y, long n);

}  // namespace attnspec::kernels
