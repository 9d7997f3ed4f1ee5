// `attnspec import`: a user's checkpoint (safetensors or .npz, io/tensor_files.hpp) converted into
// the model input schema (io/model_input.hpp; reports/SCHEMA.md, "Files written by attnspec
// import"). Recognised tensor names (<l> a decimal layer index):
//   BERT (HF)   [<prefix>.]encoder.layer.<l>.attention.self.{query,key,value}.{weight,bias}
//   ViT (HF)    [<prefix>.]encoder.layer.<l>.attention.attention.{query,key,value}.{weight,bias}
//   timm ViT    blocks.<l>.attn.qkv.{weight,bias}          (fused: rows q, then k, then v)
//   plain       [layer<l>/]{W_Q,W_K,W_V,b_Q,b_K,b_V}        (.npz; no prefix = layer 0)
// The first three store PyTorch's Linear layout, weight (out, in) = (H d, D), Q = X weight^T + b;
// plain arrays are already (D, H d), Q = X W_Q + b_Q. Heads are the consecutive blocks of d
// output features. Other tensors (embeddings, MLP, LayerNorm) are ignored; a name that looks like
// an attention projection but fits no pattern is refused. CPU only.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/io/tensor_files.hpp"

namespace attnspec {

// The heads of one layer as the checkpoint defines them.
struct ImportedLayer {
    int source = 0;  // the layer index in the checkpoint
    std::vector<HeadWeights> heads;
};

struct CheckpointMap {
    std::string family;  // "bert", "vit", "timm" or "plain"
    std::vector<ImportedLayer> layers;
    Eigen::Index D = 0, d = 0;
    int heads = 0;
    bool biases = false;
    int mapped = 0, ignored = 0;  // tensors used / ignored
    // plain .npz only: hidden states stored beside the weights, [layer<l>/]X -> (source layer,
    // array name), used as sentence 0 of that layer when no --inputs file is given.
    std::vector<std::pair<int, std::string>> inputs;
};

// The patterns above, one per line, for error messages and --help.
std::string checkpoint_patterns();

// Maps, transposes and splits the attention weights of `file` into `heads` heads per layer.
// `layers` selects source layers (empty: all). DataError (65): a tensor that looks like attention
// but fits no pattern (named, with the patterns), nothing mapped (the first tensor names seen), a
// layer missing one of q/k/v or with only some biases, shapes that disagree, out features not
// divisible by `heads` (naming both), a requested layer absent.
CheckpointMap map_checkpoint(const TensorFile& file, int heads, const std::vector<int>& layers,
                             const std::function<void(long, long)>& progress = {});

// What a Hugging Face config.json says: num_attention_heads (or num_heads) and _name_or_path.
// DataError (65) for malformed JSON or a head count that is not a positive integer.
struct ModelConfig {
    std::optional<int> heads;
    std::string name;
};
ModelConfig read_model_config(const std::string& config_path);

struct ImportOptions {
    std::string checkpoint, out, inputs;  // inputs: "" = weights only
    int heads = 0;                        // 0: from config.json beside the checkpoint
    std::vector<int> layers;              // source layers; empty = all
    std::optional<double> scale;          // default 1/sqrt(d)
    std::string name, licence, command_line;
    std::function<void(long, long)> progress;  // (done, total) tensors; may be empty
};

struct ImportSummary {
    std::string format, family, sha256, heads_from, inputs;  // inputs: "none" or the file
    CheckpointMap map;  // weights dropped after writing: layers hold sources only
    double s = 1.0;
    std::vector<int> sentences;  // per written layer (0 without inputs)
    double seconds = 0;
    long long bytes = 0;  // size of the written file
};

// Reads, maps and writes `o.out` atomically (ReportWriter: temp + rename; the target is checked
// first with check_output_target). Usage (64): heads unknown. Errors of map_checkpoint and the
// readers pass through; an --inputs array with the wrong width or a layer not imported -> 65.
ImportSummary import_checkpoint(const ImportOptions& o);

}  // namespace attnspec
