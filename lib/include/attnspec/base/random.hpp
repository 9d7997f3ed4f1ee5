// Seeded random instance generators, named by how they build data: Gaussian
// matrices, matrices with a prescribed spectrum (random orthogonal factors around a diagonal),
// rank-deficient matrices, log-uniform scales. Every generator takes an explicit 64-bit seed, so
// an instance is replayed from (generator, shape, seed). CPU only; std::mt19937_64.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <random>

namespace attnspec {

class Rng {
  public:
    explicit Rng(std::uint64_t seed) : gen_(seed) {}
    double normal() { return n_(gen_); }
    double uniform(double a = 0, double b = 1) {
        return std::uniform_real_distribution<>(a, b)(gen_);
    }
    double log_uniform(double lo, double hi);  // 10^U(log10 lo, log10 hi)
    long integer(long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(gen_); }
    Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, double scale = 1.0);
    // Haar-distributed matrix with orthonormal columns (rows >= cols), QR of a Gaussian with the
    // sign fix of Mezzadri (2007).
    Eigen::MatrixXd orthonormal(Eigen::Index rows, Eigen::Index cols);
    // U diag(sigma) V^T with random orthonormal U (rows x r), V (cols x r), r = sigma.size()
    // <= min(rows, cols).
    Eigen::MatrixXd with_spectrum(Eigen::Index rows, Eigen::Index cols,
                                  const Eigen::VectorXd& sigma);
    std::mt19937_64& engine() { return gen_; }

  private:
    std::mt19937_64 gen_;
    std::normal_distribution<double> n_{0.0, 1.0};
};

// Derive the seed of instance i from a master seed (SplitMix64 finaliser), so any instance of a
// seeded run replays alone from (master, i). O(1).
std::uint64_t instance_seed(std::uint64_t master, std::uint64_t i);

// sigma_1 * kappa^{-(i/(r-1))}, i = 0..r-1: geometric spectrum with condition number kappa.
Eigen::VectorXd geometric_spectrum(Eigen::Index r, double sigma_1, double kappa);

}  // namespace attnspec
