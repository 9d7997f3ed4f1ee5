// The Neumann twin's host sequence, written once for the device (neumann_cuda.cpp: cuSOLVER
// Xgetrf/Xgetrs and IRSXgesv, cuBLAS, the kernels of neumann_kernels.hpp on the context's stream)
// and for `gpu-check --emulate` (neumann_check_common.cpp: the same kernel bodies on the CPU grid
// runner, each cuSOLVER / cuBLAS call served by LAPACK / the CPU BLAS with the same arguments,
// base/cpu_solver.hpp). Ops provides the buffers (Mat<T>, matrix<T>(rows, cols), upload,
// download), the kernels (form_m, residual) and the library calls with their full arguments
// (gemm, nrm2, copy, getrf_buffer, getrf, getrs, irs_gesv, read_info, synchronize).
// Host-only, no CUDA header. Planted faults (gpu_check.hpp): dropped-term forgets the identity on
// one diagonal element of I - gamma Â; off-by-one-tile solves one head fewer (its result stays 0).
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "neumann_kernels.hpp"
#include "neumann_logic.hpp"

namespace attnspec::gpu::neumann_seq {

inline void check_solve_info(int info, const char* what) {
    if (info < 0)
        throw Error(ExitCode::Internal,
                    std::string(what) + ": argument " + std::to_string(-info) + " rejected");
    if (info > 0)
        fail_data(std::string("I - gamma A_hat is singular (") + what + " info " +
                  std::to_string(info) + ")");
}

template <class Ops>
typename Ops::template Mat<double> upload(Ops& ops, const Eigen::MatrixXd& X) {
    auto d = ops.template matrix<double>(X.rows(), X.cols());
    ops.upload(d, X.data());
    return d;
}

template <class Ops, class M>
Eigen::MatrixXd download(Ops& ops, const M& d) {
    Eigen::MatrixXd X(d.rows(), d.cols());
    ops.download(d, X.data());
    return X;
}

// One head: Â, M = I - gamma Â (formed, then factored in place) and the work.
template <class Ops>
class HeadSolver {
  public:
    using Mat = typename Ops::template Mat<double>;
    HeadSolver(Ops& ops, long n)
        : ops_(ops),
          n_(n),
          A_(ops.template matrix<double>(n, n)),
          M_(ops.template matrix<double>(n, n)),
          ipiv_(ops.template matrix<std::int64_t>(n, 1)),
          info_(ops.template matrix<int>(1, 1)),
          w_(ops.getrf_buffer(n, n, M_.data(), n)),
          dwork_(ops.template matrix<char>(static_cast<long>(w_.device_bytes), 1)),
          hwork_(w_.host_bytes) {}

    // Uploads Â and forms M (with the planted dropped-term fault, when set).
    void load(const Eigen::MatrixXd& A_hat, double gamma) {
        gamma_ = gamma;
        ops_.upload(A_, A_hat.data());
        ops_.form_m(
            A_.data(), M_.data(), gamma, n_,
            neumann_logic::dropped_diagonal(n_, planted_fault() == PlantedFault::dropped_term));
    }
    const double* A() const { return A_.data(); }
    double* M() { return M_.data(); }
    int* info() { return info_.data(); }

    void factor() {
        ops_.getrf(n_, n_, M_.data(), n_, ipiv_.data(), dwork_.data(), w_, hwork_.data(),
                   info_.data());
        check_solve_info(ops_.read_info(info_.data()), "cuSOLVER getrf");
    }
    void solve(Mat& B) {  // B <- M^{-1} B
        ops_.getrs(false, n_, B.cols(), M_.data(), n_, ipiv_.data(), B.data(), n_, info_.data());
        check_solve_info(ops_.read_info(info_.data()), "cuSOLVER getrs");
    }
    // The backward error of X for M X = B with M formed exactly from Â (not the factors).
    double backward_error(const Mat& X, const Mat& B, double norm_m) {
        // ||B - M X||_F from the residual kernel's per-block sums of squares, added here in block
        // order (the residual itself is never stored)
        Mat GAX = ops_.template matrix<double>(n_, X.cols());
        const long len = X.size(), blocks = neumann_logic::residual_blocks(len);
        Mat partial = ops_.template matrix<double>(blocks, 1);
        ops_.gemm(false, false, n_, X.cols(), n_, gamma_, A_.data(), n_, X.data(), n_, 0.0,
                  GAX.data(), n_);
        ops_.residual(B.data(), X.data(), GAX.data(), partial.data(), len);
        const double nx = ops_.nrm2(X.size(), X.data());
        const double nb = ops_.nrm2(B.size(), B.data());
        std::vector<double> sums(static_cast<std::size_t>(blocks));
        ops_.download(partial, sums.data());
        ops_.synchronize();
        double rr = 0;
        for (double s : sums) rr += s;
        return neumann_logic::backward_error(std::sqrt(rr), norm_m, nx, nb);
    }
    // B = gamma Â V (V n x d).
    Mat gamma_a_times(const Mat& V) {
        Mat B = ops_.template matrix<double>(n_, V.cols());
        ops_.gemm(false, false, n_, V.cols(), n_, gamma_, A_.data(), n_, V.data(), n_, 0.0,
                  B.data(), n_);
        return B;
    }

  private:
    Ops& ops_;
    long n_;
    double gamma_ = 0;
    Mat A_, M_;
    typename Ops::template Mat<std::int64_t> ipiv_;
    typename Ops::template Mat<int> info_;
    decltype(std::declval<Ops&>().getrf_buffer(0L, 0L, nullptr, 0L)) w_;
    typename Ops::template Mat<char> dwork_;
    std::vector<char> hwork_;
};

inline void check_heads(const std::vector<Eigen::MatrixXd>& A_hats, double gamma) {
    for (const auto& A : A_hats) {
        certify_convergent(A, gamma);  // gamma, square, finite, >= 0, gamma rho < 1
        if (A.rows() != A_hats[0].rows())
            fail_data("Neumann batch: heads of sizes " + std::to_string(A_hats[0].rows()) +
                      " and " + std::to_string(A.rows()) + " (one size per batch)");
    }
}

// M_h X_h = B_h for every head h (fp64 LU), B_h made by make_rhs(hs, h) once Â_h is loaded;
// rhs_cols[h] columns. Under the planted off-by-one the last head is never solved (X stays 0).
template <class Ops, class MakeRhs>
std::vector<Eigen::MatrixXd> solve_heads(Ops& ops, const std::vector<Eigen::MatrixXd>& A_hats,
                                         double gamma, const std::vector<long>& rhs_cols,
                                         MakeRhs&& make_rhs,
                                         std::vector<NeumannSolveStats>* stats) {
    std::vector<Eigen::MatrixXd> out;
    if (stats) stats->clear();
    if (A_hats.empty()) return out;
    const long n = A_hats[0].rows();
    const long heads = static_cast<long>(A_hats.size());
    const long done =
        neumann_logic::heads_processed(heads, planted_fault() == PlantedFault::off_by_one_tile);
    HeadSolver<Ops> hs(ops, n);
    for (long h = 0; h < heads; ++h) {
        const auto hu = static_cast<std::size_t>(h);
        if (h >= done || rhs_cols[hu] == 0) {
            out.emplace_back(Eigen::MatrixXd::Zero(n, rhs_cols[hu]));
            continue;
        }
        hs.load(A_hats[hu], gamma);
        const auto B = make_rhs(hs, hu);
        hs.factor();
        auto X = ops.template matrix<double>(n, B.cols());
        ops.copy(X.data(), B.data(), B.size());  // B is kept for the backward error
        hs.solve(X);
        if (stats)
            stats->push_back(
                {n, B.cols(), "getrf/getrs fp64", 0,
                 hs.backward_error(X, B, identity_minus_gamma_norm(A_hats[hu], gamma))});
        out.push_back(download(ops, X));
    }
    return out;
}

template <class Ops>
std::vector<Eigen::MatrixXd> kernels(Ops& ops, const std::vector<Eigen::MatrixXd>& A_hats,
                                     double gamma, std::vector<NeumannSolveStats>* stats) {
    check_heads(A_hats, gamma);
    const long n = A_hats.empty() ? 0 : A_hats[0].rows();
    const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(n, n);
    return solve_heads(
        ops, A_hats, gamma, std::vector<long>(A_hats.size(), n),
        [&](HeadSolver<Ops>&, std::size_t) { return upload(ops, I); }, stats);
}

template <class Ops>
std::vector<Eigen::MatrixXd> closure(Ops& ops, const std::vector<Eigen::MatrixXd>& A_hats,
                                     double gamma, const std::vector<Eigen::MatrixXd>& Vs,
                                     std::vector<NeumannSolveStats>* stats) {
    check_heads(A_hats, gamma);
    if (Vs.size() != A_hats.size())
        fail_data("closure: " + std::to_string(Vs.size()) + " V matrices for " +
                  std::to_string(A_hats.size()) + " heads");
    std::vector<long> cols;
    for (std::size_t h = 0; h < Vs.size(); ++h) {
        if (Vs[h].rows() != A_hats[h].rows())
            fail_data("closure: V of head " + std::to_string(h) + " has the wrong number of rows");
        cols.push_back(Vs[h].cols());
    }
    return solve_heads(
        ops, A_hats, gamma, cols,
        [&](HeadSolver<Ops>& hs, std::size_t h) {
            const auto V = upload(ops, Vs[h]);
            auto B = hs.gamma_a_times(V);  // gamma Â V
            ops.synchronize();             // V is freed on return
            return B;
        },
        stats);
}

template <class Ops>
Eigen::MatrixXd closure_mixed(Ops& ops, const Eigen::MatrixXd& A_hat, double gamma,
                              const Eigen::MatrixXd& V, int* iterations, IrsLowest lowest,
                              NeumannSolveStats* stats) {
    certify_convergent(A_hat, gamma);
    const long n = A_hat.rows();
    if (V.rows() != n) fail_data("closure: V has the wrong number of rows");
    if (V.cols() == 0) return V;
    HeadSolver<Ops> hs(ops, n);
    hs.load(A_hat, gamma);
    const auto dV = upload(ops, V);
    const auto B = hs.gamma_a_times(dV);  // gamma Â V
    auto X = ops.template matrix<double>(n, V.cols());
    const int iters =
        ops.irs_gesv(lowest, n, V.cols(), hs.M(), n, B.data(), n, X.data(), n, hs.info());
    check_solve_info(ops.read_info(hs.info()), "cuSOLVER IRSXgesv");
    if (iterations) *iterations = iters;
    if (stats)
        *stats = {n, V.cols(), std::string("IRS fp64<-") + to_string(lowest), iters,
                  hs.backward_error(X, B, identity_minus_gamma_norm(A_hat, gamma))};
    return download(ops, X);
}

}  // namespace attnspec::gpu::neumann_seq
