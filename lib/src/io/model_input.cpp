// Named datasets: the selector, the catalogue and the model loader (io/model_input.hpp).
#include "attnspec/io/model_input.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"

#ifndef ATTNSPEC_DEFAULT_DATASETS
#define ATTNSPEC_DEFAULT_DATASETS "datasets/embedded"
#endif

namespace attnspec {

namespace fs = std::filesystem;

namespace {

const char* kModelHint = "(see reports/SCHEMA.md, model input files)";

bool all_digits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::optional<int> parse_part(const std::string& text, const std::string& part, const char* what) {
    if (part == "*") return std::nullopt;
    if (!all_digits(part) || part.size() > 6)
        fail_usage("--dataset '" + text + "': " + what + " must be a non-negative integer or '*'" +
                   (part.empty() ? " (it is empty)" : " (got '" + part + "')"));
    return std::stoi(part);
}

std::string part_text(const std::optional<int>& p) { return p ? std::to_string(*p) : "*"; }

// The number of children of `group`, which must be named 0, 1, ..., n-1 (no leading zeros).
int indexed_count(const H5Reader& r, const std::string& group) {
    if (!r.is_group(group)) fail_data(r.path() + ": no group " + group + " " + kModelHint);
    const std::vector<std::string> names = r.children(group);
    for (const std::string& n : names)
        if (!all_digits(n) || n.size() > 6 || (n.size() > 1 && n[0] == '0') ||
            std::stoul(n) >= names.size())
            fail_data(r.path() + ": " + group + " holds '" + n +
                      "'; its members must be named 0, " + "1, ..., " +
                      std::to_string(static_cast<long>(names.size()) - 1) + " " + kModelHint);
    return static_cast<int>(names.size());
}

std::string attr_or_empty(const H5Reader& r, const std::string& name) {
    return r.has_attr("/", name) ? r.attr_as_text("/", name) : std::string();
}

std::string layer_path(int l) { return "/layers/" + std::to_string(l); }
std::string head_path(int l, int h) { return layer_path(l) + "/heads/" + std::to_string(h); }
std::string input_path(int l, int s) { return layer_path(l) + "/inputs/" + std::to_string(s); }

std::string join_types(std::string a, const std::string& b) {
    if (b.empty() || a == b) return a;
    return a < b ? a + "," + b : b + "," + a;
}

void read_sentences(const H5Reader& r, DatasetInfo& info) {
    if (!r.exists("/sentences/n_tokens")) {
        if (info.has_inputs) info.sentences = indexed_count(r, "/layers/0/inputs");
        return;
    }
    if (r.shape("/sentences/n_tokens").size() != 1)
        fail_data(info.path + ": /sentences/n_tokens must be one-dimensional (S,)");
    for (double n : r.vector("/sentences/n_tokens")) {
        if (!(n >= 1) || n != std::floor(n) || n > 1e9)
            fail_data(info.path + ": /sentences/n_tokens holds " + value_text(n) +
                      ", not a token count");
        info.n_tokens.push_back(static_cast<Eigen::Index>(n));
    }
    info.sentences = static_cast<int>(info.n_tokens.size());
    if (!r.exists("/sentences/text")) return;
    info.sentence_text = r.strings("/sentences/text");
    if (info.sentence_text.size() != info.n_tokens.size())
        fail_data(info.path + ": /sentences/text holds " +
                  std::to_string(info.sentence_text.size()) + " sentences, /sentences/n_tokens " +
                  std::to_string(info.n_tokens.size()));
}

void model_info(const H5Reader& r, DatasetInfo& info) {
    const std::string kind = attr_or_empty(r, "kind");
    if (kind != "attnspec-input")
        fail_data(info.path + ": root attribute kind is '" + kind +
                  "', expected 'attnspec-input' " + kModelHint);
    info.layers = indexed_count(r, "/layers");
    if (info.layers == 0) fail_data(info.path + ": /layers holds no layer " + kModelHint);
    info.heads = indexed_count(r, "/layers/0/heads");
    if (info.heads == 0) fail_data(info.path + ": /layers/0/heads holds no head " + kModelHint);
    const std::vector<hsize_t> shape = r.shape(head_path(0, 0) + "/W_Q");
    if (shape.size() != 2)
        fail_data(info.path + ": " + head_path(0, 0) + "/W_Q must be two-dimensional (D, d)");
    info.D = static_cast<Eigen::Index>(shape[0]);
    info.d = static_cast<Eigen::Index>(shape[1]);
    if (!r.has_attr("/", "s"))
        fail_data(info.path + ": no root attribute s (the logit scale) " + kModelHint);
    info.s = r.attr_double("/", "s");
    if (!(info.s > 0) || !std::isfinite(info.s))
        fail_data(info.path + ": root attribute s = " + value_text(info.s) + " must be positive");
    info.model = attr_or_empty(r, "model");
    info.origin = attr_or_empty(r, "origin");
    info.licence = attr_or_empty(r, "licence");
    info.regenerate = attr_or_empty(r, "regenerate");
    info.validation = attr_or_empty(r, "validation");
    info.has_inputs = r.exists("/layers/0/inputs");
    read_sentences(r, info);
    info.dtype = r.dtype(head_path(0, 0) + "/W_Q");
    if (info.has_inputs && info.sentences > 0 && r.exists(input_path(0, 0)))
        info.dtype = join_types(info.dtype, r.dtype(input_path(0, 0)));
}

void heads_info(const H5Reader& r, DatasetInfo& info) {
    const bool grouped = r.exists("/heads");
    const std::vector<std::string> names =
        grouped ? r.children("/heads") : std::vector<std::string>{""};
    if (names.empty()) fail_data(info.path + ": group /heads holds no head");
    const std::string w = grouped ? "/heads/" + names[0] + "/W_Q" : "/W_Q";
    const std::vector<hsize_t> shape = r.shape(w);
    if (shape.size() != 2) fail_data(info.path + ": " + w + " must be two-dimensional (D, d)");
    info.layers = 1;
    info.sentences = 1;
    info.heads = static_cast<int>(names.size());
    info.D = static_cast<Eigen::Index>(shape[0]);
    info.d = static_cast<Eigen::Index>(shape[1]);
    info.s = r.has_attr("/", "s") ? r.attr_double("/", "s") : 1.0;
    info.dtype = r.dtype(w);
    info.has_inputs = true;
}

std::vector<fs::path> dataset_files() {
    const std::string dir = dataset_directory();
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw Error(ExitCode::NoInput, "dataset directory '" + dir +
                                           "' does not exist (set ATTNSPEC_DATASETS to a " +
                                           "directory of .h5 files)");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".h5" && e.is_regular_file(ec)) files.push_back(e.path());
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.stem() < b.stem(); });
    return files;
}

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

Selection select(const DatasetSelector& sel, bool need_inputs) {
    Selection out{find_dataset(sel.name), {}, {}, {}};
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
        const H5Reader r(info.path);
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

DatasetSelector DatasetSelector::parse(const std::string& text) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
        parts.push_back(text.substr(start, colon - start));
    parts.push_back(text.substr(start));
    if (parts.size() > 4)
        fail_usage("--dataset '" + text + "': at most NAME:layer:head:sentence (" +
                   std::to_string(parts.size()) + " parts given)");
    if (parts[0].empty())
        fail_usage("--dataset '" + text +
                   "': the dataset name is empty (see attnspec dataset list)");
    DatasetSelector sel;
    sel.name = parts[0];
    if (parts.size() > 1) sel.layer = parse_part(text, parts[1], "layer");
    if (parts.size() > 2) sel.head = parse_part(text, parts[2], "head");
    if (parts.size() > 3) sel.sentence = parse_part(text, parts[3], "sentence");
    return sel;
}

std::string DatasetSelector::describe() const {
    const std::optional<int> parts[] = {layer, head, sentence};
    int last = -1;
    for (int k = 0; k < 3; ++k)
        if (parts[k]) last = k;
    std::string out = name;
    for (int k = 0; k <= last; ++k) out += ":" + part_text(parts[k]);
    return out;
}

std::string dataset_directory() {
    const char* env = std::getenv("ATTNSPEC_DATASETS");
    return env != nullptr && *env != '\0' ? std::string(env)
                                          : std::string(ATTNSPEC_DEFAULT_DATASETS);
}

DatasetInfo read_dataset_info(const std::string& path) {
    DatasetInfo info;
    info.path = path;
    info.name = fs::path(path).stem().string();
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    info.size_bytes = ec ? 0.0 : static_cast<double>(size);
    const H5Reader r(path);
    info.layout = attr_or_empty(r, "layout");
    if (info.layout.empty()) info.layout = r.exists("/layers") ? "model" : "heads";
    if (info.layout == "model")
        model_info(r, info);
    else if (info.layout == "heads")
        heads_info(r, info);
    else
        fail_data(path + ": root attribute layout is '" + info.layout +
                  "', expected 'model' or 'heads' " + kModelHint);
    info.description = attr_or_empty(r, "description");
    return info;
}

std::vector<DatasetInfo> list_datasets() {
    std::vector<DatasetInfo> out;
    for (const fs::path& p : dataset_files()) {
        try {
            out.push_back(read_dataset_info(p.string()));
        } catch (const Error& e) {
            DatasetInfo info;
            info.name = p.stem().string();
            info.path = p.string();
            info.problem = e.what();
            out.push_back(info);
        }
    }
    return out;
}

DatasetInfo find_dataset(const std::string& name) {
    std::string known;
    for (const fs::path& p : dataset_files()) {
        if (p.stem().string() == name) return read_dataset_info(p.string());
        known += (known.empty() ? "" : ", ") + p.stem().string();
    }
    throw Error(ExitCode::NoInput, "unknown dataset '" + name + "' in " + dataset_directory() +
                                       " (known: " + (known.empty() ? "none" : known) +
                                       "; see attnspec dataset list)");
}

double selected_bytes(const DatasetSelector& sel, bool need_inputs) {
    const Selection s = select(sel, need_inputs);
    if (s.info.layout == "model") return model_bytes(s, need_inputs);
    // a heads file is read whole (load_attention_heads checks its own declared sizes)
    return s.info.size_bytes;
}

std::vector<SelectedHead> load_selected_heads(const DatasetSelector& sel, bool need_inputs) {
    const Selection s = select(sel, need_inputs);
    if (s.info.layout == "heads") return load_heads_file(s);
    const H5Reader r(s.info.path);
    const std::size_t count = s.layers.size() * s.heads.size() * s.sentences.size();
    r.check_fits(model_bytes(s, need_inputs), "loading --dataset '" + sel.describe() + "' (" +
                                                  std::to_string(count) + " head(s))");
    std::vector<SelectedHead> out;
    out.reserve(count);
    for (int l : s.layers) {
        std::vector<Eigen::MatrixXd> X;
        if (need_inputs)
            for (int t : s.sentences) X.push_back(read_inputs(r, s.info, l, t));
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
        select(one, true);  // range checks
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
