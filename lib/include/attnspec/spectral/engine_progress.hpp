// For the library's own solvers (the operator-spectrum engine, and the Jacobian and Gram assembly
// of attention/ that feed it; a command draws the reports with cli/engine_progress.hpp): progress
// reports of one stage of a solve (EngineProgress, spectral/operator_spectrum.hpp) with an
// estimate of the time left, and a heartbeat that reports on a helper thread while a long LAPACK
// call runs. Public because two modules use it (scripts/check-includes.sh).
#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "attnspec/spectral/operator_spectrum.hpp"

namespace attnspec::opspec {

// A stage counted in units (products, steps): seconds_left from the rate so far.
class StageProgress {
  public:
    StageProgress(const EngineProgressFn& fn, std::string stage, const char* unit, long total);
    // done units so far; a total that proves short grows to done + `grow`.
    void update(long done, long grow = 1);
    void finish();  // total = done (at least 1): the stage's actual count
    long done() const { return done_; }

  private:
    const EngineProgressFn& fn_;
    EngineProgress p_;
    long done_ = 0;
    std::chrono::steady_clock::time_point t0_;
};

// Runs `work` (a blocking call) while a helper thread reports `stage` every 0.5 s in percent of
// `expected_seconds` (capped at 99 until it returns; NaN seconds_left once overdue), then 100%.
// Without a callback it only runs `work`.
void with_heartbeat(const EngineProgressFn& fn, const std::string& stage, double expected_seconds,
                    const std::function<void()>& work);

// Floating-point rate (flop/s) of dpotrf on this machine and BLAS, measured on the leading
// min(n, 1024) block of G - shift I (positive definite when G - shift I is): ~0.36 Gflop. The
// rate still grows with n: at ViT-B size (n = 12608) the estimate is ~2-10x long.
double measured_cholesky_rate(const Eigen::MatrixXd& G, double shift);

// Expected seconds of the Cholesky (n^3 / 3 flops) and of dsyevd values-only (tridiagonal
// reduction, 4 n^3 / 3 flops, half of it BLAS-2: kEigSlowdown times slower per flop than the
// Cholesky) at the Cholesky's `rate` flop/s. kEigSlowdown: measured 5.9 at n = 2048 on the 2-core
// reference machine (dpotrf 1.94 s, dsyevd 45.5 s; OpenBLAS 0.3.21, Prescott kernels).
constexpr double kEigSlowdown = 6.0;
double cholesky_seconds(Eigen::Index n, double rate);
double eigensolve_seconds(Eigen::Index n, double rate);

}  // namespace attnspec::opspec
