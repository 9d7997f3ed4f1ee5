// Host logic of the SVD twin that needs no device (both builds): the batched path choice; in a
// build without CUDA, the twin's entries, which throw NoDevice (69).
#include <algorithm>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/spectral/svd_cusolver.hpp"

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

#if !ATTNSPEC_HAVE_CUDA
namespace {
[[noreturn]] void not_compiled() {
    throw Error(ExitCode::NoDevice,
                "CUDA support not compiled (rebuild with -DATTNSPEC_CUDA=ON): no gpu::svd");
}
}  // namespace
SvdResult svd(Context&, const Eigen::MatrixXd&, const SvdOptions&) { not_compiled(); }
SvdResult svd(Context&, const Eigen::MatrixXd&, SvdMethod) { not_compiled(); }
std::vector<SvdResult> svd_batched(Context&, const std::vector<Eigen::MatrixXd>&,
                                   const SvdOptions&) {
    not_compiled();
}
Kappa kappa(Context&, const Eigen::MatrixXd&, KappaConvention, double) { not_compiled(); }
#endif

}  // namespace attnspec::gpu
