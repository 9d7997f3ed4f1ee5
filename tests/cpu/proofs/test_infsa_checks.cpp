// infsa.neumann and infsa.perron checks: hold on generated instances, planted errors flip them.
#include "attnspec/base/random.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/proofs/infsa_checks.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

namespace {

Eigen::MatrixXd instance(Eigen::Index n, const std::string& fam, std::uint64_t seed) {
    Eigen::MatrixXd Q, K;
    draw_family(fam, n, 16, 1.0, seed, Q, K);
    return affinity(Q, K).A_hat;
}

// Applies B + E (a lying operator): its CW enclosure is of the wrong matrix.
class ShiftedOp final : public NonnegOperator {
  public:
    ShiftedOp(const Eigen::MatrixXd& B, double e)
        : B_(B + Eigen::MatrixXd::Constant(B.rows(), B.cols(), e)), op_(B_) {}
    Eigen::Index size() const override { return B_.rows(); }
    void apply(const Eigen::VectorXd& x, bool t, Eigen::VectorXd& z, Eigen::VectorXd& lo,
               Eigen::VectorXd& hi) const override {
        op_.apply(x, t, z, lo, hi);
    }

  private:
    Eigen::MatrixXd B_;
    DenseNonnegOp op_;
};

}  // namespace

TEST_CASE("infsa.neumann holds on generated instances", "[infsa][check]") {
    for (Eigen::Index n : {2, 8, 33})
        for (const char* fam : {"gaussian", "shared-mean"}) {
            const CheckResult r = check_infsa_neumann(instance(n, fam, 3 + n), 0.95);
            INFO(fam << " n=" << n << " residual/bound "
                     << r.value("residual") / r.value("residual_bound")
                     << " truncation worst ratio " << r.value("truncation_worst_ratio"));
            CHECK(r.verdict == Verdict::holds);
            CHECK(r.value("truncation_orders_tested") >= 1);
        }
}

TEST_CASE("infsa.neumann: planted kernel and truncation errors flip it", "[infsa][check]") {
    const Eigen::MatrixXd A = instance(16, "gaussian", 42);
    NeumannPlant p;
    p.kernel_shift = 1e-9;
    CheckResult r = check_infsa_neumann(A, 0.95, {2, 4}, p);
    CHECK(r.verdict == Verdict::violated);
    CHECK(r.comparison("residual")->verdict == Verdict::violated);
    NeumannPlant t;
    t.truncation_shift = 0.5;
    r = check_infsa_neumann(A, 0.95, {2, 4}, t);
    CHECK(r.verdict == Verdict::violated);
    CHECK(r.comparison("truncation_K4")->verdict == Verdict::violated);
}

TEST_CASE("infsa.perron holds, a lying operator flips it", "[infsa][check]") {
    for (Eigen::Index n : {1, 2, 31, 64}) {
        const Eigen::MatrixXd A = instance(n, "gaussian", 9 + n);
        if (A.maxCoeff() == 0) continue;
        const CheckResult r = check_infsa_perron(A);
        INFO("n=" << n << " width " << r.value("width_rel"));
        CHECK(r.verdict == Verdict::holds);
    }
    const Eigen::MatrixXd A = instance(31, "gaussian", 1);
    const ShiftedOp lie(A, 1e-7);
    CHECK(check_infsa_perron(A, &lie).verdict == Verdict::violated);
}

TEST_CASE("infsa registry runs are green by default", "[infsa][check]") {
    RunOptions o;
    o.trials = 15;
    CHECK(run_infsa_neumann(o).verdict == Verdict::holds);
    CHECK(run_infsa_perron(o).verdict == Verdict::holds);
}
