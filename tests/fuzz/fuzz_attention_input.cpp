// libFuzzer target: the attention input schema (io/attention_input: load_attention_heads, as read
// by `attnspec jacobian --input` and the embedded heads of `verify`). Structure-aware: the input
// first chooses a valid layout (one head at the root or named heads under /heads, X shared or per
// head, corrections, logit scale s) with shapes N, D, d <= 5, then up to 8 hostile mutations
// (support/h5_builder.hpp). Oracle: the loader returns or throws attnspec::Error with a
// documented code (support/fuzz_support.hpp).
#include <cstddef>
#include <cstdint>

#include "attnspec/io/attention_input.hpp"
#include "h5_builder.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

namespace {

void build(hid_t f, Input& in) {
    const unsigned layout = in.byte();
    const hsize_t N = 1 + in.pick(5), D = 1 + in.pick(5), d = 1 + in.pick(5);
    const bool named = layout & 1u, shared_x = layout & 2u, corr = layout & 4u, s = layout & 8u;
    if (!named) {
        write_matrix(f, "/X", N, D, in);
        for (const char* w : {"/W_Q", "/W_K", "/W_V"}) write_matrix(f, w, D, d, in);
        if (corr) write_matrix(f, "/C_Q", D, d, in);
        if (s) write_double_attr(f, "/", "s", in.number());
        return;
    }
    if (shared_x) write_matrix(f, "/X", N, D, in);
    const char* names[] = {"a", "b", "10", "2"};
    const std::size_t heads = 1 + in.pick(4);
    for (std::size_t h = 0; h < heads; ++h) {
        const std::string g = std::string("/heads/") + names[h];
        make_group(f, g);
        if (!shared_x) write_matrix(f, g + "/X", N, D, in);
        for (const char* w : {"/W_Q", "/W_K", "/W_V"}) write_matrix(f, g + w, D, d, in);
        if (corr) write_matrix(f, g + "/C_K", D, d, in);
        if (s && in.flag()) write_double_attr(f, g, "s", in.number());
    }
    if (s && in.flag()) write_double_attr(f, "/", "s", 0.5);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_common();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input in(data, size);
    const std::string path = temp_path("attention.h5");
    {
        H5File f = H5File::create(path);
        if (!f.ok()) return 0;
        build(f.id(), in);
        mutate(f.id(), in,
               {"X", "W_Q", "W_K", "W_V", "C_Q", "C_K", "C_V", "b_Q", "b_K", "b_V", "heads", "a",
                "b", "0", "1", "s"},
               8);
    }
    expect_documented("load_attention_heads", [&] {
        const AttentionHeads h = load_attention_heads(path);
        if (h.shared_X && h.uniform()) (void)h.multihead();
    });
    return 0;
}
