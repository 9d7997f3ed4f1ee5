// gpu::neumann_kernels, closure_times, closure_times_mixed (neumann_cuda.hpp): M = I - gamma Â
// formed on the device, cuSOLVER Xgetrf/Xgetrs (fp64) or IRSXgesv, gamma Â V and the residual by
// cuBLAS. Twin of lib/src/infsa/neumann.cpp.
#include "attnspec/gpu/infsa/neumann_cuda.hpp"

#include <string>
#include <vector>

#include "../base/cusolver_bindings.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "neumann_launch.hpp"
#include "neumann_logic.hpp"

namespace attnspec::gpu {

namespace {

void check_solve_info(int info, const char* what) {
    if (info < 0)
        throw Error(ExitCode::Internal,
                    std::string(what) + ": argument " + std::to_string(-info) + " rejected");
    if (info > 0)
        fail_data(std::string("I - gamma A_hat is singular (") + what + " info " +
                  std::to_string(info) + ")");
}

// One head on the device: Â, M = I - gamma Â (formed, then factored in place) and the work.
class HeadSolver {
  public:
    HeadSolver(Context& ctx, long n) : ctx_(ctx), n_(n), A_(n, n), M_(n, n), ipiv_(n, 1) {
        w_ = solver::getrf_buffer(ctx, n, M_.data());
        dwork_ = DeviceBuffer(w_.device_bytes);
        hwork_.resize(w_.host_bytes);
    }

    // Uploads Â and forms M (with the planted dropped-term fault, when set).
    void load(const Eigen::MatrixXd& A_hat, double gamma) {
        gamma_ = gamma;
        A_.upload_sync(ctx_, A_hat.data());
        neumann_dev::form_m(
            A_.data(), M_.data(), gamma, n_,
            neumann_logic::dropped_diagonal(n_, planted_fault() == PlantedFault::dropped_term),
            ctx_.stream());
    }
    const double* A() const { return A_.data(); }
    double* M() { return M_.data(); }

    void factor() {
        solver::getrf(ctx_, n_, M_.data(), ipiv_.data(), dwork_.data(), w_, hwork_.data(),
                      info_.data());
        check_solve_info(solver::read_info(ctx_, info_.data()), "cuSOLVER getrf");
    }
    void solve(DeviceMatrix<double>& B) {  // B <- M^{-1} B
        solver::getrs(ctx_, n_, B.cols(), M_.data(), ipiv_.data(), B.data(), info_.data());
        check_solve_info(solver::read_info(ctx_, info_.data()), "cuSOLVER getrs");
    }
    // The backward error of X for M X = B with M formed exactly from Â (not the factors).
    double backward_error(const DeviceMatrix<double>& X, const DeviceMatrix<double>& B,
                          double norm_m) {
        DeviceMatrix<double> GAX(n_, X.cols()), R(n_, X.cols());
        solver::gemm(ctx_, n_, X.cols(), n_, gamma_, A_.data(), X.data(), GAX.data());
        neumann_dev::residual(B.data(), X.data(), GAX.data(), R.data(), R.size(), ctx_.stream());
        const double nr = solver::nrm2(ctx_, R.size(), R.data());
        const double nx = solver::nrm2(ctx_, X.size(), X.data());
        const double nb = solver::nrm2(ctx_, B.size(), B.data());
        ctx_.synchronize();
        return neumann_logic::backward_error(nr, norm_m, nx, nb);
    }

  private:
    Context& ctx_;
    long n_;
    double gamma_ = 0;
    DeviceMatrix<double> A_, M_;
    DeviceMatrix<std::int64_t> ipiv_;
    DeviceMatrix<int> info_{1, 1};
    solver::GetrfWork w_;
    DeviceBuffer dwork_;
    std::vector<char> hwork_;
};

void check_heads(const std::vector<Eigen::MatrixXd>& A_hats, double gamma) {
    for (const auto& A : A_hats) {
        certify_convergent(A, gamma);  // gamma, square, finite, >= 0, gamma rho < 1
        if (A.rows() != A_hats[0].rows())
            fail_data("Neumann batch: heads of sizes " + std::to_string(A_hats[0].rows()) +
                      " and " + std::to_string(A.rows()) + " (one size per batch)");
    }
}

DeviceMatrix<double> upload(Context& ctx, const Eigen::MatrixXd& X) {
    DeviceMatrix<double> d(X.rows(), X.cols());
    d.upload_sync(ctx, X.data());
    return d;
}

Eigen::MatrixXd download(Context& ctx, const DeviceMatrix<double>& d) {
    Eigen::MatrixXd X(d.rows(), d.cols());
    d.download_sync(ctx, X.data());
    return X;
}

bool off_by_one() { return planted_fault() == PlantedFault::off_by_one_tile; }

// M_h X_h = B_h for every head h (fp64 LU), B_h made on the device by make_rhs(hs, h) once Â_h is
// loaded; rhs_cols[h] columns. Under the planted off-by-one the last head is never solved (its
// X stays 0).
template <class MakeRhs>
std::vector<Eigen::MatrixXd> solve_heads(Context& ctx, const std::vector<Eigen::MatrixXd>& A_hats,
                                         double gamma, const std::vector<long>& rhs_cols,
                                         MakeRhs&& make_rhs,
                                         std::vector<NeumannSolveStats>* stats) {
    std::vector<Eigen::MatrixXd> out;
    if (stats) stats->clear();
    if (A_hats.empty()) return out;
    const long n = A_hats[0].rows();
    const long heads = static_cast<long>(A_hats.size());
    const long done = neumann_logic::heads_processed(heads, off_by_one());
    HeadSolver hs(ctx, n);
    for (long h = 0; h < heads; ++h) {
        const auto hu = static_cast<std::size_t>(h);
        if (h >= done || rhs_cols[hu] == 0) {
            out.emplace_back(Eigen::MatrixXd::Zero(n, rhs_cols[hu]));
            continue;
        }
        hs.load(A_hats[hu], gamma);
        const DeviceMatrix<double> B = make_rhs(hs, hu);
        hs.factor();
        DeviceMatrix<double> X(n, B.cols());
        solver::copy(ctx, X.data(), B.data(), B.size());  // B is kept for the backward error
        hs.solve(X);
        if (stats)
            stats->push_back(
                {n, B.cols(), "getrf/getrs fp64", 0,
                 hs.backward_error(X, B, identity_minus_gamma_norm(A_hats[hu], gamma))});
        out.push_back(download(ctx, X));
    }
    return out;
}

}  // namespace

std::vector<Eigen::MatrixXd> neumann_kernels(Context& ctx,
                                             const std::vector<Eigen::MatrixXd>& A_hats,
                                             double gamma, std::vector<NeumannSolveStats>* stats) {
    check_heads(A_hats, gamma);
    const long n = A_hats.empty() ? 0 : A_hats[0].rows();
    const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(n, n);
    return solve_heads(
        ctx, A_hats, gamma, std::vector<long>(A_hats.size(), n),
        [&](HeadSolver&, std::size_t) { return upload(ctx, I); }, stats);
}

std::vector<Eigen::MatrixXd> closure_times(Context& ctx, const std::vector<Eigen::MatrixXd>& A_hats,
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
        ctx, A_hats, gamma, cols,
        [&](HeadSolver& hs, std::size_t h) {
            const long n = Vs[h].rows(), d = Vs[h].cols();
            const DeviceMatrix<double> V = upload(ctx, Vs[h]);
            DeviceMatrix<double> B(n, d);
            solver::gemm(ctx, n, d, n, gamma, hs.A(), V.data(), B.data());  // gamma Â V
            ctx.synchronize();                                              // V is freed on return
            return B;
        },
        stats);
}

Eigen::MatrixXd closure_times_mixed(Context& ctx, const Eigen::MatrixXd& A_hat, double gamma,
                                    const Eigen::MatrixXd& V, int* iterations, IrsLowest lowest,
                                    NeumannSolveStats* stats) {
    certify_convergent(A_hat, gamma);
    const long n = A_hat.rows();
    if (V.rows() != n) fail_data("closure: V has the wrong number of rows");
    if (V.cols() == 0) return V;
    HeadSolver hs(ctx, n);
    hs.load(A_hat, gamma);
    const DeviceMatrix<double> dV = upload(ctx, V);
    DeviceMatrix<double> B(n, V.cols()), X(n, V.cols());
    solver::gemm(ctx, n, V.cols(), n, gamma, hs.A(), dV.data(), B.data());  // gamma Â V
    DeviceMatrix<int> info(1, 1);
    const int iters =
        solver::irs_gesv(ctx, lowest, n, V.cols(), hs.M(), B.data(), X.data(), info.data());
    check_solve_info(solver::read_info(ctx, info.data()), "cuSOLVER IRSXgesv");
    if (iterations) *iterations = iters;
    if (stats)
        *stats = {n, V.cols(), std::string("IRS fp64<-") + to_string(lowest), iters,
                  hs.backward_error(X, B, identity_minus_gamma_norm(A_hat, gamma))};
    return download(ctx, X);
}

}  // namespace attnspec::gpu
