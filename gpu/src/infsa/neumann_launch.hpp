// Launchers of neumann_cuda.cu (raw device pointers, no Eigen, no CUDA headers).
#pragma once

struct CUstream_st;

namespace attnspec::gpu::neumann_dev {

// M = I - gamma Â (n x n), neumann_logic::form_m per element (dropped_diag: the planted fault).
void form_m(const double* A, double* M, double gamma, long n, long dropped_diag,
            CUstream_st* stream);
// partial[b] = sum of r_i^2 over block b of the residual r = B - (X - GAX) (`len` entries, GAX =
// gamma Â X), neumann_logic::residual_blocks(len) partials.
void residual(const double* B, const double* X, const double* GAX, double* partial, long len,
              CUstream_st* stream);

}  // namespace attnspec::gpu::neumann_dev
