// Named datasets: the model loader (io/model_input.hpp); the selector and the catalogue are in
// model_catalogue.cpp.
#include "attnspec/io/model_input.hpp"

#include <optional>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"
#include "model_input_internal.hpp"

namespace attnspec {

using namespace model_detail;

namespace {

std::vector<int> pick(const std::optional<int>& part, int count, const std::string& name,
                      const char* what, const char* plural) {
    if (part) {
        if (*part >= count)
            fail_data(std::string(what) + " " + std::to_string(*part) + " out of range: " + name +
                      " has " + std::to_string(count) + " " + plural +
                      (count > 0 ? " (0.." + std::to_string(count - 1) + ")" : ""));
        return {*part};
    }
    std::vector<int> all(static_cast<std::size_t>(count));
    for (int k = 0; k < count; ++k) all[static_cast<std::size_t>(k)] = k;
    return all;
}

// What a selection covers, checked against the catalogue entry.
struct Selection {
    DatasetInfo info;
    std::vector<int> layers, heads, sentences;
};

// `open`: the dataset's file already open (nullptr: opened here when needed).
Selection select(DatasetInfo entry, const DatasetSelector& sel, bool need_inputs,
                 const H5Reader* open = nullptr) {
    Selection out{std::move(entry), {}, {}, {}};
    const DatasetInfo& info = out.info;
    if (sel.sentence && info.layout == "heads")
        fail_usage("--dataset '" + sel.describe() + "': " + info.name +
                   " is a heads file (one layer, each head on its own X), so a sentence part " +
                   "means nothing there; select " + info.name + "[:0[:head]]");
    if (sel.sentence && !need_inputs)
        fail_usage("--dataset '" + sel.describe() + "': this command reads weights only, so " +
                   "a sentence part means nothing; drop it");
    out.layers = pick(sel.layer, info.layers, info.name, "layer", "layers");
    out.heads = pick(sel.head, info.heads, info.name, "head", "heads per layer");
    if (need_inputs && info.layout == "model") {
        std::optional<H5Reader> own;
        const H5Reader& r = open ? *open : own.emplace(info.path);
        for (int l : out.layers)
            if (!r.exists(layer_path(l) + "/inputs"))
                fail_data(info.name + ": layer " + std::to_string(l) +
                          " has no inputs (weights only); jacobian, neumann and fidelity need " +
                          "the hidden states X, cond reads the weights alone");
        out.sentences = pick(sel.sentence, info.sentences, info.name, "sentence", "sentences");
    } else {
        out.sentences = {0};
    }
    if (out.layers.empty() || out.heads.empty() || out.sentences.empty())
        fail_data("--dataset '" + sel.describe() + "' selects nothing: " + info.name + " has " +
                  std::to_string(info.layers) + " layer(s), " + std::to_string(info.heads) +
                  " head(s), " + std::to_string(info.sentences) + " sentence(s)");
    return out;
}

double model_bytes(const Selection& s, bool need_inputs) {
    const H5Reader r(s.info.path);
    const double weights = 8.0 * static_cast<double>(3 * s.info.D * s.info.d + 3 * s.info.d);
    double bytes = weights * static_cast<double>(s.layers.size() * s.heads.size());
    if (!need_inputs) return bytes;
    for (int l : s.layers)
        for (int t : s.sentences) {
            if (!r.exists(input_path(l, t)))
                fail_data(s.info.path + ": no dataset " + input_path(l, t) + " " + kModelHint);
            // one X read per (layer, sentence), one copy per head
            bytes += r.declared_bytes(input_path(l, t)) * static_cast<double>(s.heads.size() + 1);
        }
    return bytes;
}

HeadWeights read_weights(const H5Reader& r, const DatasetInfo& info, int l, int h) {
    const std::string g = head_path(l, h);
    HeadWeights w;
    Eigen::MatrixXd* W[] = {&w.W_Q, &w.W_K, &w.W_V};
    Eigen::VectorXd* b[] = {&w.b_Q, &w.b_K, &w.b_V};
    const char* which[] = {"Q", "K", "V"};
    for (int k = 0; k < 3; ++k) {
        const std::string wp = g + "/W_" + which[k];
        const std::string bp = g + "/b_" + which[k];
        if (!r.exists(wp)) fail_data(info.path + ": no dataset " + wp + " " + kModelHint);
        *W[k] = r.input_matrix(wp);
        if (W[k]->rows() != info.D || W[k]->cols() != info.d)
            fail_data(info.path + ": " + wp + " is " + std::to_string(W[k]->rows()) + "x" +
                      std::to_string(W[k]->cols()) + ", expected " + std::to_string(info.D) + "x" +
                      std::to_string(info.d) + " (D x d, from " + head_path(0, 0) + "/W_Q)");
        if (!r.exists(bp)) continue;
        const std::vector<hsize_t> shape = r.shape(bp);
        if (shape.size() != 1 || static_cast<Eigen::Index>(shape[0]) != info.d)
            fail_data(info.path + ": " + bp + " must have shape (" + std::to_string(info.d) +
                      ",) (d from " + head_path(0, 0) + "/W_Q)");
        *b[k] = r.input_matrix(bp).col(0);
    }
    return w;
}

Eigen::MatrixXd read_inputs(const H5Reader& r, const DatasetInfo& info, int l, int t) {
    const std::string xp = input_path(l, t);
    Eigen::MatrixXd X = r.input_matrix(xp);
    if (X.cols() != info.D)
        fail_data(info.path + ": " + xp + " has " + std::to_string(X.cols()) +
                  " columns, expected D = " + std::to_string(info.D));
    const auto st = static_cast<std::size_t>(t);
    if (st < info.n_tokens.size() && X.rows() != info.n_tokens[st])
        fail_data(info.path + ": " + xp + " has " + std::to_string(X.rows()) +
                  " rows, but /sentences/n_tokens says " + std::to_string(info.n_tokens[st]));
    return X;
}

std::string label(const std::string& name, int l, int h, int t, bool with_sentence) {
    return name + ":L" + std::to_string(l) + ":H" + std::to_string(h) +
           (with_sentence ? ":S" + std::to_string(t) : "");
}

std::vector<SelectedHead> load_heads_file(const Selection& s) {
    const AttentionHeads in = load_attention_heads(s.info.path);
    const bool grouped = H5Reader(s.info.path).exists("/heads");
    std::vector<SelectedHead> out;
    for (int h : s.heads) {
        const auto k = static_cast<std::size_t>(h);
        out.push_back({0, h, 0, label(s.info.name, 0, h, 0, false),
                       grouped ? "/heads/" + in.names[k] : "/", in.heads[k]});
    }
    return out;
}

}  // namespace

double selected_bytes(const DatasetSelector& sel, bool need_inputs) {
    const Selection s = select(find_dataset(sel.name), sel, need_inputs);
    if (s.info.layout == "model") return model_bytes(s, need_inputs);
    // a heads file is read whole (load_attention_heads checks its own declared sizes)
    return s.info.size_bytes;
}

std::vector<SelectedHead> load_selected_heads(const DatasetSelector& sel, bool need_inputs) {
    return load_selected_heads(find_dataset(sel.name), sel, need_inputs);
}

std::vector<SelectedHead> load_selected_heads(const DatasetInfo& entry, const DatasetSelector& sel,
                                              bool need_inputs) {
    if (entry.layout == "heads") return load_heads_file(select(entry, sel, need_inputs));
    const H5Reader r(entry.path);  // opened once: the selection's checks and the reads
    const Selection s = select(entry, sel, need_inputs, &r);
    const std::size_t count = s.layers.size() * s.heads.size() * s.sentences.size();
    r.check_fits(model_bytes(s, need_inputs), "loading --dataset '" + sel.describe() + "' (" +
                                                  std::to_string(count) + " head(s))");
    std::vector<SelectedHead> out;
    out.reserve(count);
    for (int l : s.layers) {
        std::vector<SharedMatrix> X;  // one per sentence, shared by the heads (not copied)
        if (need_inputs)
            for (int t : s.sentences) X.emplace_back(read_inputs(r, s.info, l, t));
        for (int h : s.heads) {
            HeadWeights w = read_weights(r, s.info, l, h);
            for (std::size_t k = 0; k < s.sentences.size(); ++k) {
                const int t = s.sentences[k];
                SelectedHead sh{
                    l, h, t, label(s.info.name, l, h, t, need_inputs), head_path(l, h), Head{}};
                Head& head = sh.head_input;
                head.W_Q = w.W_Q, head.W_K = w.W_K, head.W_V = w.W_V;
                head.b_Q = w.b_Q, head.b_K = w.b_K, head.b_V = w.b_V;
                head.s = s.info.s;
                if (need_inputs) {
                    head.X = X[k];
                    head.validate(sh.label);
                }
                out.push_back(std::move(sh));
            }
        }
    }
    return out;
}

AttentionHeads selected_attention_heads(const DatasetSelector& sel) {
    AttentionHeads out;
    out.source = sel.describe();
    out.dtype = find_dataset(sel.name).dtype;
    out.shared_X = true;
    for (SelectedHead& h : load_selected_heads(sel)) {
        const Eigen::MatrixXd& X = h.head_input.X;
        if (!out.heads.empty() && (X.rows() != out.heads[0].N() || X != out.heads[0].X))
            out.shared_X = false;
        out.names.push_back(h.label);
        out.heads.push_back(std::move(h.head_input));
    }
    return out;
}

void head_qk(const Head& h, Eigen::MatrixXd& Q, Eigen::MatrixXd& K) {
    const Head e = h.corrected() ? h.effective() : h;
    Q = e.X * e.W_Q;
    K = e.X * e.W_K;
    if (e.b_Q.size() != 0) Q.rowwise() += e.b_Q.transpose();
    if (e.b_K.size() != 0) K.rowwise() += e.b_K.transpose();
}

AttentionHeads load_model_layer(const DatasetSelector& sel, int layer, int sentence) {
    const DatasetInfo info = find_dataset(sel.name);
    DatasetSelector one{sel.name, layer, std::nullopt, sentence};
    if (info.layout == "heads") {
        one.sentence.reset();
        select(info, one, true);  // range checks
        return load_attention_heads(info.path);
    }
    AttentionHeads out;
    out.source = info.name + ":" + std::to_string(layer) + ":*:" + std::to_string(sentence);
    out.shared_X = true;
    out.dtype = info.dtype;
    for (SelectedHead& h : load_selected_heads(one)) {
        out.names.push_back(std::to_string(h.head));
        out.heads.push_back(std::move(h.head_input));
    }
    return out;
}

}  // namespace attnspec
