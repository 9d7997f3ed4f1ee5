// The Neumann twin emulated (gpu/src/infsa/neumann_sequence.hpp on neumann_emulate.hpp's CpuOps:
// the kernel bodies on the CPU grid runner, cuSOLVER / cuBLAS on LAPACK / the CPU BLAS with the
// device calls' arguments): the clean check agrees, each planted fault is caught, and planted
// layout faults in the library calls' arguments (a leading dimension off by one either way, a
// missing transpose) are caught by the emulation.
#include <string>
#include <vector>

#include "../../../gpu/src/infsa/neumann_emulate.hpp"
#include "../../../gpu/src/infsa/neumann_sequence.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace ns = attnspec::gpu::neumann_seq;

namespace {

long n_disagree(const std::vector<gpu::TwinCase>& cs) {
    long k = 0;
    for (const auto& c : cs) k += c.agrees ? 0 : 1;
    return k;
}

// Planted layout faults: the sequence's call with one argument changed, as if the sequence had
// passed it.
struct LdaShort : ns::CpuOps {  // getrf's lda one below the rows (cuSOLVER: INVALID_VALUE)
    void getrf(long m, long n, double* A, long lda, std::int64_t* ipiv, void* dw,
               const gpu::emu::GetrfWork& w, void* hw, int* info) {
        CpuOps::getrf(m, n, A, lda - 1, ipiv, dw, w, hw, info);
    }
};
struct LdaLong : ns::CpuOps {  // gemm's ldb one above the rows: B read past its buffer
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
        CpuOps::gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb + 1, beta, C, ldc);
    }
};
struct Transposed : ns::CpuOps {  // getrs solves M^T X = B
    void getrs(bool trans, long n, long nrhs, const double* LU, long lda, const std::int64_t* ipiv,
               double* B, long ldb, int* info) {
        CpuOps::getrs(!trans, n, nrhs, LU, lda, ipiv, B, ldb, info);
    }
};
struct IrsLdxLong : ns::CpuOps {  // IRS's ldx one above the rows: X written past its buffer
    int irs_gesv(gpu::IrsLowest lowest, long n, long nrhs, const double* A, long lda,
                 const double* B, long ldb, double* X, long ldx, int* info) {
        return CpuOps::irs_gesv(lowest, n, nrhs, A, lda, B, ldb, X, ldx + 1, info);
    }
};

struct Inputs {
    std::vector<Eigen::MatrixXd> As, Vs;
    std::vector<Eigen::MatrixXd> ref;
};

Inputs inputs(long n, long d) {
    Inputs in;
    for (std::uint64_t h = 0; h < 2; ++h) {
        in.As.push_back(gpu::row_stochastic_affinity(n, 40 + h));
        in.Vs.push_back(Rng(50 + h).gaussian(n, d));
        in.ref.push_back(NeumannKernel(in.As.back(), 0.9).closure_times(in.Vs.back()));
    }
    return in;
}

template <class Ops>
double closure_error(const Inputs& in) {
    Ops ops;
    const auto got = ns::closure(ops, in.As, 0.9, in.Vs, nullptr);
    double e = 0;
    for (std::size_t h = 0; h < got.size(); ++h)
        e = std::max(e, (got[h] - in.ref[h]).cwiseAbs().maxCoeff());
    return e;
}

}  // namespace

TEST_CASE("neumann emulated: the quick check agrees clean and each planted fault is caught",
          "[gpu-check][emulate][neumann]") {
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    const auto clean = gpu::check_neumann_emulated(opt);
    REQUIRE(clean.size() == 7);
    for (const auto& c : clean) {
        INFO(c.case_name << " err " << c.max_rel_err << " tol " << c.tolerance << " " << c.note);
        CHECK(c.agrees);
        CHECK(c.max_rel_err < c.tolerance);
    }
    for (auto f : {gpu::PlantedFault::off_by_one_tile, gpu::PlantedFault::dropped_term}) {
        INFO(gpu::to_string(f));
        const gpu::ScopedPlantedFault planted(f);
        const auto faulted = gpu::check_neumann_emulated(opt);
        // off-by-one: the five two-head cases (the IRS ones solve one matrix); dropped-term: all
        CHECK(n_disagree(faulted) == (f == gpu::PlantedFault::dropped_term ? 7 : 5));
    }
}

TEST_CASE("neumann emulated: the runner-only faults are caught", "[gpu-check][emulate][neumann]") {
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    {  // index-math: M formed from Â transposed, every solve is wrong
        const gpu::ScopedPlantedFault planted(gpu::PlantedFault::index_math);
        const auto cs = gpu::check_neumann_emulated(opt);
        REQUIRE(cs.size() == 7);
        for (const auto& c : cs) {
            INFO(c.case_name << " err " << c.max_rel_err << " tol " << c.tolerance);
            CHECK(c.max_rel_err > c.tolerance);
        }
        CHECK(n_disagree(cs) == 7);
    }
    {  // no-barrier: the residual's block sums read partials before they are stored (NaN on the
       // runner), the backward error is NaN: the six cases that check it (closures and IRS)
       // disagree, the kernel case (no backward error) agrees
        const gpu::ScopedPlantedFault planted(gpu::PlantedFault::no_barrier);
        const auto cs = gpu::check_neumann_emulated(opt);
        REQUIRE(cs.size() == 7);
        for (const auto& c : cs) {
            INFO(c.case_name << " " << c.note);
            const bool kernel_case = c.case_name.rfind("N N=", 0) == 0;
            CHECK(c.agrees == kernel_case);
            if (!kernel_case) CHECK(c.note.find("nan (bound") != std::string::npos);  // nan or -nan
        }
    }
}

TEST_CASE("neumann emulated: planted layout faults in the library calls are caught",
          "[gpu-check][emulate][neumann]") {
    const Inputs in = inputs(33, 5);
    const double clean = closure_error<ns::CpuOps>(in);
    CHECK(clean < 1e-12);
    // lda below the rows: rejected as cuSOLVER rejects it
    CHECK_THROWS_WITH(closure_error<LdaShort>(in),
                      Catch::Contains("cusolverDnXgetrf: invalid value (lda = 32"));
    // ldb above the rows: gamma Â V would read past V's buffer
    CHECK_THROWS_WITH(closure_error<LdaLong>(in), Catch::Contains("reaches past"));
    // a transpose lost: M^T X = B is solved, the answer is wrong
    CHECK(closure_error<Transposed>(in) > 1e-3);
    // IRS writes X with ldx = n + 1: past its buffer
    IrsLdxLong ops;
    CHECK_THROWS_WITH(
        ns::closure_mixed(ops, in.As[0], 0.9, in.Vs[0], nullptr, gpu::IrsLowest::fp32, nullptr),
        Catch::Contains("operand X"));
}

TEST_CASE("neumann emulated: IRS refines to fp64 from each lowest precision",
          "[gpu-check][emulate][neumann]") {
    const Inputs in = inputs(64, 4);
    for (auto lowest :
         {gpu::IrsLowest::fp32, gpu::IrsLowest::fp16, gpu::IrsLowest::bf16, gpu::IrsLowest::tf32}) {
        INFO(gpu::to_string(lowest));
        ns::CpuOps ops;
        int iters = -99;
        gpu::NeumannSolveStats st;
        const Eigen::MatrixXd X =
            ns::closure_mixed(ops, in.As[0], 0.9, in.Vs[0], &iters, lowest, &st);
        CHECK(iters >= 0);  // refined, no fallback (kappa_inf <= 19)
        CHECK((X - in.ref[0]).cwiseAbs().maxCoeff() < 1e-12);
        CHECK(st.backward_error < 1e-15);
    }
}
