// gpu-check cases of the matrix-free Perron twin (relu_kernel_check.hpp), host-only: the twin's
// ReLU operator against attnspec::ReluKernelOp on sizes straddling 31/32/33 and the CPU
// operator's tile (32 and the library's 1024), with partial 64-wide device tiles (N = 31, 33,
// 1023, 1025, 8193) and partial 16-wide d slices (d = 33, 65), tall and wide, fp64. Each operator
// encloses the exact product, so |gpu - cpu| <= width_cpu + width_gpu; the tolerance takes
// width_gpu at its a priori largest (relu_kernel_common.hpp: the device's enclosure formula at the
// largest value an honest device can return given the CPU's enclosure), never the device's own
// width (issue 32). The Perron pair (N <= 1025, where the CPU power iteration is quick) compares
// the certified enclosures' midpoints of rho(A+) (the CPU radius + the radius a converged iteration
// can have at most) and of ||A+||_F the same way as the products. Also the emulated check
// (gpu-check --emulate): the twin's kernel body and launch (relu_kernel_kernels.hpp) on the CPU
// grid runner.
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "infsa_faults.hpp"
#include "relu_kernel_check.hpp"
#include "relu_kernel_common.hpp"
#include "relu_kernel_kernels.hpp"

namespace attnspec::gpu {

namespace {

struct Shape {
    long N, d, tile;
    const char* kind;
};

double seconds_since(std::chrono::steady_clock::time_point a) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

TwinCase make(const Shape& s, const std::string& what) {
    TwinCase c;
    c.twin = "perron_tiled";
    c.precision = "fp64";
    c.shape = {s.N, s.d, s.tile};
    c.case_name = what + " N=" + std::to_string(s.N) + " d=" + std::to_string(s.d) +
                  " tile=" + std::to_string(s.tile) + " " + s.kind;
    return c;
}

void interval_case(TwinCase& c, const Interval& cpu, const Interval& gpu, double tol,
                   const std::string& reason) {
    const double mc = 0.5 * (cpu.lo + cpu.hi), mg = 0.5 * (gpu.lo + gpu.hi);
    compare_into(c, &mc, &mg, 1, tol, true, reason);
}

// The twin's operator with its row pass on the CPU grid runner: Q and K kept column-major
// (leading dimension N) as the device copy is, the planted fault as the device twin reads it.
class CpuGridReluOp final : public ReluRowsOp {
  public:
    CpuGridReluOp(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, Eigen::Index tile)
        : ReluRowsOp(Q, K, tile), Q_(Q), K_(K) {}

  private:
    Eigen::MatrixXd Q_, K_;
    void rows(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
              Eigen::VectorXd* f) const override {
        Eigen::VectorXd fz(N_);
        z.resize(N_);
        CpuGrid grid;
        perron_logic::run_relu_rows(grid, (transpose ? K_ : Q_).data(),
                                    (transpose ? Q_ : K_).data(), N_, d_, x.data(),
                                    infsa_logic::planted_fault_code(), z.data(), fz.data());
        if (f) *f = fz;
    }
};

}  // namespace

std::vector<TwinCase> perron_tiled_cases(const GpuCheckOptions& opt, const ReluOpFactory& make_twin,
                                         const std::string& note) {
    std::vector<Shape> shapes = {{31, 16, 32, "tall"},
                                 {32, 33, 32, "tall"},
                                 {33, 16, 32, "tall"},
                                 {31, 65, 32, "wide"},
                                 {1025, 64, 1024, "tall"}};
    if (!opt.quick) {
        shapes.push_back({1023, 33, 32, "tall"});
        shapes.push_back({8193, 64, 1024, "tall"});
    }
    std::vector<TwinCase> out;
    std::mt19937_64 rng(opt.seed);
    std::uniform_real_distribution<double> u(-0.25, 1.0);
    for (const Shape& s : shapes) {
        Eigen::MatrixXd Q(s.N, s.d), K(s.N, s.d);
        for (long j = 0; j < s.d; ++j)
            for (long i = 0; i < s.N; ++i) Q(i, j) = u(rng), K(i, j) = u(rng);
        Eigen::VectorXd x(s.N);
        for (long i = 0; i < s.N; ++i) x[i] = 0.1 + std::abs(u(rng));
        // the device operator's enclosure inputs, from the inputs (ReluKernelOp's constructor)
        const Eigen::VectorXd nq = Q.rowwise().norm(), nk = K.rowwise().norm();
        const double delta = 2 * gamma_n(double(s.d) + 2);
        const attnspec::ReluKernelOp cpu_op(Q, K, s.tile);
        const std::unique_ptr<ReluRowsOp> twin = make_twin(Q, K, s.tile);
        const ReluRowsOp& gpu_op = *twin;
        for (bool transpose : {true, false}) {
            TwinCase c = make(s, transpose ? "A+^T x" : "A+ x");
            Eigen::VectorXd zc, lc, hc, zg, lg, hg;
            auto t = std::chrono::steady_clock::now();
            cpu_op.apply(x, transpose, zc, lc, hc);
            c.cpu_seconds = opt.timings ? seconds_since(t) : -1;
            t = std::chrono::steady_clock::now();
            gpu_op.apply(x, transpose, zg, lg, hg);
            c.gpu_seconds = opt.timings ? seconds_since(t) : -1;
            const double tol = perron_logic::product_check_tolerance(
                x, transpose ? nk : nq, transpose ? nq : nk, delta, s.d, lc, hc);
            compare_into(c, zc.data(), zg.data(), s.N, tol, true,
                         "bound (a priori): both products lie in certified enclosures of the exact "
                         "A+ x: |gpu - cpu| <= width_cpu + the device formula's width at the "
                         "largest honest value (max over entries)");
            c.note = "one product, single run; " + note;
            out.push_back(c);
        }
        TwinCase f = make(s, "||A+||_F");
        const Interval fc = cpu_op.frobenius();
        interval_case(f, fc, gpu_op.frobenius(),
                      perron_logic::frobenius_check_tolerance(fc, delta, nq, nk, s.d),
                      "bound (a priori): |mid - mid| <= CPU radius + the device formula's radius "
                      "at the largest honest ||A+||_F");
        f.note = note;
        out.push_back(f);
        if (s.N > 1025) continue;
        TwinCase r = make(s, "rho(A+) left");
        auto t = std::chrono::steady_clock::now();
        const PerronResult pc = perron(cpu_op);
        r.cpu_seconds = opt.timings ? seconds_since(t) : -1;
        t = std::chrono::steady_clock::now();
        const PerronResult pg = perron(gpu_op);
        r.gpu_seconds = opt.timings ? seconds_since(t) : -1;
        const double rw = PerronOptions{}.rel_width;
        interval_case(r, pc.rho_enc, pg.rho_enc, perron_logic::rho_check_tolerance(pc.rho_enc, rw),
                      "bound (a priori): |mid - mid| <= CPU radius + rel_width " +
                          std::to_string(rw) +
                          " x CPU hi / (2 (1 - rel_width)), the most a converged enclosure has");
        r.agrees = r.agrees && pc.converged && pg.converged;
        r.note = "iterations cpu " + std::to_string(pc.iterations) + ", gpu " +
                 std::to_string(pg.iterations) +
                 "; |v_gpu - v_cpu| = " + std::to_string((pg.vec - pc.vec).norm()) +
                 " (estimates: " + std::to_string(pc.vec_error) + ", " +
                 std::to_string(pg.vec_error) + "); " + note;
        out.push_back(r);
    }
    return out;
}

std::vector<TwinCase> check_perron_tiled_emulated(const GpuCheckOptions& opt) {
    const ReluOpFactory on_runner = [](const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                       Eigen::Index tile) -> std::unique_ptr<ReluRowsOp> {
        return std::make_unique<CpuGridReluOp>(Q, K, tile);
    };
    return perron_tiled_cases(opt, on_runner, "kernel on the CPU grid runner");
}

}  // namespace attnspec::gpu
