// load_qk_input: the Q/K(/V, A_hat, gamma) input files of the InfSA commands (reports/SCHEMA.md,
// "Q/K input files"), through H5Reader plus the stored dtype from the HDF5 C API.
#include "attnspec/io/qk_input.hpp"

#include <hdf5.h>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec {

namespace {

// "float64", "float32", "int32", "uint8", ... for a numeric dataset; "other" otherwise.
std::string stored_dtype(const std::string& path, const std::string& dataset) {
    H5Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!f.valid()) return "other";
    H5Id d(H5Dopen2(f.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid()) return "other";
    H5Id t(H5Dget_type(d.get()), H5Tclose);
    const std::string bits = std::to_string(8 * H5Tget_size(t.get()));
    switch (H5Tget_class(t.get())) {
        case H5T_FLOAT:
            return "float" + bits;
        case H5T_INTEGER:
            return (H5Tget_sign(t.get()) == H5T_SGN_NONE ? "uint" : "int") + bits;
        default:
            return "other";
    }
}

std::string shape_text(const Eigen::MatrixXd& M) {
    return std::to_string(M.rows()) + " x " + std::to_string(M.cols());
}

// Splits the columns of `M` (dataset `name`) into `heads` equal blocks.
std::vector<Eigen::MatrixXd> split_heads(Eigen::MatrixXd M, long heads, const std::string& path,
                                         const std::string& name) {
    if (M.cols() % heads)
        throw Error(ExitCode::DataError,
                    path + ": the " + std::to_string(M.cols()) + " columns of dataset '" + name +
                        "' do not split into heads = " + std::to_string(heads),
                    "heads");
    std::vector<Eigen::MatrixXd> out;
    if (heads == 1) {
        out.push_back(std::move(M));
        return out;
    }
    const Eigen::Index d = M.cols() / heads;
    for (long h = 0; h < heads; ++h) out.emplace_back(M.middleCols(h * d, d));
    return out;
}

}  // namespace

QKInput load_qk_input(const std::string& path, const QKInputOptions& opt) {
    if (opt.heads <= 0)
        throw Error(ExitCode::DataError,
                    "heads = " + std::to_string(opt.heads) + " must be positive", "heads");
    const H5Reader rd(path);  // NoInput / DataError for missing, unreadable or non-HDF5 files
    QKInput in;
    in.path = path;
    if (opt.accept_affinity && rd.exists("A_hat")) {
        in.A_hat = rd.matrix("A_hat");
        if (in.A_hat.rows() != in.A_hat.cols())
            fail_data(path + ": dataset 'A_hat' is " + shape_text(in.A_hat) +
                      ", expected square N x N");
        in.N = in.A_hat.rows();
        in.dtype = stored_dtype(path, "A_hat");
    } else {
        Eigen::MatrixXd Q = rd.matrix("Q"), K = rd.matrix("K");
        if (Q.rows() != K.rows() || Q.cols() != K.cols())
            fail_data(path + ": datasets 'Q' (" + shape_text(Q) + ") and 'K' (" + shape_text(K) +
                      ") differ in shape (both must be N x heads*d_h)");
        in.N = Q.rows();
        in.dtype = stored_dtype(path, "Q");
        in.Qs = split_heads(std::move(Q), opt.heads, path, "Q");
        in.Ks = split_heads(std::move(K), opt.heads, path, "K");
        in.d_h = in.Qs[0].cols();
    }
    if (opt.read_v && rd.exists("V")) {
        Eigen::MatrixXd V = rd.matrix("V");
        if (V.rows() != in.N)
            fail_data(path + ": dataset 'V' has " + std::to_string(V.rows()) +
                      " rows, expected N = " + std::to_string(in.N));
        in.Vs = split_heads(std::move(V), in.has_affinity() ? 1 : opt.heads, path, "V");
    }
    if (opt.read_gamma && rd.has_attr("/", "gamma")) in.gamma = rd.attr_double("/", "gamma");
    const long blocks = in.has_affinity() ? 1 : opt.heads;
    for (long h = 0; h < blocks; ++h) in.names.push_back("head " + std::to_string(h));
    return in;
}

}  // namespace attnspec
