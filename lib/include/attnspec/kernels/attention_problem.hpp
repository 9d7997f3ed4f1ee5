// The inputs of an attention kernel check: Q, K, V (and the kernel's O, LSE) as row-major
// float64 arrays of shape (N, d), (H, N, d) or (B, H, N, d), the mask and the scale, with the
// shape rules of kernels/attention_check.hpp (d_v may differ from d; K and V may have fewer heads
// than Q when their count divides Q's: grouped-query attention). CPU only;
// kernels/attention_problem.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attnspec::kernels {

// A row-major float64 array as a file holds it.
struct Array {
    std::vector<std::int64_t> shape;
    std::vector<double> values;
};

// none: every key is visible. causal: query i sees keys j <= i + (N_k - N_q), the bottom-right
// alignment of FlashAttention >= 2.1 (the usual lower triangle when N_q == N_k); when N_q > N_k
// the first N_q - N_k rows see no key at all (fully masked rows, kernels/attention_check.hpp).
// boolean: AttentionProblem::mask_array M, 1 (true) where query i attends to key j, 0 where not
// (PyTorch SDPA's convention for a bool attn_mask). additive: M_ij is added to the scaled logit,
// s q_i.k_j + M_ij, -inf masking the key (PyTorch SDPA's float attn_mask). Under both a row's
// visible keys need not be a prefix; a row with none is fully masked.
enum class MaskKind { none, causal, boolean, additive };
const char* mask_name(MaskKind m);
MaskKind parse_mask(const std::string& text, const std::string& parameter);

struct AttentionProblem {
    Array q, k, v;
    MaskKind mask = MaskKind::none;
    double scale = 0;  // 0: 1/sqrt(d)
    // boolean and additive masks: M of shape (N_q, N_k), (H, N_q, N_k) or (B, H, N_q, N_k), B
    // and H possibly 1 (broadcast). boolean: values 0 or 1; additive: no NaN, no +inf. Empty
    // for none and causal.
    Array mask_array;
};

// Whether the mask reads AttentionProblem::mask_array.
inline bool general_mask(MaskKind m) { return m == MaskKind::boolean || m == MaskKind::additive; }

// The problem's dimensions: B batches (1 for rank 2 and 3), H query heads (1 for rank 2), H_kv
// key/value heads, N_q queries, N_k keys, d, d_v.
struct ProblemShape {
    long B = 1, H = 1, H_kv = 1, Nq = 0, Nk = 0, d = 0, dv = 0;
    int rank = 2;
    long mask_B = 0, mask_H = 0;  // the mask array's batch and head counts (1: broadcast)
    long kv_head(long h) const { return h / (H / H_kv); }
    // Number of keys query i sees (a prefix 0 .. n-1 of the keys) under none or causal.
    long visible(long i, MaskKind m) const;
    // The offset of row (b, h, i) of the mask array (N_k values). boolean and additive only.
    long mask_row(long b, long h, long i) const {
        return (((mask_B == 1 ? 0 : b) * mask_H + (mask_H == 1 ? 0 : h)) * Nq + i) * Nk;
    }
    // The expected shape of O, (.., N_q, d_v), and of LSE, (.., N_q).
    std::vector<std::int64_t> out_shape() const;
    std::vector<std::int64_t> lse_shape() const;
};

// Checks Q, K, V against each other (same rank 2..4, same B, H divisible by H_kv, equal d, K and
// V with the same N_k, no empty dimension) and returns the dimensions; DataError naming the array
// otherwise. The scale is checked finite and > 0 (parameter "scale"). A boolean or additive mask:
// DataError naming `mask`, its shape and the expected one, or its bad value (boolean: not 0/1;
// additive: NaN or +inf); a mask array under none or causal is refused. O(1), O(size) for a mask.
ProblemShape problem_shape(const AttentionProblem& p);
// The scale used: p.scale, or 1/sqrt(d) when it is 0.
double effective_scale(const AttentionProblem& p, const ProblemShape& s);

// "(2, 128, 64)" as NumPy prints shapes.
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace attnspec::kernels
