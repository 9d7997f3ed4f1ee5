// gpu-check entry of the SpecA twin: gpu::multihead_forward (fp64, fp32) against the CPU's
// multihead_forward on corrected multi-head layers (spec_attention_instance), N straddling the
// warp (31/32/33) and the softmax block width (255/256/257), tall (N > D) and wide (D > N), with
// and without biases. Tolerance: the first-order bound of spec_attention_tolerance.
#include <limits>
#include <string>

#include "attention_check_timing.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

namespace {
struct SpecCase {
    long N, D, d, H;
    bool biases;
};
}  // namespace

std::vector<TwinCase> check_spec_attention(Context& ctx, const GpuCheckOptions& opt) {
    std::vector<SpecCase> cases = {{31, 16, 8, 2, false},
                                   {32, 64, 16, 3, true},
                                   {33, 24, 8, 2, true},
                                   {255, 32, 8, 2, false},
                                   {257, 320, 32, 2, true}};
    if (!opt.quick) {
        cases.push_back({256, 48, 16, 4, true});
        cases.push_back({1024, 128, 64, 4, false});
        cases.push_back({2048, 768, 64, 12, true});
    }
    std::vector<TwinCase> out;
    for (const SpecCase& k : cases) {
        const MultiHead m = spec_attention_instance(k.N, k.D, k.d, k.H, opt.seed + k.N, k.biases);
        Eigen::MatrixXd ref;
        const double cpu_s = attn::median_seconds(1, [&] { ref = attnspec::multihead_forward(m); });
        const std::string name = "N=" + std::to_string(k.N) + " D=" + std::to_string(k.D) +
                                 " d=" + std::to_string(k.d) + " H=" + std::to_string(k.H) +
                                 (k.N > k.D ? " tall" : " wide") + (k.biases ? " biases" : "");
        for (const bool fp32 : {false, true}) {
            TwinCase c;
            c.twin = "spec_attention";
            c.case_name = name;
            c.precision = fp32 ? "fp32" : "fp64";
            c.shape = {k.N, k.D, k.d, k.H};
            Eigen::MatrixXd got;
            auto run = [&] {
                got = fp32 ? multihead_forward_fp32(ctx, m).cast<double>()
                           : multihead_forward(ctx, m);
            };
            const double u = fp32 ? std::numeric_limits<float>::epsilon() / 2
                                  : std::numeric_limits<double>::epsilon() / 2;
            const SpecAttentionTolerance tol = spec_attention_tolerance(m, u);
            if (opt.timings) {
                run();  // warm-up (cuBLAS kernel selection)
                c.gpu_seconds = attn::median_seconds(3, run);
                c.cpu_seconds = cpu_s;
            } else {
                run();
            }
            compare_into(c, ref.data(), got.data(), ref.size(), tol.abs, true, tol.reason);
            c.note = ctx.math_mode_description() +
                     "; GPU time includes the transfers; twin relative bound " +
                     std::to_string(tol.rel_bound) + " of scale " + std::to_string(tol.scale);
            out.push_back(std::move(c));
        }
    }
    return out;
}

}  // namespace attnspec::gpu
