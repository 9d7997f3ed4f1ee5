// Every library refusal follows the process budget memory_limit_bytes() (base/memory.hpp), so
// that "(option --max-memory)" is true wherever the CLI prints it (issue 14).
#include "attnspec/base/memory.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/fidelity_table.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/neumann_analysis.hpp"
#include "attnspec/spectral/svd.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::error_of;
using attnspec::test::MemoryBudget;

TEST_CASE("library refusals use the process memory budget", "[infsa][resources]") {
    const Eigen::MatrixXd Q = Rng(1).gaussian(300, 4), K = Rng(2).gaussian(300, 4);
    const Eigen::MatrixXd A = Eigen::MatrixXd::Constant(300, 300, 1.0 / 300);
    {
        MemoryBudget small(256 * 1024);  // below 8 * 300^2 = 703 KiB
        for (const Error& e :
             {error_of([&] { affinity(Q, K); }), error_of([&] { NeumannKernel(A, 0.5); }),
              error_of([&] { svd(A); }), error_of([&] { check_neumann_memory(300, 4); }),
              error_of([&] { closure_times_mixed(A, 0.5, Q); })}) {
            CHECK(e.code() == ExitCode::DataError);
            CHECK(e.parameter() == "max_bytes");
            CHECK(std::string(e.what()).find("above the limit max_bytes = 256.0 KiB") !=
                  std::string::npos);
        }
        FidelitySpec spec;
        spec.Ns = {300};
        spec.draws = 1;
        CHECK(error_of([&] { fidelity_table(spec); }).parameter() == "matrix_free");
        spec.Ns = {100000};
        spec.matrix_free = true;
        CHECK(error_of([&] { fidelity_table(spec); }).parameter() == "max_bytes");
    }
    // The default budget lets the same problems through.
    CHECK(affinity(Q, K).A_hat.rows() == 300);
    CHECK_NOTHROW(check_neumann_memory(300, 4));
    CHECK(svd(A).sigma.size() == 300);
}
