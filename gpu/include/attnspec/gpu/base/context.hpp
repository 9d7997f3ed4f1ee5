// The GPU execution context shared by every CUDA twin: one device, one stream, one cuBLAS and one
// cuSOLVER (dense) handle, owned RAII, and the math mode the twins run under. Device memory is
// held in DeviceBuffer / DeviceMatrix<T> with explicit host transfers (no hidden copies).
//
// This header includes no CUDA header (the CUDA handle types are forward-declared exactly as the
// toolkit declares them), so host code and tests can name a Context without nvcc.
// CUDA build: gpu/src/base/context_cuda.cpp. CPU-only build: gpu/src/base/base_stub.cpp, whose
// constructors throw Error(ExitCode::NoDevice, "... not compiled ...").
#pragma once
#include <cstddef>
#include <string>

struct CUstream_st;        // cudaStream_t == CUstream_st*
struct cublasContext;      // cublasHandle_t == cublasContext*
struct cusolverDnContext;  // cusolverDnHandle_t == cusolverDnContext*

namespace attnspec::gpu {

// pedantic: cuBLAS CUBLAS_PEDANTIC_MATH (no TF32, no FP64 fixed-point emulation, no reduced
// precision reductions) and cuSOLVER CUSOLVER_DETERMINISTIC_RESULTS. Reference comparisons
// (gpu-check, tests) run pedantic. fast: CUBLAS_DEFAULT_MATH, cuSOLVER default (benchmarks may
// use it; reports record which ran).
enum class MathMode { pedantic, fast };
const char* to_string(MathMode m);                     // host-only: gpu_check_common.cpp
MathMode math_mode_from_string(const std::string& s);  // throws Usage naming the value

class Context {
  public:
    // Selects `device`, creates a non-blocking stream and the two handles bound to it, applies
    // `mode`. Throws Error(NoDevice) when CUDA is not compiled or the device is not usable, with
    // the reason in words.
    explicit Context(int device = 0, MathMode mode = MathMode::pedantic);
    ~Context();  // NOLINT(performance-trivially-destructible): trivial in the CPU stub only
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    int device() const noexcept { return device_; }
    MathMode math_mode() const noexcept { return mode_; }
    // For report provenance, e.g. "cuBLAS CUBLAS_PEDANTIC_MATH; cuSOLVER deterministic".
    std::string math_mode_description() const;
    CUstream_st* stream() const noexcept { return stream_; }
    cublasContext* cublas() const noexcept { return cublas_; }
    cusolverDnContext* cusolver() const noexcept { return cusolver_; }
    // cudaStreamSynchronize, error-checked (a kernel fault surfaces here as Error(Internal)).
    void synchronize() const;

  private:
    int device_ = 0;
    MathMode mode_ = MathMode::pedantic;
    CUstream_st* stream_ = nullptr;
    cublasContext* cublas_ = nullptr;
    cusolverDnContext* cusolver_ = nullptr;
};

// Untyped device allocation (cudaMallocAsync on the context's stream would tie its lifetime to a
// stream; this uses cudaMalloc/cudaFree). Move-only. A failed allocation throws
// Error(OutOfMemory) naming the byte count.
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();  // NOLINT(performance-trivially-destructible): idem
    DeviceBuffer(DeviceBuffer&& o) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void* data() const noexcept { return ptr_; }
    std::size_t bytes() const noexcept { return bytes_; }
    // Explicit, stream-ordered transfers on ctx.stream(); the *_sync forms synchronise the stream
    // before returning (the host buffer is safe to read / reuse).
    void upload_sync(const Context& ctx, const void* host, std::size_t bytes,
                     std::size_t offset = 0);
    void download_sync(const Context& ctx, void* host, std::size_t bytes,
                       std::size_t offset = 0) const;
    void zero(const Context& ctx);  // cudaMemsetAsync(0) on ctx.stream()

  private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

// A column-major rows × cols matrix in device memory, leading dimension = rows (the layout of
// Eigen::Matrix<T, Dynamic, Dynamic> and of cuBLAS/cuSOLVER). T: double, float, and the 16-bit
// types as raw storage (std::uint16_t for bf16 / fp16 bit patterns).
template <class T>
class DeviceMatrix {
  public:
    DeviceMatrix() = default;
    DeviceMatrix(long rows, long cols)
        : rows_(rows), cols_(cols), buf_(static_cast<std::size_t>(rows) * cols * sizeof(T)) {}
    long rows() const noexcept { return rows_; }
    long cols() const noexcept { return cols_; }
    long ld() const noexcept { return rows_; }
    long size() const noexcept { return rows_ * cols_; }
    T* data() const noexcept { return static_cast<T*>(buf_.data()); }
    // host: column-major, rows()*cols() elements.
    void upload_sync(const Context& ctx, const T* host) {
        buf_.upload_sync(ctx, host, buf_.bytes());
    }
    void download_sync(const Context& ctx, T* host) const {
        buf_.download_sync(ctx, host, buf_.bytes());
    }
    void zero(const Context& ctx) { buf_.zero(ctx); }

  private:
    long rows_ = 0, cols_ = 0;
    DeviceBuffer buf_;
};

}  // namespace attnspec::gpu
