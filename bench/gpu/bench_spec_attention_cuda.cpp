// SpecA forward on the GPU (gpu::SpecAttentionRun, fp32, cuBLAS default math) against PyTorch on
// the same device and the same inputs (bench/gpu/peer_spec_attention.py, run by this program):
// scaled_dot_product_attention and the eager softmax path, projections included in all three.
// Prints each time (median) and the ratios peer / twin (> 1: the twin is faster). Issue 10's
// target at N = 4096, D = 768, 12 heads x 64: <= 2.7 ms and faster than both peers, each judged
// on a line "target met: ..." or "target missed: ..." (scripts/gpu-check.sh reads them and "peer
// unavailable"). The peer: --peer PATH, else $ATTNSPEC_PEER_DIR/peer_spec_attention.py (a
// bundle), else the one beside the sources; run by --python, else $PYTHON, else python3.
// Usage: bench_spec_attention_cuda [--N 4096] [--D 768] [--d 64] [--H 12] [--runs 20]
//        [--seed 1] [--peer PATH] [--python PYTHON]. Exit 69 without a device, 64 on bad usage.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "../bench_common.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/base/context.hpp"

using namespace attnspec;

namespace {

struct Args {
    long N = 4096, D = 768, d = 64, H = 12, runs = 20;
    std::uint64_t seed = 1;
    std::string peer, python;
};

Args parse(int argc, char** argv) {
    Args a;
    const char* dir = std::getenv("ATTNSPEC_PEER_DIR");  // a bundle run elsewhere
    a.peer = std::string(dir && *dir ? dir : ATTNSPEC_BENCH_GPU_DIR) + "/peer_spec_attention.py";
    const char* py = std::getenv("PYTHON");
    a.python = py && *py ? py : "python3";
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc) fail_usage("option " + k + " needs a value");
        const std::string v = argv[++i];
        if (k == "--N")
            a.N = std::stol(v);
        else if (k == "--D")
            a.D = std::stol(v);
        else if (k == "--d")
            a.d = std::stol(v);
        else if (k == "--H")
            a.H = std::stol(v);
        else if (k == "--runs")
            a.runs = std::stol(v);
        else if (k == "--seed")
            a.seed = std::stoull(v);
        else if (k == "--peer")
            a.peer = v;
        else if (k == "--python")
            a.python = v;
        else
            fail_usage("unknown option " + k);
    }
    if (a.N < 1 || a.D < 1 || a.d < 1 || a.H < 1 || a.runs < 1)
        fail_usage("sizes and --runs must be positive");
    return a;
}

// The peer's input: int64 N, D, d, H; float64 s; float32 X (N x D) and W + C (D x 3Hd, columns
// [Q heads | K heads | V heads]), both row-major.
void write_inputs(const std::string& path, const MultiHead& m) {
    const long N = m.X.rows(), D = m.X.cols(), d = m.heads[0].W_Q.cols(), H = m.H();
    Eigen::MatrixXd W(D, 3 * H * d);
    for (long h = 0; h < H; ++h) {
        const Head e = m.head(h).effective();
        W.middleCols(h * d, d) = e.W_Q;
        W.middleCols((H + h) * d, d) = e.W_K;
        W.middleCols((2 * H + h) * d, d) = e.W_V;
    }
    std::ofstream f(path, std::ios::binary);
    const std::int64_t dims[4] = {N, D, d, H};
    f.write(reinterpret_cast<const char*>(dims), sizeof dims);
    f.write(reinterpret_cast<const char*>(&m.s), sizeof m.s);
    using RowF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const RowF X = m.X.cast<float>(), Wf = W.cast<float>();
    f.write(reinterpret_cast<const char*>(X.data()), X.size() * sizeof(float));
    f.write(reinterpret_cast<const char*>(Wf.data()), Wf.size() * sizeof(float));
    if (!f) throw Error(ExitCode::CantCreate, "cannot write the peer's inputs to " + path);
}

int run(const Args& a) {
    gpu::Context ctx(0, gpu::MathMode::fast);  // Error(NoDevice) without a device: exit 69
    const MultiHead m = gpu::spec_attention_instance(a.N, a.D, a.d, a.H, a.seed, false);
    gpu::SpecAttentionRun twin(ctx, m, true);
    for (int k = 0; k < 3; ++k) twin.run();  // warm-up (cuBLAS heuristics, clocks)
    std::vector<double> t;
    for (long k = 0; k < a.runs; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        twin.run();
        t.push_back(bench::seconds_since(t0));
    }
    const double twin_ms = 1e3 * bench::median(t);
    std::printf("spec_attention twin fp32 N=%ld D=%ld H=%ld d=%ld: %.3f ms (median of %ld, %s)\n",
                a.N, a.D, a.H, a.d, twin_ms, a.runs, ctx.math_mode_description().c_str());
    const char* tmp = std::getenv("TMPDIR");
    const std::string in = std::string(tmp ? tmp : "/tmp") + "/bench_spec_attention_inputs.bin";
    write_inputs(in, m);
    const std::string cmd =
        a.python + " " + a.peer + " --inputs " + in + " --runs " + std::to_string(a.runs) + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    double sdpa_ms = NAN, eager_ms = NAN;
    char line[512];
    while (p && std::fgets(line, sizeof line, p)) {
        std::fputs(line, stdout);
        std::sscanf(line, "peer sdpa_ms %lf eager_ms %lf", &sdpa_ms, &eager_ms);
    }
    if (p) pclose(p);
    std::remove(in.c_str());
    const bool sizes = a.N == 4096 && a.D == 768 && a.d == 64 && a.H == 12;  // the target's
    if (sizes)
        std::printf("target %s: twin %.3f ms (target <= 2.7 ms)\n",
                    twin_ms <= 2.7 ? "met" : "missed", twin_ms);
    if (std::isnan(sdpa_ms)) {
        std::printf("peer unavailable (no PyTorch with CUDA?): no ratio\n");
        return 0;
    }
    std::printf("ratio sdpa/twin %.2f, eager/twin %.2f (> 1: twin faster); target twin <= 2.7 ms\n",
                sdpa_ms / twin_ms, eager_ms / twin_ms);
    if (sizes)
        std::printf("target %s: twin faster than both peers (sdpa/twin %.2f, eager/twin %.2f)\n",
                    sdpa_ms > twin_ms && eager_ms > twin_ms ? "met" : "missed", sdpa_ms / twin_ms,
                    eager_ms / twin_ms);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse(argc, argv));
    } catch (const Error& e) {
        std::fprintf(stderr, "bench_spec_attention_cuda: %s\n", e.what());
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_spec_attention_cuda: bad usage: %s\n", e.what());
        return static_cast<int>(ExitCode::Usage);
    }
}
