// Tensor names -> attention heads: the patterns of checkpoint_import.hpp, PyTorch's (out, in)
// weights transposed to attnspec's (D, d) per head, biases split the same way.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

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

// Tensor names longer than this are refused before any matching (no real checkpoint comes near;
// the matching below is linear, the cap keeps error lines short).
constexpr std::size_t kMaxNameLength = 1024;

// The names understood, in one line for error messages (docs/cli/import.md has the table).
constexpr const char kUnderstood[] =
    "[<prefix>.]encoder.layer.<l>.attention.{self,attention}.{query,key,value}.{weight,bias} "
    "(BERT, ViT), blocks.<l>.attn.qkv.{weight,bias} (timm), "
    "[layer<l>/]{W_Q,W_K,W_V,b_Q,b_K,b_V} (plain npz)";

// One naming family, matched without regular expressions (std::regex recurses once per
// character and overflowed the stack on names of some 10^4 characters): a torch-style name is
// split at '.' and its last components compared with `tail`; the plain layout is matched by hand
// (match_plain). Linear in the name's length.
struct Pattern {
    const char* family;
    std::vector<std::string> tail;  // the components after the optional [<prefix>.] part
    bool torch_layout;              // (out, in): transpose
};

// What a match yields: the layer digits (empty: none), the weight/bias kind and the q/k/v part.
struct NameMatch {
    std::string layer, kind, part;
};

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool all_digits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
bool is_word(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), is_word_char);
}
bool one_of(const std::string& s, std::initializer_list<const char*> words) {
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return s == w; });
}

std::vector<std::string> split_at(const std::string& s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        const size_t at = s.find(sep, start);
        out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
        if (at == std::string::npos) return out;
        start = at + 1;
    }
}

const std::vector<Pattern>& patterns() {
    // tail entries: a literal, "#" (layer digits), "qkv-role" (query|key|value), "wb"
    // (weight|bias); every component before the tail must be a non-empty word ([<prefix>.]).
    static const std::vector<Pattern> p = {
        {"bert", {"encoder", "layer", "#", "attention", "self", "qkv-role", "wb"}, true},
        {"vit", {"encoder", "layer", "#", "attention", "attention", "qkv-role", "wb"}, true},
        {"timm", {"blocks", "#", "attn", "qkv", "wb"}, true},
    };
    return p;
}

// A torch-style family: [<word>.]* then the tail, components separated by '.'.
bool match_torch(const std::vector<std::string>& parts, const Pattern& p, NameMatch& m) {
    if (parts.size() < p.tail.size()) return false;
    const size_t prefix = parts.size() - p.tail.size();
    for (size_t i = 0; i < prefix; ++i)
        if (!is_word(parts[i])) return false;
    NameMatch out;
    for (size_t i = 0; i < p.tail.size(); ++i) {
        const std::string& want = p.tail[i];
        const std::string& got = parts[prefix + i];
        if (want == "#") {
            if (!all_digits(got)) return false;
            out.layer = got;
        } else if (want == "qkv-role") {
            if (!one_of(got, {"query", "key", "value"})) return false;
            out.part = got;
        } else if (want == "wb") {
            if (!one_of(got, {"weight", "bias"})) return false;
            out.kind = got;
        } else if (got != want) {
            return false;
        } else if (want == "qkv") {
            out.part = got;
        }
    }
    m = out;
    return true;
}

// The plain layout: [layer<l>/]<leaf>; `leaf` is the name after the optional layer part, the
// layer digits (empty when absent) go to `layer`. False when the layer part is malformed.
bool split_plain(const std::string& name, std::string& layer, std::string& leaf) {
    const size_t slash = name.find('/');
    if (slash == std::string::npos) {
        layer.clear(), leaf = name;
        return true;
    }
    const std::string head = name.substr(0, slash);
    if (head.compare(0, 5, "layer") != 0 || !all_digits(head.substr(5))) return false;
    layer = head.substr(5), leaf = name.substr(slash + 1);
    return true;
}

// [layer<l>/](W|b)_(Q|K|V)
bool match_plain(const std::string& name, NameMatch& m) {
    std::string layer, leaf;
    if (!split_plain(name, layer, leaf) || leaf.size() != 3 || leaf[1] != '_') return false;
    if ((leaf[0] != 'W' && leaf[0] != 'b') || (leaf[2] != 'Q' && leaf[2] != 'K' && leaf[2] != 'V'))
        return false;
    m = {layer, std::string(1, leaf[0]), std::string(1, leaf[2])};
    return true;
}

// [layer<l>/]X: the layer digits (empty when absent) in `layer`.
bool match_plain_x(const std::string& name, std::string& layer) {
    std::string leaf;
    return split_plain(name, layer, leaf) && leaf == "X";
}

// The family `name` belongs to (nullptr: none) and its parts; linear in the name's length.
const Pattern* match_family(const std::string& name, NameMatch& m) {
    static const Pattern plain{"plain", {}, false};
    if (match_plain(name, m)) return &plain;
    const std::vector<std::string> parts = split_at(name, '.');
    for (const Pattern& p : patterns())
        if (match_torch(parts, p, m)) return &p;
    return nullptr;
}

// Looks like an attention projection (then it must fit a pattern): one of the words below,
// preceded by the start or one of . / _ and followed by the end or one of . /
bool attention_like(const std::string& name) {
    static const char* const words[] = {
        "query",        "key",    "value", "qkv", "q_proj", "k_proj", "v_proj", "in_proj_weight",
        "in_proj_bias", "c_attn", "W_Q",   "W_K", "W_V",    "b_Q",    "b_K",    "b_V"};
    const auto sep_before = [](char c) { return c == '.' || c == '/' || c == '_'; };
    const auto sep_after = [](char c) { return c == '.' || c == '/'; };
    for (const char* w : words) {
        const size_t n = std::strlen(w);
        for (size_t at = name.find(w); at != std::string::npos; at = name.find(w, at + 1))
            if ((at == 0 || sep_before(name[at - 1])) &&
                (at + n == name.size() || sep_after(name[at + n])))
                return true;
    }
    return false;
}

// "<first 60 characters>... (N characters)" for a name too long to echo whole.
std::string short_name(const std::string& name) {
    if (name.size() <= 120) return name;
    return name.substr(0, 60) + "... (" + std::to_string(name.size()) + " characters)";
}

// "0,1,2" (the first 20, then ",...").
std::string layer_list(const std::set<int>& layers) {
    std::string s;
    int n = 0;
    for (int l : layers) {
        if (n++ == 20) return s + ",...";
        s += (s.empty() ? "" : ",") + std::to_string(l);
    }
    return s;
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
    std::set<int> all_layers;  // every layer with attention weights, selected or not
    const Pattern* family = nullptr;
    double elements = 0;
    for (const TensorEntry& e : file.entries()) {
        if (e.name.size() > kMaxNameLength)
            fail_data(file.path() + ": tensor '" + short_name(e.name) +
                      "' has a name longer than " + std::to_string(kMaxNameLength) +
                      " characters: not a checkpoint attnspec "
                      "import reads");
        NameMatch g;
        const Pattern* hit = match_family(e.name, g);
        if (!hit) {
            std::string x_layer;
            if (file.format() == "npz" && match_plain_x(e.name, x_layer)) {
                m.inputs.emplace_back(parse_layer(x_layer, e.name), e.name);
                continue;
            }
            if (attention_like(e.name))
                fail_data(file.path() + ": tensor '" + e.name +
                          "' looks like an attention projection but fits none of the naming "
                          "patterns attnspec import understands: " +
                          kUnderstood);
            ++m.ignored;
            continue;
        }
        if (family && family != hit)
            fail_data(file.path() + ": tensor '" + e.name + "' is in " + hit->family +
                      " naming, earlier tensors in " + family->family + " naming");
        family = hit;
        const int layer = parse_layer(g.layer, e.name);
        const int kind = g.kind == "b" || g.kind == "bias";
        const int part = slot_of(g.part);
        all_layers.insert(layer);
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
                  " tensors (first: " + first_names(file, 5) +
                  "); the naming patterns attnspec import understands: " + kUnderstood);
    for (int l : layers)
        if (!found.count(l))
            fail_data(file.path() + ": layer " + std::to_string(l) +
                          " not found (the checkpoint has attention weights for " +
                          std::to_string(all_layers.size()) +
                          " layer(s): " + layer_list(all_layers) + ")",
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
            if (const auto shape = file.declared_shape(wn); shape.size() != 2)
                fail_data("tensor '" + wn + "' has shape " + detail::shape_text(shape) +
                          ", expected a weight matrix");  // before its data are read
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
        if (W[0].rows() == 0 || W[0].cols() == 0)
            fail_data(where + ": the query weight is " + std::to_string(W[0].rows()) + "x" +
                      std::to_string(W[0].cols()) +
                      " as (D, H*d): empty (D and H*d must be at least 1)");
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
