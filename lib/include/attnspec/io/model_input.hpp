// Named datasets and the model input schema (reports/SCHEMA.md, "Model input files"): a trained
// model's attention layers, with biases, on a fixed set of sentences, e.g.
// datasets/embedded/minilm-l6.h5 (all-MiniLM-L6-v2). Also the dataset catalogue behind
// `attnspec dataset list|show` and the selector `--dataset NAME[:layer[:head[:sentence]]]`.
// HDF5 via io/h5.hpp. CPU only.
//
// Model file layout (h5py shapes, row-major; float32 or float64):
//   root attributes  kind = "attnspec-input", layout = "model", name, model, origin, licence,
//                    description, regenerate (the command that rebuilds the file), s (logit scale
//                    of the model, 1/sqrt(d) for BERT-style heads)
//   /sentences/text            (S,) UTF-8 strings
//   /sentences/n_tokens        (S,) int64
//   /sentences/tokens/<s>      (N_s,) strings: the WordPiece tokens, [CLS] ... [SEP]
//   /layers/<l>/heads/<h>/W_Q, W_K, W_V   (D, d)  (already transposed from PyTorch's (out, in))
//   /layers/<l>/heads/<h>/b_Q, b_K, b_V   (d,)
//   /layers/<l>/inputs/<s>     (N_s, D): the hidden states entering layer l for sentence s
//   <l>, <h>, <s> are decimal integers from 0.
// A file in the single-layer schema of attention_input.hpp is a dataset too (one layer, its own
// sentences: X shared or per head).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/io/attention_input.hpp"

namespace attnspec {

// NAME[:layer[:head[:sentence]]]; an omitted or '*' part means "all". Parse throws Usage naming
// the selector ("--dataset 'minilm-l6:x' : layer must be an integer or '*'").
struct DatasetSelector {
    std::string name;
    std::optional<int> layer, head, sentence;
    static DatasetSelector parse(const std::string& text);
    std::string describe() const;  // inverse of parse ("minilm-l6:2:*:0")
};

// Catalogue entry, read from the file's root attributes (nothing else is read).
struct DatasetInfo {
    std::string name, path, layout;  // layout: "model" or "heads"
    std::string model, origin, licence, description, regenerate;
    int layers = 0, heads = 0, sentences = 0;  // per layer for heads; 1 layer for a heads file
    Eigen::Index D = 0, d = 0;
    double s = 1.0;
    std::string dtype;
    std::vector<std::string> sentence_text;  // model files
    std::vector<Eigen::Index> n_tokens;      // model files
};

// Where named datasets live: $ATTNSPEC_DATASETS if set, else the source tree's datasets/embedded
// (compiled in). Every *.h5 there is a dataset named by its stem.
std::string dataset_directory();
std::vector<DatasetInfo> list_datasets();
// Resolves a name to its file; throws NoInput (66) listing the known names.
DatasetInfo find_dataset(const std::string& name);

// One selected head on one sentence, ready to compute with (X, W_*, b_*, s of the model).
struct SelectedHead {
    int layer = 0, head = 0, sentence = 0;
    std::string label;  // "minilm-l6:L2:H5:S0"
    Head head_input;
};
// Every (layer, head, sentence) the selector names, in layer, head, sentence order. Checks the
// declared sizes against memory_limit_bytes() before reading. Throws DataError (65) for a
// malformed file or an index out of range ("layer 7 out of range: minilm-l6 has 6 layers").
std::vector<SelectedHead> load_selected_heads(const DatasetSelector& sel);
// The heads of one layer sharing the X of one sentence (a multi-head layer, biases kept).
AttentionHeads load_model_layer(const DatasetSelector& sel, int layer, int sentence);

}  // namespace attnspec
