// load_qk_input: the Q/K(/V, A_hat, gamma) input files of the InfSA commands (reports/SCHEMA.md,
// "Q/K input files"), through H5Reader.
#include "attnspec/io/qk_input.hpp"

#include <hdf5.h>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec {

namespace {

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
    const bool given = opt.accept_affinity && rd.exists("A_hat");
    {  // refuse before reading anything: every declared array, and the per-head copies
        std::vector<std::string> sets =
            given ? std::vector<std::string>{"A_hat"} : std::vector<std::string>{"Q", "K"};
        if (opt.read_v && rd.exists("V")) sets.emplace_back("V");
        double bytes = 0;
        for (const auto& d : sets) bytes += rd.declared_bytes(d);
        rd.check_fits(opt.heads > 1 ? 2 * bytes : bytes, "reading the input arrays");
    }
    if (given) {
        in.A_hat = rd.input_matrix("A_hat");
        if (in.A_hat.rows() != in.A_hat.cols())
            fail_data(path + ": dataset 'A_hat' is " + shape_text(in.A_hat) +
                      ", expected square N x N");
        in.N = in.A_hat.rows();
        in.dtype = rd.dtype("A_hat");
    } else {
        Eigen::MatrixXd Q = rd.input_matrix("Q"), K = rd.input_matrix("K");
        if (Q.rows() != K.rows() || Q.cols() != K.cols())
            fail_data(path + ": datasets 'Q' (" + shape_text(Q) + ") and 'K' (" + shape_text(K) +
                      ") differ in shape (both must be N x heads*d_h)");
        in.N = Q.rows();
        in.dtype = rd.dtype("Q");
        in.Qs = split_heads(std::move(Q), opt.heads, path, "Q");
        in.Ks = split_heads(std::move(K), opt.heads, path, "K");
        in.d_h = in.Qs[0].cols();
    }
    if (opt.read_v && rd.exists("V")) {
        Eigen::MatrixXd V = rd.input_matrix("V");
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
