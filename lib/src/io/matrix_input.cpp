// The matrix input of `attnspec cond` (io/matrix_input.hpp).
#include "attnspec/io/matrix_input.hpp"

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec {

Eigen::MatrixXd load_matrix_input(const std::string& file, const std::string& dataset) {
    const H5Reader in(file);
    if (!in.exists(dataset)) fail_data(file + ": no dataset '" + dataset + "'");
    const auto shape = in.shape(dataset);
    if (shape.empty() || shape.size() > 2)
        fail_data(file + ": dataset '" + dataset + "' has rank " + std::to_string(shape.size()) +
                  " (expected a matrix or a vector)");
    double elems = 1;
    for (auto s : shape) elems *= static_cast<double>(s);
    if (elems == 0) fail_data(file + ": dataset '" + dataset + "' is empty");
    // M, U, V and work space: refused before reading (memory_limit_bytes(), --max-memory)
    in.check_fits(8.0 * 4 * elems, "reading and decomposing '" + dataset + "'");
    return in.input_matrix(dataset);  // float32/float64 only; rejects NaN/Inf
}

}  // namespace attnspec
