// CUDA twin of infsa/neumann.hpp: the Neumann kernel N = (I - gamma Â)^{-1} and the closure
// C V = N (gamma Â V) by cuSOLVER Xgetrf/Xgetrs in fp64, batched over heads, and the
// mixed-precision closure by cuSOLVER's iterative-refinement solver (IRSXgesv, LU in a lower
// precision, classical refinement to fp64, fp64 fallback). M = I - gamma Â is formed on the device
// (neumann_logic.hpp), gamma Â V by cuBLAS; the checks (gamma, Â square, finite, >= 0,
// gamma rho(Â) < 1 certified) are the CPU's certify_convergent. Each solve reports its normwise
// backward error ||B - M X||_F / (||M||_F ||X||_F + ||B||_F), computed in fp64 on the device from
// Â (not from the factors). Sources gpu/src/infsa/neumann_cuda.{cu,cpp}. Without CUDA
// every entry throws NoDevice (69).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu {

// The precision of the LU inside the refinement solver (cuSOLVER's "lowest precision").
enum class IrsLowest { fp32, fp16, bf16, tf32 };
const char* to_string(IrsLowest p);

struct NeumannSolveStats {
    long n = 0, rhs = 0;
    std::string solver;  // "getrf/getrs fp64" or "IRS fp64<-fp16" etc.
    int iterations = 0;  // IRS: cuSOLVER's niters (> 0 refinement steps, < 0 fell back); LU: 0
    double backward_error = 0;  // ||B - M X||_F / (||M||_F ||X||_F + ||B||_F), fp64
};

// N per head (getrs on the identity, O(N^3) each). Every Â must be square of the same size.
std::vector<Eigen::MatrixXd> neumann_kernels(Context& ctx,
                                             const std::vector<Eigen::MatrixXd>& A_hats,
                                             double gamma,
                                             std::vector<NeumannSolveStats>* stats = nullptr);

// C V per head (twin of NeumannKernel::closure_times): Vs[h] has A_hats[h].rows() rows.
// Honours the planted faults: dropped-term forgets the identity on one diagonal element of
// I - gamma Â; off-by-one-tile solves one head fewer (that head's result stays 0).
std::vector<Eigen::MatrixXd> closure_times(Context& ctx, const std::vector<Eigen::MatrixXd>& A_hats,
                                           double gamma, const std::vector<Eigen::MatrixXd>& Vs,
                                           std::vector<NeumannSolveStats>* stats = nullptr);

// Twin of attnspec::closure_times_mixed: IRS with the LU in `lowest`. `iterations` receives
// cuSOLVER's niters (> 0 refinement steps, < 0 fell back to the fp64 LU), like dsgesv's iter.
Eigen::MatrixXd closure_times_mixed(Context& ctx, const Eigen::MatrixXd& A_hat, double gamma,
                                    const Eigen::MatrixXd& V, int* iterations = nullptr,
                                    IrsLowest lowest = IrsLowest::fp32,
                                    NeumannSolveStats* stats = nullptr);

// Host helpers (both builds; the CPU suite tests them): ||I - gamma Â||_F through the same
// per-element function the device uses, O(N^2); and the backward error of a host solve.
double identity_minus_gamma_norm(const Eigen::MatrixXd& A_hat, double gamma);
double solve_backward_error(const Eigen::MatrixXd& A_hat, double gamma, const Eigen::MatrixXd& X,
                            const Eigen::MatrixXd& B);
// check_neumann's inputs: Â >= 0 with uniform entries, each row scaled to sum 1, so rho(Â) =
// ||Â||_inf = 1 and kappa_inf(I - gamma Â) <= (1 + gamma) / (1 - gamma). Seeded, O(N^2).
Eigen::MatrixXd row_stochastic_affinity(long n, std::uint64_t seed);

}  // namespace attnspec::gpu
