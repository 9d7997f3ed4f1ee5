// Perron pair of the InfSA affinity on the device, matrix-free (proofs/infsa_neumann.md, "Perron
// certificate"): the CUDA twin of lib/include/attnspec/infsa/relu_kernel.hpp (ReluKernelOp) driven
// by the same Collatz–Wielandt power iteration (attnspec::perron, infsa/perron.hpp). The device
// computes A+ x and A+^T x (A+ = ReLU(Q K^T / d_h)) in tiles, never N x N in memory, and
// ||A+||_F in the same pass; the host wraps each product in the enclosure ReluKernelOp gives it
// (gpu/src/infsa/relu_kernel_logic.hpp), so the certificate holds for the exact A+ of Q, K.
// rho(Â) = rho(A+) / (||A+||_F + eps) with the same vector. Sources:
// gpu/src/infsa/relu_kernel_cuda.{cu,cpp}. A CPU-only build throws NoDevice (exit 69).
#pragma once
#include <Eigen/Dense>

#include "attnspec/base/check.hpp"
#include "attnspec/gpu/base/context.hpp"
#include "attnspec/infsa/perron.hpp"

namespace attnspec::gpu {

// The twin's operator whatever runs its row pass (both builds, relu_kernel_common.cpp): the
// constructor checks of attnspec::ReluKernelOp (check_qk, tile > 0), the row norms and delta,
// and the enclosures wrapped around each raw pass (relu_kernel_common.hpp), so the device and an
// emulation of it (`gpu-check --emulate`: the kernel body on the CPU grid runner) share them.
class ReluRowsOp : public NonnegOperator {
  public:
    ReluRowsOp(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, Eigen::Index tile);
    Eigen::Index size() const override { return N_; }
    void apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z, Eigen::VectorXd& z_lo,
               Eigen::VectorXd& z_hi) const override;
    // ||A+||_F enclosure: accumulated during the first apply(), else one tiled pass.
    Interval frobenius() const;
    long passes() const { return passes_; }

  protected:
    // The raw pass: z_r = sum_c relu(R_r . C_c) x_c and, when f is given, f_r = sum_c
    // relu(R_r . C_c)^2 (R = Q, C = K; transposed R = K, C = Q), with the planted fault
    // (infsa_logic::planted_fault_code()).
    virtual void rows(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
                      Eigen::VectorXd* f) const = 0;
    Eigen::Index N_ = 0, d_ = 0, tile_ = 0;

  private:
    Eigen::VectorXd nq_, nk_;
    double delta_ = 0;
    mutable long passes_ = 0;
    mutable bool frob_done_ = false;
    mutable Interval frob_;
    void run(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z) const;
};

// Device twin of attnspec::ReluKernelOp: same constructor checks, same enclosures (ReluRowsOp).
// Copies Q and K to the device once (2 N d doubles); apply() moves one N-vector each way and costs
// 2 N^2 d flops on the device. `tile` is the CPU operator's (checked, tile > 0); the kernel's
// tiles are fixed, 64 x 64 scores staged through shared memory (relu_kernel_kernels.hpp).
class ReluKernelOp final : public ReluRowsOp {
  public:
    ReluKernelOp(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                 Eigen::Index tile = 1024);

  private:
    Context& ctx_;
    DeviceBuffer dQ_, dK_;
    mutable DeviceBuffer dx_, dz_, df_;
    void rows(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
              Eigen::VectorXd* f) const override;
};

// The certified left (opt.left) or right Perron pair of A+ = ReLU(Q K^T / d_h) with the product
// on the device: attnspec::perron(gpu::ReluKernelOp(ctx, Q, K, tile), opt). `frob_plus`, when
// given, receives the ||A+||_F enclosure.
PerronResult perron_tiled(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                          const PerronOptions& opt = {}, Eigen::Index tile = 1024,
                          Interval* frob_plus = nullptr);

}  // namespace attnspec::gpu
