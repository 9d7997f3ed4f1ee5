// SharedMatrix (base/shared_matrix.hpp): views of C- and F-ordered buffers read the right
// elements, copies share the buffer, the keeper lives as long as the last copy, modify() is copy
// on write, and a Head built on views computes what a Head on owned copies computes.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/shared_matrix.hpp"

using attnspec::SharedMatrix;
using Eigen::MatrixXd;

namespace {
// The same 3 x 4 matrix M(i, j) = 10 i + j, laid out in C order and in F order.
std::vector<double> c_order() {
    std::vector<double> v;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) v.push_back(10 * i + j);
    return v;
}
std::vector<double> f_order() {
    std::vector<double> v;
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 3; ++i) v.push_back(10 * i + j);
    return v;
}
}  // namespace

TEST_CASE("SharedMatrix views C and F order buffers in place", "[shared_matrix]") {
    const std::vector<double> c = c_order(), f = f_order();
    const SharedMatrix vc = SharedMatrix::view(c.data(), 3, 4, 4, 1, nullptr);
    const SharedMatrix vf = SharedMatrix::view(f.data(), 3, 4, 1, 3, nullptr);
    CHECK(vc.data() == c.data());
    CHECK(vf.data() == f.data());
    CHECK_FALSE(vc.column_major());
    CHECK(vf.column_major());
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) {
            CHECK(vc(i, j) == 10 * i + j);
            CHECK(vf(i, j) == 10 * i + j);
        }
    // Products evaluate either layout to the same values.
    const MatrixXd B = MatrixXd::Random(4, 2);
    CHECK((vc * B - vf * B).norm() == 0);
    CHECK((vc.transpose() * vc - vf.transpose() * vf).norm() == 0);
}

TEST_CASE("SharedMatrix copies share and keep the buffer alive, modify copies on write",
          "[shared_matrix]") {
    auto buffer = std::make_shared<std::vector<double>>(c_order());
    std::weak_ptr<std::vector<double>> alive = buffer;
    SharedMatrix a = SharedMatrix::view(buffer->data(), 3, 4, 4, 1, buffer);
    buffer.reset();
    REQUIRE_FALSE(alive.expired());  // the view keeps it
    SharedMatrix b = a;
    CHECK(b.data() == a.data());   // shared, not copied
    a = MatrixXd::Zero(2, 2);      // a now owns other values
    CHECK_FALSE(alive.expired());  // b still holds the buffer
    CHECK(b(2, 3) == 23);
    SharedMatrix c = b;
    c.modify([](MatrixXd& M) { M(0, 0) = -1; });
    CHECK(c(0, 0) == -1);
    CHECK(b(0, 0) == 0);  // the viewed buffer is untouched
    CHECK(c.data() != b.data());
    b = SharedMatrix();
    CHECK(alive.expired());  // c owns a copy; the last view is gone, and so is the buffer
}

TEST_CASE("a Head on C-order views computes what a Head on owned matrices computes",
          "[shared_matrix][jacobian]") {
    const attnspec::Head owned = attnspec::random_head({7, 5, 3, 1, 11});
    // The same values as C-order (row-major) buffers.
    auto rows = [](const SharedMatrix& M) {
        auto v = std::make_shared<std::vector<double>>();
        for (Eigen::Index i = 0; i < M.rows(); ++i)
            for (Eigen::Index j = 0; j < M.cols(); ++j) v->push_back(M(i, j));
        return SharedMatrix::view(v->data(), M.rows(), M.cols(), M.cols(), 1, v);
    };
    attnspec::Head viewed = owned;
    viewed.X = rows(owned.X), viewed.W_Q = rows(owned.W_Q), viewed.W_K = rows(owned.W_K);
    viewed.W_V = rows(owned.W_V);
    REQUIRE_FALSE(viewed.X.column_major());
    const MatrixXd A0 = attnspec::attention_forward<double>(owned).A;
    const MatrixXd A1 = attnspec::attention_forward<double>(viewed).A;
    CHECK((A0.array() == A1.array()).all());
    const MatrixXd J0 = attnspec::jacobian_weights(owned), J1 = attnspec::jacobian_weights(viewed);
    CHECK((J0.array() == J1.array()).all());
    const MatrixXd Jx0 = attnspec::jacobian_input(owned), Jx1 = attnspec::jacobian_input(viewed);
    CHECK((Jx0.array() == Jx1.array()).all());
}
