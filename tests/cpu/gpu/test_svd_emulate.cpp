// The SVD twin emulated (gpu/src/spectral/svd_sequence.hpp on svd_emulate.hpp's CpuOps: the
// kernel body on the CPU grid runner, cuSOLVER gesvdj / gesvdjBatched and cuBLAS geqrfBatched on
// LAPACK with the device calls' arguments): the clean check agrees, each planted fault is caught,
// and planted layout faults (a leading dimension off by one either way, a batch stride off by
// one, a workspace below the query) are caught by the emulation.
#include <string>
#include <vector>

#include "../../../gpu/src/spectral/svd_emulate.hpp"
#include "../../../gpu/src/spectral/svd_sequence.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace ss = attnspec::gpu::svd_seq;

namespace {

long n_disagree(const std::vector<gpu::TwinCase>& cs) {
    long k = 0;
    for (const auto& c : cs) k += c.agrees ? 0 : 1;
    return k;
}

struct LdaLong : ss::CpuOps {  // gesvdj's lda one above the rows: A read past its buffer
    void gesvdj(bool v, int m, int n, double* A, int lda, double* S, double* U, int ldu, double* V,
                int ldv, double* w, std::size_t lw, int* info) {
        CpuOps::gesvdj(v, m, n, A, lda + 1, S, U, ldu, V, ldv, w, lw, info);
    }
};
struct LdvShort : ss::CpuOps {  // gesvdjBatched's ldv one below n
    void gesvdj_batched(bool v, int m, int n, double* A, int lda, double* S, double* U, int ldu,
                        double* V, int ldv, double* w, std::size_t lw, int* info, int batch) {
        CpuOps::gesvdj_batched(v, m, n, A, lda, S, U, ldu, V, ldv - 1, w, lw, info, batch);
    }
};
struct StrideLong : ss::CpuOps {  // geqrfBatched's batch stride one too large
    void geqrf_batched(int m, int n, double* A, int lda, long sA, double* tau, long sT, int batch) {
        CpuOps::geqrf_batched(m, n, A, lda, sA + 1, tau, sT, batch);
    }
};
struct StrideShort : ss::CpuOps {  // geqrfBatched's batch stride one too small: wrong matrices
    void geqrf_batched(int m, int n, double* A, int lda, long sA, double* tau, long sT, int batch) {
        CpuOps::geqrf_batched(m, n, A, lda, sA - 1, tau, sT, batch);
    }
};
struct WorkShort : ss::CpuOps {  // the workspace query ignored
    void gesvdj(bool v, int m, int n, double* A, int lda, double* S, double* U, int ldu, double* V,
                int ldv, double* w, std::size_t lw, int* info) {
        CpuOps::gesvdj(v, m, n, A, lda, S, U, ldu, V, ldv, w, lw / 2, info);
    }
};

std::vector<Eigen::MatrixXd> batch_of(long batch, long m, long n) {
    std::vector<Eigen::MatrixXd> Ms;
    for (long b = 0; b < batch; ++b) Ms.push_back(Rng(70 + std::uint64_t(b)).gaussian(m, n));
    return Ms;
}

template <class Ops>
double batched_error(const std::vector<Eigen::MatrixXd>& Ms) {
    SvdOptions o;
    o.values_only = true;
    Ops ops;
    const auto got = ss::svd_batched(ops, Ms, o);
    double e = 0;
    for (std::size_t b = 0; b < Ms.size(); ++b)
        e = std::max(e, (got[b].sigma - attnspec::svd(Ms[b], o).sigma).cwiseAbs().maxCoeff());
    return e;
}

}  // namespace

TEST_CASE("svd emulated: the quick check agrees clean and each planted fault is caught",
          "[gpu-check][emulate][svd]") {
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    const auto clean = gpu::check_svd_emulated(opt);
    REQUIRE(clean.size() == 12);
    for (const auto& c : clean) {
        INFO(c.case_name << " err " << c.max_rel_err << " tol " << c.tolerance << " " << c.note);
        CHECK(c.agrees);
    }
    {  // off-by-one: the four cases of batched launches (the last matrix left undecomposed); the
       // 33 x 33 batch is decomposed matrix by matrix
        const gpu::ScopedPlantedFault planted(gpu::PlantedFault::off_by_one_tile);
        CHECK(n_disagree(gpu::check_svd_emulated(opt)) == 4);
    }
    {  // dropped-term: every case (each matrix decomposed without its last row)
        const gpu::ScopedPlantedFault planted(gpu::PlantedFault::dropped_term);
        CHECK(n_disagree(gpu::check_svd_emulated(opt)) == 12);
    }
}

TEST_CASE("svd emulated: the runner-only faults are caught", "[gpu-check][emulate][svd]") {
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    const auto check = [&opt] {
        return gpu::run_twin_guarded("svd", [&opt] { return gpu::check_svd_emulated(opt); });
    };
    {  // index-math: extract_r reads each tile transposed; only the three QR-path batches
       // (geqrfBatched + gesvdjBatched) launch it, and their sigma move
        const gpu::ScopedPlantedFault planted(gpu::PlantedFault::index_math);
        const auto cs = check();
        REQUIRE(cs.size() == 12);
        long qr_path = 0;
        for (const auto& c : cs) {
            INFO(c.case_name << " err " << c.max_rel_err << " tol " << c.tolerance);
            const bool qr = c.case_name.find("geqrfBatched") != std::string::npos;
            qr_path += qr ? 1 : 0;
            CHECK(c.agrees == !qr);
        }
        CHECK(qr_path == 3);
    }
    {  // no-barrier: R read from the shared tile before it is staged (NaN on the runner):
       // gesvdjBatched fails on it, the twin's one case disagrees with the error
        const gpu::ScopedPlantedFault planted(gpu::PlantedFault::no_barrier);
        const auto cs = check();
        REQUIRE(!cs.empty());
        CHECK(n_disagree(cs) == static_cast<long>(cs.size()));
        INFO(cs[0].note);
        CHECK(cs[0].note.find("error: ") == 0);
    }
}

TEST_CASE("svd emulated: planted layout faults in the library calls are caught",
          "[gpu-check][emulate][svd]") {
    SvdOptions o;
    o.values_only = true;
    const Eigen::MatrixXd M = Rng(60).gaussian(40, 33);
    {
        ss::CpuOps ops;
        CHECK((ss::svd(ops, M, o).sigma - attnspec::svd(M, o).sigma).cwiseAbs().maxCoeff() < 1e-12);
    }
    LdaLong lda_long;
    CHECK_THROWS_WITH(ss::svd(lda_long, M, o), Catch::Contains("operand A"));
    WorkShort work_short;
    CHECK_THROWS_WITH(ss::svd(work_short, M, o), Catch::Contains("below the query"));
    const auto square = batch_of(4, 20, 20);  // gesvdjBatched
    CHECK(batched_error<ss::CpuOps>(square) < 1e-12);
    CHECK_THROWS_WITH(batched_error<LdvShort>(square), Catch::Contains("ldv = 19"));
    const auto tall = batch_of(4, 100, 20);  // geqrfBatched + gesvdjBatched
    CHECK(batched_error<ss::CpuOps>(tall) < 1e-12);
    CHECK_THROWS_WITH(batched_error<StrideLong>(tall), Catch::Contains("reaches past"));
    CHECK(batched_error<StrideShort>(tall) > 1e-3);
}
