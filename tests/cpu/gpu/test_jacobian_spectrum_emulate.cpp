// The kappa(J) twin emulated (gpu/src/attention/jacobian_spectrum_sequence.hpp on
// jacobian_spectrum_emulate.hpp's CpuOps: the Gram kernels on the CPU grid runner, cuBLAS GEMMs,
// asum, symv and cuSOLVER syevd on the CPU BLAS / LAPACK with the device calls' arguments): the
// clean check agrees within its a-priori tolerance, each planted fault is caught, and planted
// layout faults (a GEMM leading dimension off by one either way, a lost transpose, a workspace
// below the query, the trace read with the wrong stride) are caught by the emulation.
#include <string>
#include <vector>

#include "../../../gpu/src/attention/jacobian_spectrum_emulate.hpp"
#include "../../../gpu/src/attention/jacobian_spectrum_sequence.hpp"
#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace js = attnspec::gpu::jac_seq;

namespace {

long n_disagree(const std::vector<gpu::TwinCase>& cs) {
    long k = 0;
    for (const auto& c : cs) k += c.agrees ? 0 : 1;
    return k;
}

// Planted layout faults: the sequence's call with one argument changed.
struct LdcShort : js::CpuOps {  // a GEMM's ldc one below the rows (cuBLAS: INVALID_VALUE)
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
        CpuOps::gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc - 1);
    }
};
struct LdaLong : js::CpuOps {  // a GEMM's lda one above: the last operand read past its buffer
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
        CpuOps::gemm(ta, tb, m, n, k, alpha, A, lda + 1, B, ldb, beta, C, ldc);
    }
};
struct NoTranspose : js::CpuOps {  // Z Z^T computed as Z Z (op(B) lost) where it is square
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
        const bool lose = tb && m == n && n == k;  // X X^T, Q Q^T, SX SX^T when D = N ...
        CpuOps::gemm(ta, lose ? false : tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
};
struct WorkShort : js::CpuOps {  // syevd handed less work than its query
    void syevd(long n, double* A, long lda, double* W, double* work, long lwork, int* info) {
        CpuOps::syevd(n, A, lda, W, work, lwork - 1, info);
    }
};
struct TraceStride : js::CpuOps {  // the trace read down a column (stride 1), not the diagonal
    double asum(long n, const double* x, long) { return CpuOps::asum(n, x, 1); }
};

Head head(long N, long D, long d) {
    return gpu::spec_attention_instance(N, D, d, 1, 7, true).head(0);
}

template <class Ops>
OperatorSpectrum run(const Head& h) {
    Ops ops;
    return js::spectrum(ops, h, LargeSvdOptions{});
}

}  // namespace

TEST_CASE("jacobian_spectrum emulated: the quick check agrees clean and each fault is caught",
          "[gpu-check][emulate][jacobian_spectrum]") {
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    const auto clean = gpu::check_jacobian_spectrum_emulated(opt);
    REQUIRE(clean.size() == 4);
    for (const auto& c : clean) {
        INFO(c.case_name << " err " << c.max_abs_err << " tol " << c.tolerance << " " << c.note);
        CHECK(c.agrees);
    }
    for (auto f : {gpu::PlantedFault::off_by_one_tile, gpu::PlantedFault::dropped_term}) {
        INFO(gpu::to_string(f));
        const gpu::ScopedPlantedFault planted(f);
        CHECK(n_disagree(gpu::check_jacobian_spectrum_emulated(opt)) == 4);
    }
}

TEST_CASE("jacobian_spectrum emulated: the runner-only faults are caught",
          "[gpu-check][emulate][jacobian_spectrum]") {
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    const auto check = [&opt] {
        return gpu::run_twin_guarded("jacobian_spectrum",
                                     [&opt] { return gpu::check_jacobian_spectrum_emulated(opt); });
    };
    {  // index-math: P's rows split as i d + c, every case's sigma moves
        const gpu::ScopedPlantedFault planted(gpu::PlantedFault::index_math);
        const auto cs = check();
        REQUIRE(cs.size() == 4);
        for (const auto& c : cs) {
            INFO(c.case_name << " err " << c.max_abs_err << " tol " << c.tolerance);
            CHECK(!c.agrees);
            CHECK(c.max_abs_err > c.tolerance);
        }
    }
    {  // no-barrier: the combine reads factor tiles before they are staged (NaN on the runner),
       // G is not finite and the twin fails: one case, disagreeing, with the error
        const gpu::ScopedPlantedFault planted(gpu::PlantedFault::no_barrier);
        const auto cs = check();
        REQUIRE(!cs.empty());
        CHECK(n_disagree(cs) == static_cast<long>(cs.size()));
        INFO(cs[0].note);
        CHECK(cs[0].note.find("error: ") == 0);
    }
}

TEST_CASE("jacobian_spectrum emulated: planted layout faults in the library calls are caught",
          "[gpu-check][emulate][jacobian_spectrum]") {
    const Head h = head(32, 32, 4);  // N = D: the X X^T and SX SX^T products are square
    const OperatorSpectrum cpu = attnspec::jacobian_spectrum(h, gpu::jacobian_check_cpu_options());
    const OperatorSpectrum ok = run<js::CpuOps>(h);
    const gpu::JacobianCheckTolerance tol = gpu::jacobian_check_tolerance(h, cpu);
    CHECK(tol.ends_within(std::abs(ok.max.sigma - cpu.max.sigma),
                          std::abs(ok.min.sigma - cpu.min.sigma)));
    CHECK_THROWS_WITH(run<LdcShort>(h), Catch::Contains("cublasDgemm: invalid value (ldc"));
    CHECK_THROWS_WITH(run<LdaLong>(h), Catch::Contains("reaches past"));
    CHECK_THROWS_WITH(run<WorkShort>(h), Catch::Contains("below the query"));
    const OperatorSpectrum nt = run<NoTranspose>(h);
    CHECK(!tol.ends_within(std::abs(nt.max.sigma - cpu.max.sigma),
                           std::abs(nt.min.sigma - cpu.min.sigma)));
    CHECK(std::abs(run<TraceStride>(h).gram_trace - ok.gram_trace) > 1e-6 * ok.gram_trace);
}
