// Launchers of neumann_cuda.cu (raw device pointers, no Eigen, no CUDA headers).
#pragma once

struct CUstream_st;

namespace attnspec::gpu::neumann_dev {

// M = I - gamma Â (n x n), neumann_logic::form_m per element (dropped_diag: the planted fault).
void form_m(const double* A, double* M, double gamma, long n, long dropped_diag,
            CUstream_st* stream);
// R = B - (X - GAX) elementwise over `len` entries (GAX = gamma Â X): the residual B - M X.
void residual(const double* B, const double* X, const double* GAX, double* R, long len,
              CUstream_st* stream);

}  // namespace attnspec::gpu::neumann_dev
