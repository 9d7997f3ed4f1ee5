// libFuzzer target: Q/K input files (io/qk_input: load_qk_input, as read by `attnspec neumann
// --input` and `attnspec fidelity --input`). Structure-aware: a valid file (Q, K of N x heads*d_h,
// optional V, A_hat, gamma) with N, columns <= 6, then up to 8 hostile mutations; the loader
// options (heads, read_v, accept_affinity, read_gamma) come from the input too. Oracle as in
// support/fuzz_support.hpp.
#include <cstddef>
#include <cstdint>

#include "attnspec/io/qk_input.hpp"
#include "h5_builder.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_common();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input in(data, size);
    const unsigned layout = in.byte();
    QKInputOptions opt;
    opt.heads = static_cast<long>(in.pick(5)) - (layout & 64u ? 1 : 0);  // -1 .. 4
    opt.read_v = layout & 1u;
    opt.accept_affinity = layout & 2u;
    opt.read_gamma = layout & 4u;
    const std::string path = temp_path("qk.h5");
    {
        H5File f = H5File::create(path);
        if (!f.ok()) return 0;
        const hsize_t N = 1 + in.pick(6), cols = 1 + in.pick(6);
        write_matrix(f.id(), "/Q", N, cols, in);
        write_matrix(f.id(), "/K", N, cols, in);
        if (layout & 8u) write_matrix(f.id(), "/V", N, 1 + in.pick(6), in);
        if (layout & 16u) write_matrix(f.id(), "/A_hat", N, N, in);
        if (layout & 32u) write_double_attr(f.id(), "/", "gamma", in.number());
        mutate(f.id(), in, {"Q", "K", "V", "A_hat", "gamma", "heads"}, 8);
    }
    expect_documented("load_qk_input", [&] { (void)load_qk_input(path, opt); });
    return 0;
}
