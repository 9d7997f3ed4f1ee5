// Linear-InfSA CUDA twin throughput (issue 10): H heads x N tokens x d, inputs resident on the
// device, float32 and bf16 inputs (float32 accumulation). Prints the bytes a call is expected to
// move (gpu::linear_infsa_bytes_moved), the median time, GB/s on the
// bytes read (Q, K, V once each), the ratio to this device's copy bandwidth (a device-to-device
// cudaMemcpy of 4 GiB, read + write, measured in the same run) and to the PyTorch peer
// bench/gpu/peer_linear_infsa.py (run in the same invocation with the same shapes; its ratio is
// "unavailable" when it cannot run, never a win). Targets: >= 70 % of copy bandwidth for float32
// (about 1.4 ms at N = 331,776, H = 16, d = 64), <= 0.8 ms for bf16 inputs (at those sizes); each
// judged on a line "target met: ..." or "target missed: ..." (scripts/gpu-check.sh reads them and
// "peer unavailable"). The peer: --peer PATH, else $ATTNSPEC_PEER_DIR/peer_linear_infsa.py (a
// bundle), else the one beside the sources; run by $PYTHON (default python3).
// usage: bench_linear_infsa_cuda [--tokens N] [--heads H] [--dim D] [--reps R] [--peer PATH]
// Exit 69 without a device or without CUDA compiled.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"

#if ATTNSPEC_HAVE_CUDA
#include <cuda_runtime.h>
#endif

using namespace attnspec;

namespace {

struct Args {
    long N = 331776, H = 16, d = 64;
    int reps = 20;
    std::string peer;
};

Args parse(int argc, char** argv) {
    Args a;
    const char* dir = std::getenv("ATTNSPEC_PEER_DIR");  // a bundle run elsewhere
    a.peer = std::string(dir && *dir ? dir : ATTNSPEC_BENCH_GPU_DIR) + "/peer_linear_infsa.py";
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc) throw Error(ExitCode::Usage, "option " + k + " needs a value");
        const std::string v = argv[++i];
        if (k == "--tokens")
            a.N = std::stol(v);
        else if (k == "--heads")
            a.H = std::stol(v);
        else if (k == "--dim")
            a.d = std::stol(v);
        else if (k == "--reps")
            a.reps = std::stoi(v);
        else if (k == "--peer")
            a.peer = v;
        else
            throw Error(ExitCode::Usage, "unknown option " + k);
    }
    if (a.N <= 0 || a.H <= 0 || a.d <= 0 || a.reps <= 0)
        throw Error(ExitCode::Usage, "--tokens, --heads, --dim and --reps must be positive");
    return a;
}

#if ATTNSPEC_HAVE_CUDA
// The peer's median seconds, NaN when it cannot run.
double peer_seconds(const Args& a, const char* dtype) {
    const char* py = std::getenv("PYTHON");
    const std::string cmd = std::string(py ? py : "python3") + " " + a.peer + " --tokens " +
                            std::to_string(a.N) + " --heads " + std::to_string(a.H) + " --dim " +
                            std::to_string(a.d) + " --dtype " + dtype + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return NAN;
    double t = NAN;
    if (std::fscanf(p, "seconds %lf", &t) != 1) t = NAN;
    pclose(p);
    return t;
}

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw Error(ExitCode::Internal, std::string(what) + ": " + cudaGetErrorString(e));
}

// Median seconds of fn() over reps, timed with CUDA events on the context's stream.
template <class Fn>
double time_events(gpu::Context& ctx, int reps, Fn fn) {
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
    fn();  // warm-up
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        check(cudaEventRecord(a, ctx.stream()), "cudaEventRecord");
        fn();
        check(cudaEventRecord(b, ctx.stream()), "cudaEventRecord");
        check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        t.push_back(ms / 1e3);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int run(const Args& a) {
    gpu::Context ctx(0, gpu::MathMode::fast);
    const std::size_t copy_bytes = std::size_t(4) << 30;
    double copy_gbs = NAN;
    {
        gpu::DeviceBuffer src(copy_bytes), dst(copy_bytes);
        const double s = time_events(ctx, 5, [&] {
            check(cudaMemcpyAsync(dst.data(), src.data(), copy_bytes, cudaMemcpyDeviceToDevice,
                                  ctx.stream()),
                  "cudaMemcpyAsync");
        });
        copy_gbs = 2.0 * double(copy_bytes) / s / 1e9;  // read + write
    }
    std::printf("device-to-device copy, 4 GiB: %.0f GB/s (read + write)\n", copy_gbs);
    const std::size_t n = std::size_t(a.H) * std::size_t(a.N) * std::size_t(a.d);
    for (gpu::InputFormat f : {gpu::InputFormat::f32, gpu::InputFormat::bf16}) {
        const bool f32 = f == gpu::InputFormat::f32;
        const std::size_t elem = f32 ? 4 : 2;
        gpu::DeviceBuffer Q(n * elem), K(n * elem), V(n * elem), work, out;
        // Values do not change the work (no data-dependent branches beyond ReLU): a fixed
        // pattern, uploaded once.
        std::vector<unsigned char> host(n * elem);
        for (std::size_t i = 0; i < host.size(); ++i)
            host[i] = f32 ? (i % 4 == 3 ? 0x3f : 0) : (i % 2 ? 0x3f : 0x80);
        Q.upload_sync(ctx, host.data(), host.size());
        K.upload_sync(ctx, host.data(), host.size());
        V.upload_sync(ctx, host.data(), host.size());
        const double s = time_events(ctx, a.reps, [&] {
            gpu::linear_infsa_heads_device(ctx, f, Q.data(), K.data(), V.data(), a.H, a.N, a.d, {},
                                           work, out);
        });
        const double gbs = 3.0 * double(n * elem) / s / 1e9;
        const double moved = gpu::linear_infsa_bytes_moved(f, a.H, a.N, a.d);
        std::printf(
            "linear_infsa %s: expected %.4f GB moved per call (Q, K, V once: %.4f GB), "
            "%.3f ms at the copy bandwidth\n",
            f32 ? "fp32" : "bf16-in/fp32-acc", moved / 1e9, 3.0 * double(n * elem) / 1e9,
            moved / (copy_gbs * 1e9) * 1e3);
        const double peer = peer_seconds(a, f32 ? "float32" : "bfloat16");
        std::printf("linear_infsa %s, N=%ld H=%ld d=%ld: %.3f ms, %.0f GB/s read = %.1f %% of copy",
                    f32 ? "fp32" : "bf16-in/fp32-acc", a.N, a.H, a.d, s * 1e3, gbs,
                    100.0 * gbs / copy_gbs);
        if (std::isfinite(peer))
            std::printf(", PyTorch peer %.3f ms (twin %.2fx faster)\n", peer * 1e3, peer / s);
        else
            std::printf(", PyTorch peer unavailable\n");
        if (f32)
            std::printf("target %s: fp32 at %.1f %% of copy bandwidth (target >= 70 %%)\n",
                        gbs >= 0.7 * copy_gbs ? "met" : "missed", 100.0 * gbs / copy_gbs);
        else if (a.N == 331776 && a.H == 16 && a.d == 64)
            std::printf("target %s: bf16 inputs in %.3f ms (target <= 0.8 ms)\n",
                        s <= 0.8e-3 ? "met" : "missed", s * 1e3);
    }
    return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    try {
        const Args a = parse(argc, argv);
        const gpu::DeviceInfo info = gpu::device_info();
        if (info.device_count == 0) {
            std::fprintf(stderr, "bench_linear_infsa_cuda: no usable CUDA device (%s)\n",
                         info.summary().c_str());
            return 69;
        }
#if ATTNSPEC_HAVE_CUDA
        return run(a);
#else
        return 69;
#endif
    } catch (const Error& e) {
        std::fprintf(stderr, "bench_linear_infsa_cuda: %s\n", e.what());
        return static_cast<int>(e.code());
    }
}
