// perron_tiled CUDA twin throughput (issue 32): one matrix-free product z = A+ x (A+ =
// ReLU(Q K^T / d), gpu::ReluKernelOp::apply, the kernel of gpu/src/infsa/relu_kernel_kernels.hpp:
// 64 x 64 score tiles, d in slices of 16 staged in shared memory) at N tokens x d, Q and K resident
// on the device. Prints the work a product is expected to do (2 N^2 d FP64 flops: N = 65,536,
// d = 64 gives 5.5e11), the operands the tiles stage (each block re-reads its rows' and every
// column tile's slices: ceil(N / 64)^2 x 128 x d doubles, mostly from L2), the limit of the FP64
// CUDA cores and of the FP64 tensor cores at the H100 / H200 rates (34 and 67 TFLOP/s: about
// 16 ms and 8 ms at the default size), the median time of a product (host-synchronous: x up, z
// down, the O(N) host enclosure; negligible at the default size) and its ratio to the CUDA-core
// limit, beside the PyTorch peer bench/gpu/peer_perron_tiled.py (float64, chunked over rows,
// matrix-free; run in the same invocation with the same shapes; "peer unavailable" when it cannot
// run, never a win). Target: <= 2x that limit (about 32 ms at the default size on an H100 /
// H200), judged on a line "target met: ..." or "target missed: ..." (scripts/gpu-check.sh reads
// them). The peer: --peer PATH, else $ATTNSPEC_PEER_DIR/peer_perron_tiled.py (a bundle), else the
// one beside the sources; run by $PYTHON (default python3).
// usage: bench_perron_tiled_cuda [--tokens N] [--dim D] [--reps R] [--peer PATH]
// Exit 69 without a device or without CUDA compiled.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/infsa/relu_kernel_cuda.hpp"

using namespace attnspec;

namespace {

struct Args {
    long N = 65536, d = 64;
    int reps = 5;
    std::string peer;
};

Args parse(int argc, char** argv) {
    Args a;
    const char* dir = std::getenv("ATTNSPEC_PEER_DIR");  // a bundle run elsewhere
    a.peer = std::string(dir && *dir ? dir : ATTNSPEC_BENCH_GPU_DIR) + "/peer_perron_tiled.py";
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc) throw Error(ExitCode::Usage, "option " + k + " needs a value");
        const std::string v = argv[++i];
        if (k == "--tokens")
            a.N = std::stol(v);
        else if (k == "--dim")
            a.d = std::stol(v);
        else if (k == "--reps")
            a.reps = std::stoi(v);
        else if (k == "--peer")
            a.peer = v;
        else
            throw Error(ExitCode::Usage, "unknown option " + k);
    }
    if (a.N <= 0 || a.d <= 0 || a.reps <= 0)
        throw Error(ExitCode::Usage, "--tokens, --dim and --reps must be positive");
    return a;
}

constexpr double kFp64CudaCores = 34e12;    // H100 SXM / H200 FP64 (CUDA cores), flop/s
constexpr double kFp64TensorCores = 67e12;  // H100 SXM / H200 FP64 tensor cores, flop/s

// What one product is expected to cost (printed with or without a device).
void print_expected(const Args& a) {
    const double flops = 2.0 * double(a.N) * double(a.N) * double(a.d);
    const double tiles = std::ceil(double(a.N) / 64.0);
    const double slices = std::ceil(double(a.d) / 16.0) * 16.0;
    const double staged = tiles * tiles * 128.0 * slices * 8.0;
    std::printf(
        "perron_tiled N=%ld d=%ld: expected %.3g FP64 flops per product (2 N^2 d), %.3g bytes "
        "of Q/K slices staged into shared memory (L2 -> SM; Q and K are %.3g bytes), limit "
        "%.2f ms on FP64 CUDA cores (34 TFLOP/s), %.2f ms on FP64 tensor cores (67 TFLOP/s)\n",
        a.N, a.d, flops, staged, 2.0 * 8.0 * double(a.N) * double(a.d),
        flops / kFp64CudaCores * 1e3, flops / kFp64TensorCores * 1e3);
}

// The peer's median seconds, NaN when it cannot run.
double peer_seconds(const Args& a) {
    const char* py = std::getenv("PYTHON");
    const std::string cmd = std::string(py ? py : "python3") + " " + a.peer + " --tokens " +
                            std::to_string(a.N) + " --dim " + std::to_string(a.d) + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return NAN;
    double t = NAN;
    if (std::fscanf(p, "seconds %lf", &t) != 1) t = NAN;
    pclose(p);
    return t;
}

int run(const Args& a, const gpu::DeviceInfo& info) {
    gpu::Context ctx(0, gpu::MathMode::pedantic);
    // Every score positive (Q, K entries in [0.5, 1)): no data-dependent shortcut in the work.
    Eigen::MatrixXd Q(a.N, a.d), K(a.N, a.d);
    for (long j = 0; j < a.d; ++j)
        for (long i = 0; i < a.N; ++i) {
            Q(i, j) = 0.5 + 0.5 * double((i * 7 + j * 13) % 97) / 97.0;
            K(i, j) = 0.5 + 0.5 * double((i * 11 + j * 5) % 89) / 89.0;
        }
    const Eigen::VectorXd x = Eigen::VectorXd::Ones(a.N);
    const gpu::ReluKernelOp op(ctx, Q, K);
    Eigen::VectorXd z, lo, hi;
    op.apply(x, false, z, lo, hi);  // warm-up (and the ||A+||_F pass)
    std::vector<double> t;
    for (int i = 0; i < a.reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        op.apply(x, false, z, lo, hi);
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    const double s = t[t.size() / 2];
    const double flops = 2.0 * double(a.N) * double(a.N) * double(a.d);
    const double limit = flops / kFp64CudaCores;
    std::printf(
        "perron_tiled on %s: %.3f ms per product (median of %d), %.2f TFLOP/s, %.2fx the "
        "CUDA-core limit",
        info.summary().c_str(), s * 1e3, a.reps, flops / s / 1e12, s / limit);
    const double peer = peer_seconds(a);
    if (std::isfinite(peer))
        std::printf(", PyTorch float64 peer %.3f ms (twin %.2fx faster)\n", peer * 1e3, peer / s);
    else
        std::printf(", PyTorch peer unavailable\n");
    std::printf(
        "target %s: %.2fx the FP64 CUDA-core limit (target <= 2x, rates of an H100 / "
        "H200)\n",
        s <= 2 * limit ? "met" : "missed", s / limit);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Args a = parse(argc, argv);
        print_expected(a);
        const gpu::DeviceInfo info = gpu::device_info();
        if (info.device_count == 0) {
            std::fprintf(stderr, "bench_perron_tiled_cuda: no usable CUDA device (%s)\n",
                         info.summary().c_str());
            return 69;
        }
        return run(a, info);
    } catch (const Error& e) {
        std::fprintf(stderr, "bench_perron_tiled_cuda: %s\n", e.what());
        return static_cast<int>(e.code());
    }
}
