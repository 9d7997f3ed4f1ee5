// gpu-check cases of the SpecA twin (attention_check.hpp), host-only: the twin's forward (fp64,
// fp32) against the CPU's multihead_forward on corrected multi-head layers
// (spec_attention_instance), N straddling the warp (31/32/33) and the softmax block width
// (255/256/257), tall (N > D) and wide (D > N), with and without biases. Tolerance: the
// first-order bound of spec_attention_tolerance, from the instance. Also the emulated check
// (`gpu-check --emulate`): the forward sequence of attention_forward.hpp with the kernel bodies
// of attention_kernels.hpp on the CPU grid runner and each cuBLAS GEMM served by the CPU BLAS
// (cblas, column-major) on the same arguments, batches walked with the same strides.
#include <cblas.h>

#include <limits>
#include <string>
#include <vector>

#include "attention_check.hpp"
#include "attention_check_timing.hpp"
#include "attention_forward.hpp"
#include "attention_kernels.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

namespace {

struct SpecCase {
    long N, D, d, H;
    bool biases;
};

// cuBLAS's gemm on the CPU BLAS: the same column-major operands, transposes and leading
// dimensions (cblas checks them as cuBLAS does).
void cpu_gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
    cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}
void cpu_gemm(bool ta, bool tb, long m, long n, long k, float alpha, const float* A, long lda,
              const float* B, long ldb, float beta, float* C, long ldc) {
    cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

// The forward sequence's operations on the CPU: the kernel bodies on CpuGrid, the GEMMs on the
// CPU BLAS (a strided batch as `batch` products, operands strideA / strideB / strideC apart).
template <class T>
struct EmulatedOps {
    CpuGrid grid;
    void effective_weights(const T* W, const T* C, T* out, long n, bool drop) {
        attn::effective_weights(grid, W, C, out, n, drop);
    }
    void fill_columns(T* P, const T* b, long rows, long cols) {
        attn::fill_columns(grid, P, b, rows, cols);
    }
    void softmax_rows(T* L, long n, long count, bool skip_last_tile) {
        // the runner-only faults (gpu-check --emulate --plant-fault index-math / no-barrier)
        const int fault = planted_fault() == PlantedFault::index_math ? attn::kSoftmaxFaultRowStride
                          : planted_fault() == PlantedFault::no_barrier
                              ? attn::kSoftmaxFaultNoBarrier
                              : attn::kSoftmaxFaultNone;
        attn::softmax_rows(grid, L, n, count, skip_last_tile, fault);
    }
    void gemm(bool ta, bool tb, long m, long n, long k, T alpha, const T* A, long lda, const T* B,
              long ldb, T beta, T* C, long ldc) {
        cpu_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    void gemm_batched(bool ta, bool tb, long m, long n, long k, T alpha, const T* A, long lda,
                      long sA, const T* B, long ldb, long sB, T beta, T* C, long ldc, long sC,
                      long batch) {
        for (long i = 0; i < batch; ++i)
            cpu_gemm(ta, tb, m, n, k, alpha, A + i * sA, lda, B + i * sB, ldb, beta, C + i * sC,
                     ldc);
    }
};

// The twin's forward in T with the operations above; buffers start as NaN, so an entry the
// sequence never writes shows. The planted fault as the device twin reads it.
template <class T>
Eigen::MatrixXd emulated_forward(const MultiHead& m) {
    const attn::ForwardShape f = attn::forward_shape<T>(m);
    attn::MatT<T> W, C;
    Eigen::Matrix<T, Eigen::Dynamic, 1> b;
    attn::pack_weights<T>(m, f, W, C, b);
    const attn::MatT<T> X = m.X.template cast<T>();
    const T nan = std::numeric_limits<T>::quiet_NaN();
    attn::MatT<T> We = attn::MatT<T>::Constant(f.D, f.cols, nan);
    attn::MatT<T> P = attn::MatT<T>::Constant(f.N, f.cols, nan);
    attn::MatT<T> L = attn::MatT<T>::Constant(f.N, f.N * f.group, nan);
    attn::MatT<T> out = attn::MatT<T>::Constant(f.N, f.H * f.d, nan);
    EmulatedOps<T> ops;
    attn::forward_sequence<T>(ops, f, planted_fault() == PlantedFault::dropped_term,
                              planted_fault() == PlantedFault::off_by_one_tile, X.data(), W.data(),
                              C.data(), We.data(), b.data(), P.data(), L.data(), out.data());
    return out.template cast<double>();
}

}  // namespace

std::vector<TwinCase> spec_attention_cases(const GpuCheckOptions& opt,
                                           const SpecAttentionRunFn& twin,
                                           const std::string& note) {
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
            auto run = [&] { got = twin(m, fp32); };
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
            c.note = note + "; twin relative bound " + std::to_string(tol.rel_bound) +
                     " of scale " + std::to_string(tol.scale);
            out.push_back(std::move(c));
        }
    }
    return out;
}

std::vector<TwinCase> check_spec_attention_emulated(const GpuCheckOptions& opt) {
    const SpecAttentionRunFn on_runner = [](const MultiHead& m, bool fp32) {
        return fp32 ? emulated_forward<float>(m) : emulated_forward<double>(m);
    };
    return spec_attention_cases(opt, on_runner,
                                "kernels on the CPU grid runner, GEMMs on the CPU BLAS");
}

}  // namespace attnspec::gpu
