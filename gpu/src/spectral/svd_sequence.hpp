// The SVD twin's host sequence, written once for the device (svd_cuda.cpp: cuSOLVER gesvdj /
// gesvdjBatched, cuBLAS geqrfBatched, the kernel of svd_kernels.hpp on the context's stream) and
// for `gpu-check --emulate` (svd_check_common.cpp: the kernel body on the CPU grid runner, each
// library call served by LAPACK with the same arguments, base/cpu_solver.hpp). Ops provides the
// buffers (Mat<T>, matrix<T>(rows, cols), upload, download, zero), the kernel (extract_r) and the
// calls with every leading dimension and stride (gesvdj_buffer, gesvdj, gesvdj_batched_buffer,
// gesvdj_batched, geqrf_batched, read_info, synchronize). Checks, scaling, enclosures and
// refinement are the CPU's svd_with on the host. Host-only, no CUDA header. Planted faults
// (gpu_check.hpp): dropped-term decomposes every matrix without its last row, off-by-one-tile
// leaves the last matrix of a batched launch undecomposed.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/spectral/svd_cuda.hpp"
#include "svd_logic.hpp"

namespace attnspec::gpu::svd_seq {

constexpr const char* kMethod = "cusolver-gesvdj";

inline bool dropped_term() { return planted_fault() == PlantedFault::dropped_term; }

inline int dim(long v) {
    if (v > 2147483647L)
        throw Error(ExitCode::DataError, "SVD dimension " + std::to_string(v) +
                                             " exceeds the 32-bit size cuSOLVER gesvdj accepts");
    return static_cast<int>(v);
}

inline void check_info(int info, const std::string& what) {
    if (info < 0)
        throw Error(ExitCode::Internal, what + ": argument " + std::to_string(-info) + " rejected");
    if (info > 0)
        fail_data(what + " did not converge in 100 sweeps (info = " + std::to_string(info) + ")");
}

// One matrix: sigma and, unless values_only, thin U and V.
template <class Ops>
void gesvdj_one(Ops& ops, const Eigen::MatrixXd& A, bool values_only, SvdResult& out) {
    const int m = dim(A.rows()), n = dim(A.cols()), r = std::min(m, n);
    const bool vectors = !values_only;
    auto dA = ops.template matrix<double>(m, n);
    auto dS = ops.template matrix<double>(r, 1);
    auto dU = ops.template matrix<double>(m, r);
    auto dV = ops.template matrix<double>(n, r);
    const long drop = svd_logic::dropped_row(m, dropped_term());
    if (drop < 0) {
        ops.upload(dA, A.data());
    } else {  // planted fault: the device decomposes A without its last row
        Eigen::MatrixXd B = A;
        svd_logic::drop_row(B.data(), m, n, 1, drop);
        ops.upload(dA, B.data());
    }
    const std::size_t lw = ops.gesvdj_buffer_doubles(vectors, m, n, m, m, n);
    auto work = ops.template matrix<double>(static_cast<long>(std::max<std::size_t>(lw, 1)), 1);
    auto info = ops.template matrix<int>(1, 1);
    ops.gesvdj(vectors, m, n, dA.data(), m, dS.data(), dU.data(), m, dV.data(), n, work.data(), lw,
               info.data());
    check_info(ops.read_info(info.data()), "cuSOLVER gesvdj");
    out.method = kMethod;
    out.sigma.resize(r);
    ops.download(dS, out.sigma.data());
    if (values_only) return;
    out.U.resize(m, r);
    out.V.resize(n, r);
    ops.download(dU, out.U.data());
    ops.download(dV, out.V.data());
}

// A batch decomposed, before the host enclosures.
struct Decomposed {
    Eigen::VectorXd sigma;
    Eigen::MatrixXd U, V;
    int info = 0;
};

// Batched paths for `batch` finite m x n matrices (see BatchedSvdPath).
template <class Ops>
std::vector<Decomposed> decompose_batch(Ops& ops, const std::vector<Eigen::MatrixXd>& Ms,
                                        bool values_only, BatchedSvdPath path) {
    const long batch = static_cast<long>(Ms.size());
    const bool wide = Ms[0].rows() < Ms[0].cols();
    // Work on tall matrices (p >= q): a wide one is transposed (sigma(M^T) = sigma(M), U <-> V).
    const int p = dim(std::max(Ms[0].rows(), Ms[0].cols())),
              q = dim(std::min(Ms[0].rows(), Ms[0].cols()));
    std::vector<double> host = pack_tall(Ms);
    const long drop = svd_logic::dropped_row(p, dropped_term());
    if (drop >= 0) svd_logic::drop_row(host.data(), p, q, batch, drop);
    auto dA = ops.template matrix<double>(static_cast<long>(p) * q, batch);
    ops.upload(dA, host.data());
    const long done =
        svd_logic::batch_processed(batch, planted_fault() == PlantedFault::off_by_one_tile);
    // The square (or tall <= 32) matrices gesvdjBatched sees: M itself or the R factors.
    int sm = p;
    const int sn = q;
    const bool qr = path == BatchedSvdPath::qr_gesvdj_batched;
    auto dR = ops.template matrix<double>(qr ? static_cast<long>(q) * q : 0, batch);
    double* svd_in = dA.data();
    if (qr) {
        auto tau = ops.template matrix<double>(q, batch);
        if (done > 0)
            ops.geqrf_batched(p, q, dA.data(), p, static_cast<long>(p) * q, tau.data(), q,
                              static_cast<int>(done));
        ops.zero(dR);
        ops.extract_r(dA.data(), dR.data(), p, q, done);
        ops.synchronize();  // tau is freed on leaving this block
        svd_in = dR.data();
        sm = q;
    }
    const bool vectors = !values_only;
    auto dS = ops.template matrix<double>(q, batch);
    auto dU = ops.template matrix<double>(static_cast<long>(sm) * sm, batch);
    auto dV = ops.template matrix<double>(static_cast<long>(sn) * sn, batch);
    ops.zero(dS);
    auto info = ops.template matrix<int>(batch, 1);
    ops.zero(info);
    if (done > 0) {
        const std::size_t lw =
            ops.gesvdj_batched_buffer_doubles(vectors, sm, sn, sm, sm, sn, static_cast<int>(done));
        auto work = ops.template matrix<double>(static_cast<long>(std::max<std::size_t>(lw, 1)), 1);
        ops.gesvdj_batched(vectors, sm, sn, svd_in, sm, dS.data(), dU.data(), sm, dV.data(), sn,
                           work.data(), lw, info.data(), static_cast<int>(done));
        ops.synchronize();  // work is freed on leaving this block
    }
    Eigen::MatrixXd S(q, batch), U, V;
    std::vector<int> infos(static_cast<std::size_t>(batch));
    ops.download(dS, S.data());
    ops.download(info, infos.data());
    if (vectors) {
        U.resize(static_cast<long>(sm) * sm, batch);
        V.resize(static_cast<long>(sn) * sn, batch);
        ops.download(dU, U.data());
        ops.download(dV, V.data());
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

template <class Ops>
SvdResult svd(Ops& ops, const Eigen::MatrixXd& M, const SvdOptions& opt) {
    return svd_with(M, opt,
                    [&ops, &opt](const Eigen::Ref<const Eigen::MatrixXd>& A, SvdResult& out) {
                        gesvdj_one(ops, A, opt.values_only, out);
                    });
}

template <class Ops>
std::vector<SvdResult> svd_batched(Ops& ops, const std::vector<Eigen::MatrixXd>& Ms,
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
    if (path != BatchedSvdPath::loop) pre = decompose_batch(ops, Ms, opt.values_only, path);
    out.reserve(Ms.size());
    for (std::size_t i = 0; i < Ms.size(); ++i) {
        const Eigen::MatrixXd& Mi = Ms[i];
        out.push_back(
            svd_with(Mi, opt, [&](const Eigen::Ref<const Eigen::MatrixXd>& A, SvdResult& r) {
                // svd_with hands over a view of Mi itself unless it had to scale it by a power of
                // two: then the batched result is not A's, and A is decomposed on its own.
                if (pre.empty() || A.data() != Mi.data())
                    return gesvdj_one(ops, A, opt.values_only, r);
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

}  // namespace attnspec::gpu::svd_seq
