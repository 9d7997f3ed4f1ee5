// import_checkpoint: heads from --heads or config.json, the checkpoint mapped (checkpoint_map.cpp),
// hidden states from --inputs, and the model-schema file written atomically by ReportWriter.
#include "attnspec/io/checkpoint_import.hpp"

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <map>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/sha256.hpp"
#include "attnspec/io/report_writer.hpp"
#include "tensor_files_internal.hpp"

namespace attnspec {
namespace {

std::string directory_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string stem(const std::string& path) {
    const std::string b = base_name(path);
    const size_t dot = b.rfind('.');
    return dot == std::string::npos || dot == 0 ? b : b.substr(0, dot);
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// (source layer, sentence) -> hidden states (N, D), from `path` or, for a plain .npz checkpoint,
// from its own [layer<l>/]X arrays.
using Inputs = std::map<int, std::map<int, Eigen::MatrixXd>>;

// One (N, D) array of hidden states, N >= 1 tokens.
// Checked on the declared shape (the header) before the data are read, and again after.
Eigen::MatrixXd hidden_states(const TensorFile& f, const std::string& name, Eigen::Index D) {
    const std::string what = f.path() + ": array '" + name + "'";
    const auto check = [&](const std::vector<std::int64_t>& shape) {
        if (shape.size() != 2 || shape[0] < 1 || shape[1] != D)
            fail_data(what + " has shape " + detail::shape_text(shape) + ", expected (N, " +
                      std::to_string(D) + ") with N >= 1 tokens (D = " + std::to_string(D) +
                      " from the checkpoint)");
    };
    check(f.declared_shape(name));
    const Tensor t = f.read(name);
    check(t.shape);
    return t.matrix(what);
}

// layer<l>_sentence<s>, each number of 1 to 6 digits.
bool per_layer_name(const std::string& name, int& layer, int& sentence) {
    const auto number = [&name](size_t from, size_t to, int& out) {
        if (to <= from || to - from > 6) return false;
        for (size_t i = from; i < to; ++i)
            if (name[i] < '0' || name[i] > '9') return false;
        out = std::stoi(name.substr(from, to - from));
        return true;
    };
    const std::string mid = "_sentence";
    if (name.compare(0, 5, "layer") != 0) return false;
    const size_t at = name.find(mid, 5);
    return at != std::string::npos && number(5, at, layer) &&
           number(at + mid.size(), name.size(), sentence);
}

Inputs read_inputs(const std::string& path, const CheckpointMap& m) {
    Inputs in;
    const auto f = open_tensor_file(path);
    std::vector<std::pair<std::pair<int, int>, std::string>> wanted;
    bool shared = false;
    for (const TensorEntry& e : f->entries()) {
        int layer = 0, sentence = 0;
        if (e.name == "X")
            shared = true;
        else if (per_layer_name(e.name, layer, sentence))
            wanted.push_back({{layer, sentence}, e.name});
        else
            fail_data(path + ": array '" +
                      (e.name.size() > 120 ? e.name.substr(0, 60) + "... (" +
                                                 std::to_string(e.name.size()) + " characters)"
                                           : e.name) +
                      "' is neither X nor layer<l>_sentence<s> (hidden states entering layer l)");
    }
    if (shared && !wanted.empty())
        fail_data(path + ": holds both X and layer<l>_sentence<s> arrays; give one or the other");
    if (shared)
        for (const ImportedLayer& l : m.layers) wanted.push_back({{l.source, 0}, "X"});
    for (const auto& [key, name] : wanted) {
        bool imported = false;
        for (const ImportedLayer& l : m.layers) imported = imported || l.source == key.first;
        if (!imported) continue;  // a layer not selected by --layers
        in[key.first][key.second] = hidden_states(*f, name, m.D);
    }
    if (in.empty()) {
        std::string layers;
        for (const ImportedLayer& l : m.layers)
            layers += (layers.empty() ? "" : ",") + std::to_string(l.source);
        fail_data(path + ": no hidden states for the imported layers " + layers + " (" +
                  (f->entries().empty() ? std::string("it holds no arrays")
                                        : std::to_string(f->entries().size()) +
                                              " array(s), none X or layer<l>_sentence<s> for "
                                              "these layers") +
                  ")");
    }
    return in;
}

Inputs inputs_in_checkpoint(const TensorFile& f, const CheckpointMap& m) {
    Inputs in;
    for (const auto& [layer, name] : m.inputs)
        for (const ImportedLayer& l : m.layers)
            if (l.source == layer) {
                in[layer][0] = hidden_states(f, name, m.D);
            }
    return in;
}

// Sentences are numbered from 0 without gaps, and sentence s has the same N in every layer.
std::vector<Eigen::Index> sentence_lengths(const Inputs& in, const std::string& from) {
    std::vector<Eigen::Index> n;
    for (const auto& [layer, sentences] : in)
        for (const auto& [s, X] : sentences) {
            if (s > static_cast<int>(sentences.size()) - 1)
                fail_data(from + ": layer " + std::to_string(layer) + " has sentence " +
                          std::to_string(s) + " but not all sentences before it");
            if (static_cast<size_t>(s) >= n.size()) n.resize(s + 1, -1);
            if (n[s] >= 0 && n[s] != X.rows())
                fail_data(from + ": sentence " + std::to_string(s) + " has " +
                          std::to_string(X.rows()) + " tokens in layer " + std::to_string(layer) +
                          ", " + std::to_string(n[s]) + " in an earlier layer");
            n[s] = X.rows();
        }
    return n;
}

}  // namespace

namespace {

void write_model_file(const ImportOptions& o, const ImportSummary& sum, const Inputs& in,
                      const std::vector<Eigen::Index>& n_tokens, const ModelConfig& cfg) {
    const CheckpointMap& m = sum.map;
    Provenance prov;
    prov.command_line = o.command_line;
    ReportWriter w(o.out, prov);
    H5Group& root = w.root();
    const std::string model = cfg.name.empty() ? base_name(o.checkpoint) : cfg.name;
    std::string sources;
    for (const ImportedLayer& l : m.layers)
        sources += (sources.empty() ? "" : ",") + std::to_string(l.source);
    root.attr("kind", "attnspec-input");
    root.attr("layout", "model");
    root.attr("name", o.name.empty() ? stem(o.out) : o.name);
    root.attr("model", model);
    root.attr("origin", o.checkpoint + " (sha256 " + sum.sha256 + ")");
    root.attr("licence", o.licence.empty() ? "unknown (user checkpoint)" : o.licence);
    root.attr("description",
              "attention heads of " + model + " imported from a " + sum.format + " checkpoint (" +
                  m.family + " naming; " + std::to_string(m.layers.size()) + " layer(s) x " +
                  std::to_string(m.heads) + " heads, D = " + std::to_string(m.D) +
                  ", d = " + std::to_string(m.d) + (m.biases ? ", with biases" : ", no biases") +
                  "); hidden states: " + sum.inputs);
    root.attr("regenerate", o.command_line);
    root.attr("s", sum.s);
    root.attr("inputs", sum.inputs);
    root.attr("source_format", sum.format);
    root.attr("source_naming", m.family);
    root.attr("source_layers", sources);
    root.attr("heads_from", sum.heads_from);
    H5Group layers = root.group("layers");
    for (size_t i = 0; i < m.layers.size(); ++i) {
        const ImportedLayer& l = m.layers[i];
        H5Group lg = layers.group(std::to_string(i));
        lg.attr("source_layer", l.source);
        H5Group heads = lg.group("heads");
        for (size_t h = 0; h < l.heads.size(); ++h) {
            const HeadWeights& hw = l.heads[h];
            H5Group hg = heads.group(std::to_string(h));
            hg.write("W_Q", hw.W_Q), hg.write("W_K", hw.W_K), hg.write("W_V", hw.W_V);
            if (m.biases)
                for (const auto& [name, b] :
                     {std::pair<const char*, const Eigen::VectorXd*>{"b_Q", &hw.b_Q},
                      {"b_K", &hw.b_K},
                      {"b_V", &hw.b_V}})
                    hg.write(name, std::vector<double>(b->data(), b->data() + b->size()));
        }
        const auto it = in.find(l.source);
        if (it == in.end()) continue;
        H5Group ig = lg.group("inputs");
        for (const auto& [s, X] : it->second) ig.write(std::to_string(s), X);
    }
    if (!n_tokens.empty()) {
        H5Group sg = root.group("sentences");
        std::vector<std::string> text;
        std::vector<std::int64_t> n;
        for (size_t s = 0; s < n_tokens.size(); ++s) {
            text.push_back("sentence " + std::to_string(s) + " of " + sum.inputs +
                           " (hidden states only; no text)");
            n.push_back(static_cast<std::int64_t>(n_tokens[s]));
        }
        sg.write("text", text);
        sg.write("n_tokens", n);
    }
    w.commit();
}

}  // namespace

ImportSummary import_checkpoint(const ImportOptions& o) {
    const auto t0 = std::chrono::steady_clock::now();
    ImportSummary sum;
    check_output_target(o.out, {o.checkpoint, o.inputs.empty() ? o.checkpoint : o.inputs});
    const auto file = open_tensor_file(o.checkpoint);
    const std::string config = directory_of(o.checkpoint) + "/config.json";
    const ModelConfig cfg = file_exists(config) ? read_model_config(config) : ModelConfig{};
    int heads = o.heads;
    sum.heads_from = "--heads";
    if (heads == 0) {
        if (!cfg.heads)
            fail_usage(
                "the number of heads is unknown: give --heads H (no num_attention_heads in "
                "a config.json beside '" +
                    o.checkpoint + "')",
                "heads");
        heads = *cfg.heads;
        sum.heads_from = config;
    }
    sum.format = file->format();
    sum.sha256 = sha256_file_hex(o.checkpoint);
    sum.map = map_checkpoint(*file, heads, o.layers, o.progress);
    CheckpointMap& m = sum.map;
    sum.family = m.family;
    if (o.scale && !(*o.scale > 0 && std::isfinite(*o.scale)))
        fail_usage("the logit scale must be a positive finite number", "scale");
    sum.s = o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(m.d));
    Inputs in;
    if (!o.inputs.empty()) {
        in = read_inputs(o.inputs, m);
        sum.inputs = o.inputs;
    } else if (!m.inputs.empty()) {
        in = inputs_in_checkpoint(*file, m);
        sum.inputs = o.checkpoint;
    }
    if (in.empty()) sum.inputs = "none";
    const auto n_tokens = sentence_lengths(in, sum.inputs);
    for (const ImportedLayer& l : m.layers)
        sum.sentences.push_back(in.count(l.source) ? static_cast<int>(in.at(l.source).size()) : 0);
    write_model_file(o, sum, in, n_tokens, cfg);
    for (ImportedLayer& l : m.layers) l.heads.clear();
    struct stat st {};
    if (::stat(o.out.c_str(), &st) == 0) sum.bytes = static_cast<long long>(st.st_size);
    sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return sum;
}

}  // namespace attnspec
