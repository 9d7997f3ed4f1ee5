// Named datasets and the model input schema (reports/SCHEMA.md, "Model input files"): a trained
// model's attention layers, with biases, on a fixed set of sentences, e.g.
// datasets/embedded/minilm-l6.h5 (all-MiniLM-L6-v2). Also the dataset catalogue behind
// `attnspec dataset list|show` and the selector `--dataset NAME[:layer[:head[:sentence]]]`.
// HDF5 via io/h5.hpp. CPU only. Implemented in lib/src/io/model_catalogue.cpp (selector,
// catalogue) and lib/src/io/model_input.cpp (loader).
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
    bool has_inputs = false;                 // X present (a model file may hold weights only)
    std::string validation;                  // root attribute `validation` (model files), if any
    double size_bytes = 0;                   // file size on disk
    std::string problem;  // list_datasets(): why the file could not be catalogued (else empty)
};

// Where named datasets live: $ATTNSPEC_DATASETS if set, else the source tree's datasets/embedded
// (compiled in). Every *.h5 there is a dataset named by its stem.
std::string dataset_directory();
// Every dataset of dataset_directory(), by name; a file that cannot be catalogued is listed with
// `problem` set (the rest of the entry may be partial). Throws NoInput when the directory is
// missing. Reads root attributes, shapes and /sentences only.
std::vector<DatasetInfo> list_datasets();
// The catalogue entry of one file (throws NoInput / DataError like H5Reader, DataError for a
// file in neither layout).
DatasetInfo read_dataset_info(const std::string& path);
// Resolves a name to its file; throws NoInput (66) listing the known names.
DatasetInfo find_dataset(const std::string& name);

// One selected head on one sentence, ready to compute with (X, W_*, b_*, s of the model).
struct SelectedHead {
    int layer = 0, head = 0, sentence = 0;
    std::string label;  // "minilm-l6:L2:H5:S0"
    std::string group;  // the HDF5 group of its weights in the file ("/layers/2/heads/5")
    Head head_input;
};
// Every (layer, head, sentence) the selector names, in layer, head, sentence order. Checks the
// declared sizes against memory_limit_bytes() before reading. Throws DataError (65) for a
// malformed file or an index out of range ("layer 7 out of range: minilm-l6 has 6 layers").
// need_inputs = false reads weights and biases only (X left empty, one entry per layer and head,
// sentence 0, label without ":S"): it works on weight-only files and refuses a sentence part.
// With need_inputs, a model file without /layers/<l>/inputs is refused (DataError "minilm-x:
// layer 0 has no inputs (weights only); ..."). A heads-layout file has one layer (0) and no
// sentence part (Usage when one is given). Cost: O(sum of the selected arrays).
std::vector<SelectedHead> load_selected_heads(const DatasetSelector& sel, bool need_inputs = true);
// The same from the catalogue entry of sel.name (find_dataset's, read once by the caller): no
// catalogue scan, and the file opened once. For callers loading many units of one dataset
// (the real-model analysis loads one head per unit).
std::vector<SelectedHead> load_selected_heads(const DatasetInfo& entry, const DatasetSelector& sel,
                                              bool need_inputs = true);
// Memory the selection would take once loaded (bytes, from declared shapes; reads no array).
double selected_bytes(const DatasetSelector& sel, bool need_inputs = true);
// The selection as AttentionHeads: names = the labels, shared_X when every selected head is on the
// same X (one layer, one sentence), source = the selector, dtype = the file's.
AttentionHeads selected_attention_heads(const DatasetSelector& sel);
// Q = X W_Q + 1 b_Q^T and K = X W_K + 1 b_K^T of a head at its effective weights W + C (an empty
// bias adds nothing): the real queries and keys InfSA is built from. O(N D d).
void head_qk(const Head& h, Eigen::MatrixXd& Q, Eigen::MatrixXd& K);
// The heads of one layer sharing the X of one sentence (a multi-head layer, biases kept). Only
// sel.name is used. Names are the head indices "0", "1", ...
AttentionHeads load_model_layer(const DatasetSelector& sel, int layer, int sentence);

}  // namespace attnspec
