// attnspec._core.Head (attention/attention.hpp): one attention head, its forward pass, its exact
// Jacobians dense (attention/jacobian.hpp, route (a), as `attnspec jacobian --store-j` forms
// them) and as matrix-free operators (JacobianOperator, JacobianXOperator). The computations run
// without the GIL.
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/jacobian.hpp"
#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/base/errors.hpp"
#include "bindings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace attnspec::python {
namespace {

JacobianWrt wrt_from_string(const std::string& wrt) {
    if (wrt == "weights") return JacobianWrt::weights;
    if (wrt == "input") return JacobianWrt::input;
    fail_usage("wrt must be 'weights' or 'input', got '" + wrt + "'", "wrt");
}

using InMatrix = nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>;

// The caller's float64 array as a SharedMatrix view, no copy: C- or F-contiguous (any strides
// would do for the library; the Python layer copies other strided views first, its documented
// rule). The view keeps a reference to the array (nanobind drops it with the GIL held, from any
// thread).
SharedMatrix view_of(const InMatrix& a, const char* name) {
    const auto r = static_cast<Eigen::Index>(a.shape(0)), c = static_cast<Eigen::Index>(a.shape(1));
    const auto s0 = static_cast<Eigen::Index>(a.stride(0)),
               s1 = static_cast<Eigen::Index>(a.stride(1));
    const bool f_order = s0 == 1 && (c == 1 || s1 == r), c_order = s1 == 1 && (r == 1 || s0 == c);
    if (r > 0 && c > 0 && !f_order && !c_order)
        fail_data(std::string(name) + ": neither C- nor F-contiguous (strides " +
                      std::to_string(s0) + ", " + std::to_string(s1) + " elements)",
                  name);
    auto keep = std::make_shared<InMatrix>(a);
    return SharedMatrix::view(a.data(), r, c, s0, s1, std::shared_ptr<const void>(std::move(keep)));
}

Head make_head(const InMatrix& X, const InMatrix& W_Q, const InMatrix& W_K, const InMatrix& W_V,
               const std::optional<Eigen::VectorXd>& b_Q, const std::optional<Eigen::VectorXd>& b_K,
               const std::optional<Eigen::VectorXd>& b_V, double s) {
    Head h;
    h.X = view_of(X, "X"), h.W_Q = view_of(W_Q, "W_Q"), h.W_K = view_of(W_K, "W_K");
    h.W_V = view_of(W_V, "W_V");
    if (b_Q) h.b_Q = *b_Q;
    if (b_K) h.b_K = *b_K;
    if (b_V) h.b_V = *b_V;
    h.s = s;
    h.validate("Head");
    return h;
}

// Where a matrix's values live and how they are laid out (the no-copy test reads it).
nb::tuple layout(const SharedMatrix& m) {
    return nb::make_tuple(reinterpret_cast<std::uintptr_t>(m.data()), m.innerStride(),
                          m.outerStride());
}

std::optional<Eigen::VectorXd> bias(const Eigen::VectorXd& b) {
    if (b.size() == 0) return std::nullopt;
    return b;
}

// J (weights: N d x 3 D d) or J_X (input: N d x N D) applied without forming it.
class Operator {
  public:
    Operator(const Head& h, const std::string& wrt) {
        if (wrt_from_string(wrt) == JacobianWrt::weights)
            op_ = std::make_unique<JacobianOperator>(h);
        else
            op_ = std::make_unique<JacobianXOperator>(h);
    }
    Eigen::Index rows() const { return op_->rows(); }
    Eigen::Index cols() const { return op_->cols(); }
    Eigen::VectorXd apply(Eigen::Ref<const Eigen::VectorXd> x, bool transpose) const {
        const Eigen::Index in = transpose ? rows() : cols(), out = transpose ? cols() : rows();
        if (x.size() != in)
            fail_data(std::string(transpose ? "rmatvec" : "matvec") + ": x has length " +
                          std::to_string(x.size()) + ", expected " + std::to_string(in),
                      "x");
        Eigen::VectorXd y(out);
        nb::gil_scoped_release unlocked;
        transpose ? op_->apply_transpose(x.data(), y.data()) : op_->apply(x.data(), y.data());
        return y;
    }
    Eigen::MatrixXd apply_columns(const Eigen::MatrixXd& X, bool transpose) const {
        const Eigen::Index in = transpose ? rows() : cols(), out = transpose ? cols() : rows();
        if (X.rows() != in)
            fail_data(std::string(transpose ? "rmatmat" : "matmat") + ": X has " +
                          std::to_string(X.rows()) + " rows, expected " + std::to_string(in),
                      "X");
        Eigen::MatrixXd Y(out, X.cols());
        nb::gil_scoped_release unlocked;
        for (Eigen::Index j = 0; j < X.cols(); ++j)
            transpose ? op_->apply_transpose(X.col(j).data(), Y.col(j).data())
                      : op_->apply(X.col(j).data(), Y.col(j).data());
        return Y;
    }

  private:
    std::unique_ptr<LinearOperator> op_;
};

void bind_head_class(nb::module_& m) {
    nb::class_<Head>(m, "Head",
                     "One attention head: X (N x D), W_Q, W_K, W_V (D x d), optional biases "
                     "(d,), logit scale s; A = softmax_rows(s Q K^T) V with Q = X W_Q + 1 b_Q^T, "
                     "K = X W_K + 1 b_K^T, V = X W_V + 1 b_V^T (docs/MATH.md §2).")
        .def(
            "__init__",
            [](Head* self, const InMatrix& X, const InMatrix& W_Q, const InMatrix& W_K,
               const InMatrix& W_V, const std::optional<Eigen::VectorXd>& b_Q,
               const std::optional<Eigen::VectorXd>& b_K, const std::optional<Eigen::VectorXd>& b_V,
               double s) { new (self) Head(make_head(X, W_Q, W_K, W_V, b_Q, b_K, b_V, s)); },
            "X"_a.noconvert(), "W_Q"_a.noconvert(), "W_K"_a.noconvert(), "W_V"_a.noconvert(),
            "b_Q"_a.none() = nb::none(), "b_K"_a.none() = nb::none(), "b_V"_a.none() = nb::none(),
            "s"_a = 1.0,
            "Views the float64 arrays X, W_Q, W_K, W_V (C- or F-contiguous) without a copy and "
            "keeps them alive; copies the biases; validates shapes, NaN/Inf and s > 0 "
            "(DataError).")
        .def_prop_ro(
            "X", [](const Head& h) { return h.X.matrix(); }, "X (N x D), a copy")
        .def_prop_ro(
            "W_Q", [](const Head& h) { return h.W_Q.matrix(); }, "W_Q (D x d), a copy")
        .def_prop_ro(
            "W_K", [](const Head& h) { return h.W_K.matrix(); }, "W_K (D x d), a copy")
        .def_prop_ro(
            "W_V", [](const Head& h) { return h.W_V.matrix(); }, "W_V (D x d), a copy")
        .def_prop_ro(
            "layout",
            [](const Head& h) {
                nb::dict d;
                d["X"] = layout(h.X), d["W_Q"] = layout(h.W_Q), d["W_K"] = layout(h.W_K);
                d["W_V"] = layout(h.W_V);
                return d;
            },
            "{name: (data address, row stride, column stride)} of X and the weights as the "
            "library reads them (strides in elements)")
        .def_prop_ro(
            "b_Q", [](const Head& h) { return bias(h.b_Q); }, "b_Q (d,) or None")
        .def_prop_ro(
            "b_K", [](const Head& h) { return bias(h.b_K); }, "b_K (d,) or None")
        .def_prop_ro(
            "b_V", [](const Head& h) { return bias(h.b_V); }, "b_V (d,) or None")
        .def_ro("s", &Head::s, "the logit scale s")
        .def_prop_ro("N", &Head::N, "tokens N (rows of X)")
        .def_prop_ro("D", &Head::D, "model width D (columns of X)")
        .def_prop_ro("d", &Head::d, "head width d (columns of W_Q)");
}

void bind_jacobians(nb::module_& m) {
    m.def(
        "forward",
        [](const Head& h) {
            nb::gil_scoped_release unlocked;
            return Eigen::MatrixXd(attention_forward<double>(h).A);
        },
        "head"_a, "The head's output A (N x d).");
    m.def(
        "jacobian_bytes",
        [](const Head& h, const std::string& wrt) {
            return wrt_from_string(wrt) == JacobianWrt::weights
                       ? jacobian_weights_bytes(h.N(), h.D(), h.d())
                       : jacobian_input_bytes(h.N(), h.D(), h.d());
        },
        "head"_a, "wrt"_a, "Bytes of the dense J (wrt 'weights') or J_X (wrt 'input').");
    m.def(
        "jacobian_dense",
        [](const Head& h, const std::string& wrt, double max_bytes) {
            const JacobianWrt w = wrt_from_string(wrt);
            nb::gil_scoped_release unlocked;
            return w == JacobianWrt::weights ? jacobian_weights(h, max_bytes)
                                             : jacobian_input(h, max_bytes);
        },
        "head"_a, "wrt"_a, "max_bytes"_a,
        "Dense J = [J_Q, J_K, J_V] (N d x 3 D d) or J_X (N d x N D), column-major vec; "
        "DataError (parameter max_bytes) above max_bytes, before allocating.");
    nb::class_<Operator>(m, "JacobianOperator",
                         "J or J_X of a head as a matrix-free operator (the forward state is "
                         "copied: the head may change afterwards).")
        .def(nb::init<const Head&, const std::string&>(), "head"_a, "wrt"_a)
        .def_prop_ro("rows", &Operator::rows)
        .def_prop_ro("cols", &Operator::cols)
        .def(
            "matvec",
            [](const Operator& o, Eigen::Ref<const Eigen::VectorXd> x) {
                return o.apply(x, false);
            },
            "x"_a, "J x")
        .def(
            "rmatvec",
            [](const Operator& o, Eigen::Ref<const Eigen::VectorXd> x) { return o.apply(x, true); },
            "x"_a, "J^T x")
        .def(
            "matmat",
            [](const Operator& o, const Eigen::MatrixXd& X) { return o.apply_columns(X, false); },
            "X"_a, "J X")
        .def(
            "rmatmat",
            [](const Operator& o, const Eigen::MatrixXd& X) { return o.apply_columns(X, true); },
            "X"_a, "J^T X");
}

}  // namespace

void bind_head(nb::module_& m) {
    bind_head_class(m);
    bind_jacobians(m);
}

}  // namespace attnspec::python
