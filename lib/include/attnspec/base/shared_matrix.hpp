// SharedMatrix: a read-only float64 matrix that either owns its values or views a caller's
// buffer (any row and column strides, so C- and F-ordered arrays alike) and keeps that buffer
// alive. Copies share the buffer (O(1), no values copied); nothing writes through it. It is an
// Eigen::Map, so it enters Eigen expressions as a matrix does (h.X * W, X.rows(), X.cast<T>());
// with a row stride other than 1 Eigen evaluates it into a temporary where a product needs
// unit-stride operands, as it packs every GEMM operand anyway. Header only.
#pragma once
#include <Eigen/Dense>
#include <memory>
#include <new>
#include <utility>

namespace attnspec {

using SharedMatrixMap =
    Eigen::Map<const Eigen::MatrixXd, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

class SharedMatrix : public SharedMatrixMap {
  public:
    using Map = SharedMatrixMap;
    using StrideType = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;

    SharedMatrix() : Map(nullptr, 0, 0, StrideType(0, 1)) {}
    // Owns `m` (moved in; no values copied when `m` is an rvalue).
    SharedMatrix(Eigen::MatrixXd m) : Map(nullptr, 0, 0, StrideType(0, 1)) {  // NOLINT
        own(std::move(m));
    }
    // Any Eigen expression of doubles, evaluated once into owned storage.
    template <class Derived>
    SharedMatrix(const Eigen::MatrixBase<Derived>& e)  // NOLINT(google-explicit-constructor)
        : SharedMatrix(Eigen::MatrixXd(e)) {}
    SharedMatrix(const SharedMatrix& o) = default;      // shares the values
    SharedMatrix(SharedMatrix&& o) noexcept = default;  // the same
    SharedMatrix& operator=(const SharedMatrix& o) {
        if (this != &o)
            rebind(o.data(), o.rows(), o.cols(), o.outerStride(), o.innerStride(), o.keep_);
        return *this;
    }
    SharedMatrix& operator=(SharedMatrix&& o) noexcept {
        if (this != &o)
            rebind(o.data(), o.rows(), o.cols(), o.outerStride(), o.innerStride(),
                   std::move(o.keep_));
        return *this;
    }
    SharedMatrix& operator=(Eigen::MatrixXd m) {
        own(std::move(m));
        return *this;
    }
    template <class Derived>
    SharedMatrix& operator=(const Eigen::MatrixBase<Derived>& e) {
        own(Eigen::MatrixXd(e));
        return *this;
    }
    ~SharedMatrix() = default;

    // A view of rows x cols doubles at `data`: element (i, j) at data[i * row_stride + j *
    // col_stride] (strides in elements; F order: row_stride 1, col_stride rows; C order:
    // row_stride cols, col_stride 1). `keep` holds whatever keeps the buffer alive (a Python
    // array, say); it is released when the last copy goes.
    static SharedMatrix view(const double* data, Eigen::Index rows, Eigen::Index cols,
                             Eigen::Index row_stride, Eigen::Index col_stride,
                             std::shared_ptr<const void> keep) {
        SharedMatrix m;
        m.rebind(data, rows, cols, col_stride, row_stride, std::move(keep));
        return m;
    }

    // Whether the values are column-major with unit row stride (what BLAS and Eigen::Ref take
    // without a copy).
    bool column_major() const { return innerStride() == 1 && outerStride() >= rows(); }
    // The values as an owned column-major matrix (a copy).
    Eigen::MatrixXd matrix() const { return Eigen::MatrixXd(*this); }
    // Changes the values: f gets an owned copy (Eigen::MatrixXd&, resizable), which then becomes
    // this matrix. Other copies and the caller's buffer keep the old values (copy on write).
    template <class F>
    void modify(F&& f) {
        Eigen::MatrixXd m = matrix();
        f(m);
        own(std::move(m));
    }

  private:
    void own(Eigen::MatrixXd m) {
        auto p = std::make_shared<Eigen::MatrixXd>(std::move(m));
        const double* data = p->data();
        const Eigen::Index r = p->rows(), c = p->cols();
        rebind(data, r, c, r, 1, std::shared_ptr<const void>(std::move(p)));
    }
    void rebind(const double* data, Eigen::Index rows, Eigen::Index cols, Eigen::Index outer,
                Eigen::Index inner, std::shared_ptr<const void> keep) {
        // Eigen's documented way to point a Map elsewhere (Map has no rebinding assignment).
        new (static_cast<Map*>(this)) Map(data, rows, cols, StrideType(outer, inner));
        keep_ = std::move(keep);
    }

    std::shared_ptr<const void> keep_;
};

}  // namespace attnspec
