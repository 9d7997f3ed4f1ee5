// Tensor names -> attention heads: the patterns of checkpoint_import.hpp, PyTorch's (out, in)
// weights transposed to attnspec's (D, d) per head, biases split the same way.
#include <algorithm>
#include <map>
#include <regex>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/io/checkpoint_import.hpp"
#include "attnspec/io/json_read.hpp"
#include "tensor_files_internal.hpp"

namespace attnspec {
namespace {

// The tensors of one layer: [weight, bias][q, k, v] (fused timm: slot q holds qkv).
struct LayerNames {
    std::string name[2][3];
};

struct Pattern {
    const char* family;
    std::regex re;
    bool torch_layout;  // (out, in): transpose
};

const std::vector<Pattern>& patterns() {
    static const std::vector<Pattern> p = {
        {"bert",
         std::regex(R"(^(?:\w+\.)*encoder\.layer\.(\d+)\.attention\.self\.(query|key|value)\.)"
                    R"((weight|bias)$)"),
         true},
        {"vit",
         std::regex(R"(^(?:\w+\.)*encoder\.layer\.(\d+)\.attention\.attention\.)"
                    R"((query|key|value)\.(weight|bias)$)"),
         true},
        {"timm", std::regex(R"(^(?:\w+\.)*blocks\.(\d+)\.attn\.(qkv)\.(weight|bias)$)"), true},
        {"plain", std::regex(R"(^(?:layer(\d+)/)?(W|b)_(Q|K|V)$)"), false},
    };
    return p;
}

// Looks like an attention projection (then it must fit a pattern).
bool attention_like(const std::string& name) {
    static const std::regex re(
        R"((^|[./_])(query|key|value|qkv|q_proj|k_proj|v_proj|in_proj_weight|in_proj_bias|)"
        R"(c_attn|W_Q|W_K|W_V|b_Q|b_K|b_V)($|[./]))");
    return std::regex_search(name, re);
}

int slot_of(const std::string& part) {
    return part == "query" || part == "qkv" || part == "Q" ? 0
           : part == "key" || part == "K"                  ? 1
                                                           : 2;
}

std::string first_names(const TensorFile& f, size_t k) {
    std::string s;
    for (size_t i = 0; i < f.entries().size() && i < k; ++i)
        s += (i ? ", " : "") + f.entries()[i].name;
    return s + (f.entries().size() > k ? ", ..." : "");
}

int parse_layer(const std::string& digits, const std::string& name) {
    if (digits.empty()) return 0;
    if (digits.size() > 6) fail_data("tensor '" + name + "' has a layer index out of range");
    return std::stoi(digits);
}

// The attnspec orientation (D x out) of one weight, and its bias; timm's fused tensors are cut
// into q, k, v here.
Eigen::MatrixXd oriented(const Tensor& t, const std::string& name, bool torch, int part,
                         int parts) {
    if (t.shape.size() != 2)
        fail_data("tensor '" + name + "' has shape " + detail::shape_text(t.shape) +
                  ", expected a weight matrix");
    Eigen::MatrixXd M = t.matrix("tensor '" + name + "'");
    if (torch) M.transposeInPlace();
    if (M.cols() % parts != 0)
        fail_data("tensor '" + name + "' has " + std::to_string(M.cols()) +
                  " output features, not divisible into q, k, v");
    const Eigen::Index w = M.cols() / parts;
    return M.middleCols(part * w, w);
}

Eigen::VectorXd bias_part(const Tensor& t, const std::string& name, int part, int parts) {
    if (t.shape.size() != 1) fail_data("tensor '" + name + "' is a bias but not a vector");
    const auto n = static_cast<Eigen::Index>(t.values.size());
    if (n % parts != 0) fail_data("tensor '" + name + "' cannot be split into q, k, v");
    return Eigen::Map<const Eigen::VectorXd>(t.values.data() + part * (n / parts), n / parts);
}

}  // namespace

std::string checkpoint_patterns() {
    return "  BERT (HF)  "
           "[<prefix>.]encoder.layer.<l>.attention.self.{query,key,value}.{weight,bias}\n"
           "  ViT (HF)   [<prefix>.]encoder.layer.<l>.attention.attention.{query,key,value}."
           "{weight,bias}\n"
           "  timm ViT   blocks.<l>.attn.qkv.{weight,bias} (fused q, k, v)\n"
           "  plain npz  [layer<l>/]{W_Q,W_K,W_V,b_Q,b_K,b_V} (already (D, H*d)), [layer<l>/]X\n";
}

CheckpointMap map_checkpoint(const TensorFile& file, int heads, const std::vector<int>& layers,
                             const std::function<void(long, long)>& progress) {
    if (heads < 1) fail_usage("the number of heads must be at least 1", "heads");
    CheckpointMap m;
    std::map<int, LayerNames> found;
    static const std::regex plain_x(R"(^(?:layer(\d+)/)?X$)");
    const Pattern* family = nullptr;
    double elements = 0;
    for (const TensorEntry& e : file.entries()) {
        std::smatch g;
        const Pattern* hit = nullptr;
        for (const Pattern& p : patterns())
            if (std::regex_match(e.name, g, p.re)) {
                hit = &p;
                break;
            }
        if (!hit) {
            if (file.format() == "npz" && std::regex_match(e.name, g, plain_x)) {
                m.inputs.emplace_back(parse_layer(g[1], e.name), e.name);
                continue;
            }
            if (attention_like(e.name))
                fail_data(file.path() + ": tensor '" + e.name +
                          "' looks like an attention projection but fits none of the patterns "
                          "attnspec import understands:\n" +
                          checkpoint_patterns());
            ++m.ignored;
            continue;
        }
        if (family && family != hit)
            fail_data(file.path() + ": tensor '" + e.name + "' is in " + hit->family +
                      " naming, earlier tensors in " + family->family + " naming");
        family = hit;
        const bool plain = std::string(hit->family) == "plain";
        const int layer = parse_layer(g[1], e.name);
        const int kind = plain ? (g[2] == "b") : (g[3] == "bias");
        const int part = slot_of(plain ? g[3] : g[2]);
        if (!layers.empty() && std::find(layers.begin(), layers.end(), layer) == layers.end()) {
            ++m.ignored;
            continue;
        }
        std::string& slot = found[layer].name[kind][part];
        if (!slot.empty())
            fail_data(file.path() + ": tensors '" + slot + "' and '" + e.name +
                      "' both map to the same weight");
        slot = e.name;
        elements += double(e.max_elements);
        ++m.mapped;
    }
    if (!family)
        fail_data(file.path() + ": no attention weights found among its " +
                  std::to_string(file.entries().size()) +
                  " tensors (first: " + first_names(file, 5) + "); attnspec import understands:\n" +
                  checkpoint_patterns());
    for (int l : layers)
        if (!found.count(l))
            fail_data(file.path() + ": layer " + std::to_string(l) +
                          " not found (the checkpoint "
                          "has attention weights for " +
                          std::to_string(found.size()) + " layer(s))",
                      "layers");
    // kept: the weights as read (once) and the head copies; the writer holds a third copy
    check_allocation(3 * 8.0 * elements, memory_limit_bytes(), "importing the attention weights",
                     "max_bytes");
    m.family = family->family;
    m.heads = heads;
    const bool fused = m.family == "timm";
    const long total = m.mapped;
    long done = 0;
    for (const auto& [layer, names] : found) {
        const std::string where = file.path() + ": layer " + std::to_string(layer);
        Eigen::MatrixXd W[3];
        Eigen::VectorXd b[3];
        static const char* kRole[] = {"query", "key", "value"};
        const int tensors = fused ? 1 : 3, split = fused ? 3 : 1;
        int nb = 0;
        for (int src = 0; src < tensors; ++src) {
            const std::string& wn = names.name[0][src];
            if (wn.empty())
                fail_data(where + " lacks its " + (fused ? "qkv" : kRole[src]) + " weight");
            const Tensor t = file.read(wn);
            for (int j = 0; j < split; ++j)
                W[src + j] = oriented(t, wn, family->torch_layout, j, split);
            if (progress) progress(++done, total);
            const std::string& bn = names.name[1][src];
            if (bn.empty()) continue;
            ++nb;
            const Tensor tb = file.read(bn);
            for (int j = 0; j < split; ++j) b[src + j] = bias_part(tb, bn, j, split);
            if (progress) progress(++done, total);
        }
        if (nb != 0 && nb != tensors)
            fail_data(where + " has " + std::to_string(nb) +
                      " of the three biases: give all of q, k, v or none");
        const bool biased = b[0].size() > 0;
        if (m.D == 0) m.D = W[0].rows(), m.biases = biased;
        const auto dims = [](const Eigen::MatrixXd& M) {
            return std::to_string(M.rows()) + "x" + std::to_string(M.cols());
        };
        for (int k = 0; k < 3; ++k) {
            if (W[k].rows() != W[0].rows() || W[k].cols() != W[0].cols())
                fail_data(where + ": the " + kRole[k] + " weight is " + dims(W[k]) +
                          " as (D, H*d), the query weight " + dims(W[0]));
            if (biased && b[k].size() != W[k].cols())
                fail_data(where + ": the " + kRole[k] + " bias has " + std::to_string(b[k].size()) +
                          " entries, its weight " + std::to_string(W[k].cols()) +
                          " output features");
        }
        if (W[0].rows() != m.D)
            fail_data(where + " has D = " + std::to_string(W[0].rows()) + " input features, " +
                      "earlier layers " + std::to_string(m.D));
        if (biased != m.biases) fail_data(where + ": biases present in some layers, not in others");
        const Eigen::Index out = W[0].cols();
        if (out % heads != 0)
            fail_data(where + ": " + std::to_string(out) +
                          " output features (D = " + std::to_string(m.D) +
                          ") are not divisible by H = " + std::to_string(heads) + " heads",
                      "heads");
        m.d = out / heads;
        ImportedLayer il;
        il.source = layer;
        for (int h = 0; h < heads; ++h) {
            HeadWeights hw;
            hw.W_Q = W[0].middleCols(h * m.d, m.d);
            hw.W_K = W[1].middleCols(h * m.d, m.d);
            hw.W_V = W[2].middleCols(h * m.d, m.d);
            if (biased) {
                hw.b_Q = b[0].segment(h * m.d, m.d);
                hw.b_K = b[1].segment(h * m.d, m.d);
                hw.b_V = b[2].segment(h * m.d, m.d);
            }
            il.heads.push_back(std::move(hw));
        }
        m.layers.push_back(std::move(il));
    }
    return m;
}

ModelConfig read_model_config(const std::string& config_path) {
    const detail::ByteFile f(config_path);
    if (f.size() > (16u << 20)) fail_data(config_path + ": larger than 16 MiB, not a config.json");
    const JsonValue v = parse_json(f.read(0, f.size()), config_path);
    ModelConfig c;
    if (v.kind != JsonValue::Object) fail_data(config_path + ": not a JSON object");
    if (const JsonValue* n = v.find("_name_or_path"); n && n->kind == JsonValue::String)
        c.name = n->text;
    for (const char* key : {"num_attention_heads", "num_heads"})
        if (const JsonValue* h = v.find(key)) {
            std::uint64_t u = 0;
            if (!h->as_uint64(u) || u < 1 || u > 1000000)
                fail_data(config_path + ": " + key + " is not a positive integer");
            c.heads = static_cast<int>(u);
            break;
        }
    return c;
}

}  // namespace attnspec
