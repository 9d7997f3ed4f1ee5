// gpu::svd, svd_batched, kappa (svd_cuda.hpp): the decomposition by cuSOLVER gesvdj on the
// device; checks, scaling, enclosures and refinement by the CPU's svd_with on the host.
// Twin of lib/src/spectral/svd.cpp.
#include "attnspec/gpu/spectral/svd_cuda.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "../base/cusolver_bindings.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "svd_launch.hpp"
#include "svd_logic.hpp"

namespace attnspec::gpu {

namespace {

constexpr const char* kMethod = "cusolver-gesvdj";

bool dropped_term() { return planted_fault() == PlantedFault::dropped_term; }

int dim(long v) {
    if (v > 2147483647L)
        throw Error(ExitCode::DataError, "SVD dimension " + std::to_string(v) +
                                             " exceeds the 32-bit size cuSOLVER gesvdj accepts");
    return static_cast<int>(v);
}

void check_info(int info, const std::string& what) {
    if (info < 0)
        throw Error(ExitCode::Internal, what + ": argument " + std::to_string(-info) + " rejected");
    if (info > 0)
        fail_data(what + " did not converge in 100 sweeps (info = " + std::to_string(info) + ")");
}

// One matrix on the device: sigma and, unless values_only, thin U and V.
void gesvdj_one(Context& ctx, const Eigen::MatrixXd& A, bool values_only, SvdResult& out) {
    const int m = dim(A.rows()), n = dim(A.cols()), r = std::min(m, n);
    const bool vectors = !values_only;
    DeviceMatrix<double> dA(m, n), dS(r, 1), dU(m, r), dV(n, r);
    const long drop = svd_logic::dropped_row(m, dropped_term());
    if (drop < 0) {
        dA.upload_sync(ctx, A.data());
    } else {  // planted fault: the device decomposes A without its last row
        Eigen::MatrixXd B = A;
        svd_logic::drop_row(B.data(), m, n, 1, drop);
        dA.upload_sync(ctx, B.data());
    }
    const std::size_t lw = solver::gesvdj_buffer_doubles(ctx, vectors, m, n);
    DeviceMatrix<double> work(static_cast<long>(std::max<std::size_t>(lw, 1)), 1);
    DeviceMatrix<int> info(1, 1);
    solver::gesvdj(ctx, vectors, m, n, dA.data(), dS.data(), dU.data(), dV.data(), work.data(), lw,
                   info.data());
    check_info(solver::read_info(ctx, info.data()), "cuSOLVER gesvdj");
    out.method = kMethod;
    out.sigma.resize(r);
    dS.download_sync(ctx, out.sigma.data());
    if (values_only) return;
    out.U.resize(m, r);
    out.V.resize(n, r);
    dU.download_sync(ctx, out.U.data());
    dV.download_sync(ctx, out.V.data());
}

// A batch decomposed on the device, before the host enclosures.
struct Decomposed {
    Eigen::VectorXd sigma;
    Eigen::MatrixXd U, V;
    int info = 0;
};

// Batched paths for `batch` finite m x n matrices (see BatchedSvdPath).
std::vector<Decomposed> decompose_batch(Context& ctx, const std::vector<Eigen::MatrixXd>& Ms,
                                        bool values_only, BatchedSvdPath path) {
    const long batch = static_cast<long>(Ms.size());
    const bool wide = Ms[0].rows() < Ms[0].cols();
    // Work on tall matrices (p >= q): a wide one is transposed (sigma(M^T) = sigma(M), U <-> V).
    const int p = dim(std::max(Ms[0].rows(), Ms[0].cols())),
              q = dim(std::min(Ms[0].rows(), Ms[0].cols()));
    std::vector<double> host = pack_tall(Ms);
    const long drop = svd_logic::dropped_row(p, dropped_term());
    if (drop >= 0) svd_logic::drop_row(host.data(), p, q, batch, drop);
    DeviceMatrix<double> dA(static_cast<long>(p) * q, batch);
    dA.upload_sync(ctx, host.data());
    const long done =
        svd_logic::batch_processed(batch, planted_fault() == PlantedFault::off_by_one_tile);
    // The square (or tall <= 32) matrices gesvdjBatched sees: M itself or the R factors.
    int sm = p, sn = q;
    DeviceMatrix<double> dR;
    double* svd_in = dA.data();
    if (path == BatchedSvdPath::qr_gesvdj_batched) {
        DeviceMatrix<double> tau(q, batch);
        if (done > 0)
            solver::geqrf_batched(ctx, p, q, dA.data(), tau.data(), static_cast<int>(done));
        dR = DeviceMatrix<double>(static_cast<long>(q) * q, batch);
        dR.zero(ctx);
        svd_kernels::extract_r(dA.data(), dR.data(), p, q, done, ctx.stream());
        ctx.synchronize();  // tau is freed on leaving this block
        svd_in = dR.data();
        sm = q;
    }
    const bool vectors = !values_only;
    DeviceMatrix<double> dS(q, batch), dU(static_cast<long>(sm) * sm, batch),
        dV(static_cast<long>(sn) * sn, batch);
    dS.zero(ctx);
    DeviceMatrix<int> info(batch, 1);
    info.zero(ctx);
    if (done > 0) {
        const std::size_t lw =
            solver::gesvdj_batched_buffer_doubles(ctx, vectors, sm, sn, static_cast<int>(done));
        DeviceMatrix<double> work(static_cast<long>(std::max<std::size_t>(lw, 1)), 1);
        solver::gesvdj_batched(ctx, vectors, sm, sn, svd_in, dS.data(), dU.data(), dV.data(),
                               work.data(), lw, info.data(), static_cast<int>(done));
        ctx.synchronize();  // work is freed on leaving this block
    }
    Eigen::MatrixXd S(q, batch), U, V;
    std::vector<int> infos(static_cast<std::size_t>(batch));
    dS.download_sync(ctx, S.data());
    info.download_sync(ctx, infos.data());
    if (vectors) {
        U.resize(static_cast<long>(sm) * sm, batch);
        V.resize(static_cast<long>(sn) * sn, batch);
        dU.download_sync(ctx, U.data());
        dV.download_sync(ctx, V.data());
    }
    std::vector<Decomposed> out(static_cast<std::size_t>(batch));
    for (long b = 0; b < batch; ++b) {
        Decomposed& d = out[static_cast<std::size_t>(b)];
        d.sigma = S.col(b);
        d.info = infos[static_cast<std::size_t>(b)];
        if (!vectors) continue;
        // gesvdjBatched writes full U (sm x sm) and V (sn x sn); the thin factors are their
        // first q columns (vectors only on the gesvdj_batched path, where sm = p).
        thin_factors(U.col(b).data(), V.col(b).data(), sm, sn, wide, d.U, d.V);
    }
    return out;
}

}  // namespace

SvdResult svd(Context& ctx, const Eigen::MatrixXd& M, const SvdOptions& opt) {
    return svd_with(M, opt, [&ctx, &opt](Eigen::Ref<const Eigen::MatrixXd> A, SvdResult& out) {
        gesvdj_one(ctx, A, opt.values_only, out);
    });
}

SvdResult svd(Context& ctx, const Eigen::MatrixXd& M, SvdMethod method) {
    SvdOptions o;
    o.method = method;
    return svd(ctx, M, o);
}

std::vector<SvdResult> svd_batched(Context& ctx, const std::vector<Eigen::MatrixXd>& Ms,
                                   const SvdOptions& opt) {
    std::vector<SvdResult> out;
    if (Ms.empty()) return out;
    bool uniform = Ms[0].size() > 0;
    for (const auto& M : Ms)
        uniform = uniform && M.rows() == Ms[0].rows() && M.cols() == Ms[0].cols() && M.allFinite();
    const BatchedSvdPath path = uniform
                                    ? batched_svd_path(Ms[0].rows(), Ms[0].cols(), opt.values_only)
                                    : BatchedSvdPath::loop;
    std::vector<Decomposed> pre;
    if (path != BatchedSvdPath::loop) pre = decompose_batch(ctx, Ms, opt.values_only, path);
    out.reserve(Ms.size());
    for (std::size_t i = 0; i < Ms.size(); ++i) {
        const Eigen::MatrixXd& Mi = Ms[i];
        out.push_back(svd_with(Mi, opt, [&](Eigen::Ref<const Eigen::MatrixXd> A, SvdResult& r) {
            // svd_with hands over a view of Mi itself unless it had to scale it by a power of
            // two: then the batched result is not A's, and A is decomposed on its own.
            if (pre.empty() || A.data() != Mi.data()) return gesvdj_one(ctx, A, opt.values_only, r);
            Decomposed& d = pre[i];
            check_info(d.info, "cuSOLVER gesvdjBatched (matrix " + std::to_string(i) + ")");
            r.method = std::string(kMethod) + " (" + to_string(path) + ")";
            r.sigma = std::move(d.sigma);
            r.U = std::move(d.U);
            r.V = std::move(d.V);
        }));
    }
    return out;
}

Kappa kappa(Context& ctx, const Eigen::MatrixXd& M, KappaConvention c, double rtol) {
    return attnspec::kappa(svd(ctx, M), M.rows(), M.cols(), c, rtol);
}

}  // namespace attnspec::gpu
