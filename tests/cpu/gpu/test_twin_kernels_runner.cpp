// The kappa(J), SVD and Neumann twins' kernel bodies (jacobian_spectrum_kernels.hpp,
// svd_kernels.hpp, neumann_kernels.hpp) on the CPU grid runner against their per-entry logic run
// as a host loop: clean, every entry is the same (the residual's block sums to rounding); the
// runner-only planted faults (index-math: a row / column decomposition or a tile read swapped;
// no-barrier: the barrier after the shared-memory staging left out, shown by the runner as fewer
// barriers) change the result.
#include <cmath>
#include <random>
#include <vector>

#include "../../../gpu/src/attention/jacobian_spectrum_kernels.hpp"
#include "../../../gpu/src/infsa/neumann_kernels.hpp"
#include "../../../gpu/src/spectral/svd_kernels.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace gl = attnspec::gpu::gram_logic;
namespace sl = attnspec::gpu::svd_logic;
namespace nl = attnspec::gpu::neumann_logic;

namespace {

std::vector<double> draw(long n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) x = u(rng);
    return v;
}

// Entries of a and b that differ (a NaN counts).
long differing(const std::vector<double>& a, const std::vector<double>& b) {
    long k = 0;
    for (std::size_t i = 0; i < a.size(); ++i) k += a[i] == b[i] ? 0 : 1;
    return k;
}

// Block column cp of the Gram combine (N = 33: tiles straddle the block rows; d = 3) on the
// runner with `fault`, and its barrier count.
std::vector<double> gram_combine(int fault, long* barriers) {
    const long N = 33, d = 3, Nd = N * d, cp = 1, rows = Nd - cp * N;
    const std::vector<double> XX = draw(N * N, 1), QQ = draw(N * N, 2), VV = draw(N * N, 3);
    const std::vector<double> T = draw(rows * N, 4);
    std::vector<double> G = draw(Nd * Nd, 5);
    if (fault < 0) {  // the reference: combine_entry per entry, a host loop
        for (long j = 0; j < N; ++j)
            for (long r = 0; r < rows; ++r)
                gl::combine_entry(G.data(), Nd, XX.data(), QQ.data(), VV.data(), T.data(), rows, N,
                                  cp, r, j, false);
        return G;
    }
    gpu::CpuGrid grid;
    gl::launch_gram_combine(grid, G.data(), Nd, XX.data(), QQ.data(), VV.data(), T.data(), rows, N,
                            cp, false, false, fault);
    *barriers = grid.counters().barriers;
    return G;
}

// The R factors of 3 matrices 70 x 40 (2 x 2 tiles, partial ones) on the runner with `fault`.
std::vector<double> extract_r(int fault, long* barriers) {
    const long m = 70, n = 40, batch = 3;
    const std::vector<double> qr = draw(batch * m * n, 6);
    std::vector<double> R(static_cast<std::size_t>(batch * n * n), -7.0);
    if (fault < 0) {
        for (long t = 0; t < batch * n * n; ++t) sl::extract_r(qr.data(), R.data(), m, n, t);
        return R;
    }
    gpu::CpuGrid grid;
    sl::launch_extract_r(grid, qr.data(), R.data(), m, n, batch, fault);
    *barriers = grid.counters().barriers;
    return R;
}

}  // namespace

TEST_CASE("twin kernels on the runner: the Gram combine stages its factor tiles",
          "[gpu][grid][jacobian_spectrum]") {
    long clean_barriers = 0, faulted_barriers = 0;
    const std::vector<double> ref = gram_combine(-1, nullptr);
    CHECK(differing(gram_combine(gl::kFaultNone, &clean_barriers), ref) == 0);
    CHECK(clean_barriers == 6);  // one per tile: 3 x 2 tiles of the 66 x 33 slice
    const std::vector<double> faulted = gram_combine(gl::kFaultNoBarrier, &faulted_barriers);
    CHECK(faulted_barriers == 0);
    CHECK(differing(faulted, ref) > 0);
}

TEST_CASE("twin kernels on the runner: P factors with the row split swapped differ",
          "[gpu][grid][jacobian_spectrum]") {
    const long N = 33, d = 3, Nd = N * d;
    const std::vector<double> S = draw(N * N, 7), V = draw(N * d, 8), A = draw(N * d, 9);
    std::vector<double> ref(static_cast<std::size_t>(Nd * N));
    for (long k = 0; k < N; ++k)
        for (long c = 0; c < d; ++c)
            for (long i = 0; i < N; ++i)
                ref[static_cast<std::size_t>(c * N + i + k * Nd)] =
                    gl::p_entry(S[i + k * N], V[k + c * N], A[i + c * N]);
    for (int fault : {gl::kFaultNone, gl::kFaultRowSplit}) {
        std::vector<double> P(ref.size(), NAN);
        gpu::CpuGrid grid;
        gl::launch_p_factors(grid, S.data(), V.data(), A.data(), P.data(), N, d, fault);
        if (fault == gl::kFaultNone)
            CHECK(differing(P, ref) == 0);
        else
            CHECK(differing(P, ref) > Nd * N / 2);  // rows other than c = i = 0 and the like move
    }
}

TEST_CASE("twin kernels on the runner: extract_r copies R through a shared tile",
          "[gpu][grid][svd]") {
    long clean_barriers = 0, faulted_barriers = 0, swapped_barriers = 0;
    const std::vector<double> ref = extract_r(-1, nullptr);
    CHECK(differing(extract_r(sl::kFaultNone, &clean_barriers), ref) == 0);
    CHECK(clean_barriers == 2 * 12);  // two per tile, 3 matrices x 2 x 2 tiles
    const std::vector<double> faulted = extract_r(sl::kFaultNoBarrier, &faulted_barriers);
    CHECK(faulted_barriers == 12);
    CHECK(differing(faulted, ref) > 0);
    const std::vector<double> swapped = extract_r(sl::kFaultSwappedTile, &swapped_barriers);
    CHECK(swapped_barriers == clean_barriers);
    CHECK(differing(swapped, ref) > 0);
}

TEST_CASE("twin kernels on the runner: the Neumann residual's block sums and form_m's faults",
          "[gpu][grid][neumann]") {
    const long len = 2000;  // 8 blocks of 256, the last one partial
    const std::vector<double> B = draw(len, 10), X = draw(len, 11), GAX = draw(len, 12);
    double ref = 0;
    for (long i = 0; i < len; ++i) {
        const double r = nl::residual_entry(B[i], X[i], GAX[i]);
        ref += r * r;
    }
    REQUIRE(nl::residual_blocks(len) == 8);
    for (int fault : {nl::kFaultNone, nl::kFaultNoBarrier}) {
        std::vector<double> partial(8, NAN);
        gpu::CpuGrid grid;
        nl::launch_residual(grid, B.data(), X.data(), GAX.data(), partial.data(), len, fault);
        double sum = 0;
        for (double p : partial) sum += p;
        INFO("fault " << fault << " sum " << sum << " ref " << ref);
        if (fault == nl::kFaultNone) {
            CHECK(grid.counters().barriers == 8 * 9);  // per block: after the stores, 8 tree steps
            CHECK(std::abs(sum - ref) <= 4 * len * 1.2e-16 * ref);  // reordered additions only
        } else {
            CHECK(grid.counters().barriers == 8 * 8);
            CHECK(!(std::abs(sum - ref) <= 1e-3 * ref));  // NaN or far off
        }
    }
    const long n = 37;
    const std::vector<double> Ahat = draw(n * n, 13);
    std::vector<double> ref_m(static_cast<std::size_t>(n * n));
    for (long t = 0; t < n * n; ++t) nl::form_m(Ahat.data(), ref_m.data(), 0.9, n, t, -1);
    for (int fault : {nl::kFaultNone, nl::kFaultTransposedA}) {
        std::vector<double> M(ref_m.size(), NAN);
        gpu::CpuGrid grid;
        nl::launch_form_m(grid, Ahat.data(), M.data(), 0.9, n, -1, fault);
        if (fault == nl::kFaultNone)
            CHECK(differing(M, ref_m) == 0);
        else
            CHECK(differing(M, ref_m) == n * n - n);  // every off-diagonal entry (Â not symmetric)
    }
}
