// The one input schema for attention heads (reports/SCHEMA.md, "Attention input files") and its
// loader: named heads under /heads/<name>/ or one head at the root, X shared at the root or one X
// per head, optional corrections C_Q, C_K, C_V, logit scale s as an attribute at the root or per
// head. Used by `attnspec jacobian --input` and the embedded heads of `attnspec verify`. HDF5 via
// io/h5.hpp. CPU only.
#pragma once
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec {

// Heads read from one input, each a complete Head (its own copy of X, s, corrections).
struct AttentionHeads {
    std::string source;              // file path (or a description of a generated instance)
    std::vector<std::string> names;  // one per head, in file order
    std::vector<Head> heads;         // heads[h] is the head called names[h]
    bool shared_X = false;           // one X for every head (root /X): the heads form a layer
    bool corrections = false;        // some head carries C_Q, C_K or C_V from the input
    std::string dtype;               // stored type of the input arrays: "float64", "float32" or
                                     // "float32,float64" (empty for a generated input)
    std::size_t size() const { return heads.size(); }
    // True when every head has the same N, D, d and s (one line describes them all).
    bool uniform() const;
    // The heads as one multi-head layer (shared X and s). Copies the weights: O(H D d + N D).
    // Throws DataError when X is not shared or the heads differ in d or s.
    MultiHead multihead() const;
};

// Reads `path` in the attention input schema:
//   heads:  /heads/<name>/{W_Q, W_K, W_V} (D x d), any names, in file order (creation order where
//           the file tracks it, else by name; names that are all decimal integers are ordered
//           numerically), or /W_Q, /W_K, /W_V at the root (one head, named "0");
//   X:      /X (N x D) shared by every head, or /heads/<name>/X per head (not both);
//   C_*:    optional frozen corrections beside the weights (D x d);
//   b_*:    optional biases b_Q, b_K, b_V beside the weights, shape (d,) (Q = X W_Q + 1 b_Q^T);
//   s:      optional attribute `s` per head (wins) or at the root; default 1.
// Arrays may be float32 or float64 (read as double; `dtype` records what was stored).
// Cost: reads every dataset once, O(H (N D + D d)) memory. Throws NoInput for a missing or
// unreadable file, DataError naming the file and dataset for a malformed layout, a wrong shape
// ("/heads/a/W_Q is 12x48, expected 48xd (D = 48 from /X)"; "/heads/a/b_Q has shape (5,),
// expected (4,) ..."), NaN/Inf, s <= 0, a stored type other than float32/float64, or (before
// reading any array) declared arrays whose total exceeds memory_limit_bytes().
AttentionHeads load_attention_heads(const std::string& path);

// The heads of a multi-head layer as AttentionHeads (names "0", "1", ...; shared X). O(H N D).
AttentionHeads attention_heads(const MultiHead& m, const std::string& source);

// One head whose weights W_Q, W_K, W_V (and optional C_Q, C_K, C_V, b_Q, b_K, b_V) are datasets
// under `group` ("" or "/" for the root), on the given X (read by the caller from the dataset
// `x_path`, named in messages) with logit scale `s`. Shapes are checked against X with the dataset
// names in the message. Used by the loader above and by check records (instance/ groups). O(D d)
// reads. Throws DataError (missing dataset, shape, NaN/Inf, s <= 0).
Head read_attention_head(const H5Reader& r, const std::string& group, Eigen::MatrixXd X,
                         const std::string& x_path, double s);

}  // namespace attnspec
