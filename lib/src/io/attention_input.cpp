// The attention input schema: loader, head reader and conversions (io/attention_input.hpp).
#include "attnspec/io/attention_input.hpp"

#include <algorithm>
#include <cctype>

#include "attnspec/base/errors.hpp"

namespace attnspec {

namespace {

const char* kSchemaHint = "(see reports/SCHEMA.md, attention input files)";
const char* kTransposeHint =
    " (looks like PyTorch's (out, in) layout: transpose it, or convert the "
    "checkpoint with `attnspec import`)";

// "/W_Q" for the root group, "/heads/a/W_Q" below it.
std::string join(const std::string& group, const std::string& name) {
    if (group.empty() || group == "/") return "/" + name;
    return group + "/" + name;
}

std::string dims(const Eigen::MatrixXd& M) {
    return std::to_string(M.rows()) + "x" + std::to_string(M.cols());
}

bool all_digits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// File order, except that names which are all decimal integers sort numerically (0, 1, ..., 10):
// HDF5 files written without creation-order tracking list links by name ("10" before "2").
std::vector<std::string> ordered_heads(const H5Reader& r) {
    std::vector<std::string> names = r.children("/heads");
    if (std::all_of(names.begin(), names.end(), all_digits))
        std::stable_sort(names.begin(), names.end(),
                         [](const std::string& a, const std::string& b) {
                             return a.size() != b.size() ? a.size() < b.size() : a < b;
                         });
    return names;
}

// The datasets load_attention_heads reads, in reading order (those present).
std::vector<std::string> input_datasets(const H5Reader& r, const std::vector<std::string>& names,
                                        bool grouped, bool shared_X) {
    std::vector<std::string> out;
    if (shared_X) out.emplace_back("/X");
    for (const std::string& name : names) {
        const std::string group = grouped ? "/heads/" + name : "/";
        for (const char* d : {"X", "W_Q", "W_K", "W_V", "C_Q", "C_K", "C_V", "b_Q", "b_K", "b_V"}) {
            const std::string path = join(group, d);
            if ((d[0] != 'X' || !shared_X) && r.exists(path)) out.push_back(path);
        }
    }
    return out;
}

// Refuses before reading anything when the declared arrays (each head holds its own copy of a
// shared X) exceed the memory budget.
void check_declared_sizes(const H5Reader& r, const std::vector<std::string>& names, bool grouped,
                          bool shared_X) {
    double bytes = 0;
    for (const std::string& d : input_datasets(r, names, grouped, shared_X))
        bytes += r.declared_bytes(d) * (d == "/X" ? static_cast<double>(names.size()) + 1 : 1);
    r.check_fits(bytes, "reading the input (" + std::to_string(names.size()) + " head(s))");
}

// "float64", "float32", or "float32,float64" when the arrays differ; DataError for other types.
std::string stored_dtypes(const H5Reader& r, const std::vector<std::string>& names, bool grouped,
                          bool shared_X) {
    std::vector<std::string> types;
    for (const std::string& d : input_datasets(r, names, grouped, shared_X)) {
        const std::string t = r.dtype(d);
        if (t != "float32" && t != "float64")
            fail_data(r.path() + ": dataset '" + d + "' is " + t + ", expected float32 or float64");
        if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
    }
    std::sort(types.begin(), types.end());
    std::string out;
    for (const auto& t : types) out += (out.empty() ? "" : ",") + t;
    return out;
}

// Optional biases b_Q, b_K, b_V beside the weights: shape (d,) exactly, float, finite.
void read_biases(const H5Reader& r, const std::string& group, Eigen::Index d,
                 const std::string& d_from, Head& h) {
    Eigen::VectorXd* slot[] = {&h.b_Q, &h.b_K, &h.b_V};
    const char* names[] = {"b_Q", "b_K", "b_V"};
    for (int k = 0; k < 3; ++k) {
        const std::string path = join(group, names[k]);
        if (!r.exists(path)) continue;
        const std::vector<hsize_t> shape = r.shape(path);
        if (shape.size() != 1 || static_cast<Eigen::Index>(shape[0]) != d) {
            std::string got = "(";
            for (std::size_t i = 0; i < shape.size(); ++i)
                got += (i ? ", " : "") + std::to_string(shape[i]);
            got += shape.size() == 1 ? ",)" : ")";
            fail_data(r.path() + ": " + path + " has shape " + got + ", expected (" +
                      std::to_string(d) + ",) (a bias of length d = " + std::to_string(d) +
                      " from " + d_from + ") " + kSchemaHint);
        }
        *slot[k] = r.input_matrix(path).col(0);  // DataError: NaN/Inf, non-float type
    }
}

}  // namespace

bool AttentionHeads::uniform() const {
    for (const Head& h : heads)
        if (h.N() != heads[0].N() || h.D() != heads[0].D() || h.d() != heads[0].d() ||
            h.s != heads[0].s)
            return false;
    return true;
}

MultiHead AttentionHeads::multihead() const {
    if (heads.empty()) fail_data(source + ": no heads");
    if (!shared_X)
        fail_data(source + ": the heads have their own X, so they do not form one layer");
    if (!uniform())
        fail_data(source + ": the heads differ in d or s, so they do not form one layer");
    MultiHead m;
    m.X = heads[0].X;
    m.s = heads[0].s;
    for (const Head& h : heads)
        m.heads.push_back({h.W_Q, h.W_K, h.W_V, h.C_Q, h.C_K, h.C_V, h.b_Q, h.b_K, h.b_V});
    return m;
}

Head read_attention_head(const H5Reader& r, const std::string& group, Eigen::MatrixXd X,
                         const std::string& x_path, double s) {
    const std::string& file = r.path();
    Head h;
    h.X = std::move(X);
    h.s = s;
    const Eigen::Index D = h.X.cols();
    Eigen::Index d = -1;
    std::string d_from;
    for (const char* name : {"W_Q", "W_K", "W_V", "C_Q", "C_K", "C_V"}) {
        const std::string path = join(group, name);
        const bool correction = name[0] == 'C';
        if (!r.exists(path)) {
            if (correction) continue;
            fail_data(file + ": no dataset " + path + " (a head needs W_Q, W_K and W_V) " +
                      kSchemaHint);
        }
        Eigen::MatrixXd M = r.input_matrix(path);  // DataError: NaN/Inf, rank > 2, empty, int
        if (d < 0) d = M.cols(), d_from = path;
        if (M.rows() != D || M.cols() != d)
            fail_data(file + ": " + path + " is " + dims(M) + ", expected " + std::to_string(D) +
                      "x" + (path == d_from ? "d" : std::to_string(d)) +
                      " (D = " + std::to_string(D) + " from " + x_path +
                      (path == d_from ? "" : ", d = " + std::to_string(d) + " from " + d_from) +
                      ")" +
                      (M.cols() == D && (path == d_from || M.rows() == d) ? kTransposeHint : ""));
        const int k = name[2] == 'Q' ? 0 : name[2] == 'K' ? 1 : 2;
        if (correction) {
            Eigen::MatrixXd* slot[] = {&h.C_Q, &h.C_K, &h.C_V};
            *slot[k] = std::move(M);
        } else {
            SharedMatrix* slot[] = {&h.W_Q, &h.W_K, &h.W_V};
            *slot[k] = std::move(M);
        }
    }
    read_biases(r, group, d, d_from, h);
    h.validate(file + ":" + (group.empty() ? "/" : group));
    return h;
}

AttentionHeads load_attention_heads(const std::string& path) {
    const H5Reader r(path);
    AttentionHeads in;
    in.source = path;
    const bool grouped = r.exists("/heads");
    const bool root_form = r.exists("/W_Q") || r.exists("/W_K") || r.exists("/W_V");
    if (grouped && root_form)
        fail_data(path + ": holds both /heads and root weights (/W_Q, ...): use one form " +
                  kSchemaHint);
    if (!grouped && !root_form)
        fail_data(path + ": no /heads group and no root weights /W_Q, /W_K, /W_V: no attention " +
                  "head " + kSchemaHint);
    if (grouped && !r.is_group("/heads")) fail_data(path + ": /heads is not a group");
    const std::vector<std::string> names =
        grouped ? ordered_heads(r) : std::vector<std::string>{"0"};
    if (names.empty()) fail_data(path + ": group /heads holds no head " + kSchemaHint);

    in.shared_X = r.exists("/X");
    check_declared_sizes(r, names, grouped, in.shared_X);
    in.dtype = stored_dtypes(r, names, grouped, in.shared_X);
    Eigen::MatrixXd X_root;
    if (in.shared_X) X_root = r.input_matrix("/X");
    const double s_root = r.has_attr("/", "s") ? r.attr_double("/", "s") : 1.0;
    for (const std::string& name : names) {
        const std::string group = grouped ? "/heads/" + name : "/";
        const std::string x_own = join(group, "X");
        if (grouped && in.shared_X && r.exists(x_own))
            fail_data(path + ": both /X (shared) and " + x_own + ": give X once " + kSchemaHint);
        if (!grouped && !in.shared_X)
            fail_data(path + ": no dataset /X (the tokens, N x D) " + kSchemaHint);
        if (!in.shared_X && !r.exists(x_own))
            fail_data(path + ": no X for head '" + name + "': give /X (shared by every head) or " +
                      x_own + " " + kSchemaHint);
        const double s = r.has_attr(group, "s") ? r.attr_double(group, "s") : s_root;
        Head h = in.shared_X ? read_attention_head(r, group, X_root, "/X", s)
                             : read_attention_head(r, group, r.input_matrix(x_own), x_own, s);
        in.corrections |= h.corrected();
        in.names.push_back(name);
        in.heads.push_back(std::move(h));
    }
    return in;
}

AttentionHeads attention_heads(const MultiHead& m, const std::string& source) {
    AttentionHeads in;
    in.source = source;
    in.shared_X = true;
    for (Eigen::Index h = 0; h < m.H(); ++h) {
        in.names.push_back(std::to_string(h));
        in.heads.push_back(m.head(h));
        in.corrections |= in.heads.back().corrected();
    }
    return in;
}

}  // namespace attnspec
