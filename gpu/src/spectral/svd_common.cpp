// Host logic of the SVD twin that needs no device (both builds): the batched path choice. The
// entries of a build without CUDA: spectral_stub.cpp.
#include <algorithm>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/spectral/svd_cuda.hpp"

namespace attnspec::gpu {

const char* to_string(BatchedSvdPath p) {
    switch (p) {
        case BatchedSvdPath::gesvdj_batched:
            return "gesvdjBatched";
        case BatchedSvdPath::qr_gesvdj_batched:
            return "geqrfBatched + gesvdjBatched";
        case BatchedSvdPath::loop:
            return "gesvdj per matrix";
    }
    return "gesvdj per matrix";
}

BatchedSvdPath batched_svd_path(long rows, long cols, bool values_only) {
    constexpr long kBatchedMax = 32;  // cusolverDn<t>gesvdjBatched: m, n <= 32
    const long lo = std::min(rows, cols), hi = std::max(rows, cols);
    if (lo < 1) return BatchedSvdPath::loop;
    if (hi <= kBatchedMax) return BatchedSvdPath::gesvdj_batched;
    if (lo <= kBatchedMax && values_only) return BatchedSvdPath::qr_gesvdj_batched;
    return BatchedSvdPath::loop;
}

std::vector<double> pack_tall(const std::vector<Eigen::MatrixXd>& Ms) {
    if (Ms.empty()) return {};
    const long p = std::max(Ms[0].rows(), Ms[0].cols()), q = std::min(Ms[0].rows(), Ms[0].cols());
    const bool wide = Ms[0].rows() < Ms[0].cols();
    std::vector<double> host(Ms.size() * static_cast<std::size_t>(p * q));
    for (std::size_t b = 0; b < Ms.size(); ++b) {
        if (Ms[b].rows() != Ms[0].rows() || Ms[b].cols() != Ms[0].cols())
            fail_data("batched SVD: matrix " + std::to_string(b) + " is " +
                      std::to_string(Ms[b].rows()) + "x" + std::to_string(Ms[b].cols()) +
                      ", the first " + std::to_string(Ms[0].rows()) + "x" +
                      std::to_string(Ms[0].cols()));
        Eigen::Map<Eigen::MatrixXd> dst(host.data() + b * static_cast<std::size_t>(p * q), p, q);
        if (wide)
            dst = Ms[b].transpose();
        else
            dst = Ms[b];
    }
    return host;
}

void thin_factors(const double* U_full, const double* V_full, long p, long q, bool wide,
                  Eigen::MatrixXd& U, Eigen::MatrixXd& V) {
    const Eigen::Map<const Eigen::MatrixXd> Uf(U_full, p, p), Vf(V_full, q, q);
    U = wide ? Eigen::MatrixXd(Vf.leftCols(q)) : Eigen::MatrixXd(Uf.leftCols(q));
    V = wide ? Eigen::MatrixXd(Uf.leftCols(q)) : Eigen::MatrixXd(Vf.leftCols(q));
}

}  // namespace attnspec::gpu
