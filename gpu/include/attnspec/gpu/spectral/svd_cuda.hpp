// CUDA twin of spectral/svd.hpp: singular values (and thin factors) by cuSOLVER gesvdj (Jacobi),
// batched for per-head weights. The decomposition runs on the device; svd()'s input checks,
// memory refusal, power-of-two scaling, Weyl enclosure and per-triplet refinement run on the host
// through attnspec::svd_with (the CPU code itself), so the results are the CPU's SvdResult and
// Kappa. Method label "cusolver-gesvdj". Sources gpu/src/spectral/svd_cuda.{cu,cpp},
// cuSOLVER calls in gpu/src/base/cusolver_bindings_cuda.cpp. Without CUDA every entry throws
// NoDevice (69).
#pragma once
#include <Eigen/Dense>
#include <vector>

#include "attnspec/gpu/base/context.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::gpu {

// opt.method is not used (the device method is gesvdj); values_only, refine and
// refine_all_upto mean what they mean for attnspec::svd. Same errors as attnspec::svd, plus
// DataError when gesvdj does not converge (100 sweeps) and NoDevice / OutOfMemory from the device.
SvdResult svd(Context& ctx, const Eigen::MatrixXd& M, const SvdOptions& opt);
SvdResult svd(Context& ctx, const Eigen::MatrixXd& M, SvdMethod method = SvdMethod::auto_select);

// How svd_batched decomposes a batch of equally shaped, finite m x n matrices:
//   gesvdj_batched     max(m, n) <= 32: one cusolverDnDgesvdjBatched call;
//   qr_gesvdj_batched  min(m, n) <= 32 < max(m, n), values only (e.g. 384 x 32 per-head
//                      weights): a batched Householder QR (cublasDgeqrfBatched, of the transpose
//                      when wide) then gesvdjBatched on the min x min R factors. sigma(R) =
//                      sigma(M) and Householder QR is backward stable, so no accuracy is lost
//                      (gesvdaStridedBatched was not chosen: it is approximate, through the
//                      Gram matrix, and loses the small singular values kappa divides by);
//   loop               otherwise (larger matrices, or vectors with max(m, n) > 32): one gesvdj
//                      per matrix on the context's stream.
enum class BatchedSvdPath { gesvdj_batched, qr_gesvdj_batched, loop };
const char* to_string(BatchedSvdPath p);
BatchedSvdPath batched_svd_path(long rows, long cols, bool values_only);

// Host layout of the batched paths (both builds; the CPU suite tests them). pack_tall: the
// equally shaped matrices back to back, column-major, each as its tall form p x q (p >= q: a
// wide M is stored as M^T, whose singular values are M's). thin_factors: from the full U (p x p)
// and V (q x q) gesvdjBatched writes for one packed matrix, the thin factors of the original M
// (U <-> V swapped back for a wide one), q columns each.
std::vector<double> pack_tall(const std::vector<Eigen::MatrixXd>& Ms);
void thin_factors(const double* U_full, const double* V_full, long p, long q, bool wide,
                  Eigen::MatrixXd& U, Eigen::MatrixXd& V);

// One SvdResult per matrix, in order. Matrices of differing shapes or with non-finite entries
// are decomposed one by one (and the latter refused like attnspec::svd). Honours the planted
// off-by-one-tile fault (the last matrix of a batched launch is skipped).
std::vector<SvdResult> svd_batched(Context& ctx, const std::vector<Eigen::MatrixXd>& Ms,
                                   const SvdOptions& opt);

// Twin of attnspec::kappa(M, c, rtol): kappa from gpu::svd with vectors and enclosures.
Kappa kappa(Context& ctx, const Eigen::MatrixXd& M, KappaConvention c = KappaConvention::strict,
            double rtol = -1);

}  // namespace attnspec::gpu
