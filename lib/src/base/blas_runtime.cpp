#include "attnspec/base/blas_runtime.hpp"

#include <dlfcn.h>

namespace attnspec {
namespace {
// OpenBLAS's controls, looked up at run time: attnspec also links with other BLAS libraries.
template <class F>
F blas_symbol(const char* name) {
    return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}
}  // namespace

// Minimal contract implementation (threads only); kernel selection and blas_info() come with
// the BLAS-kernels work of issue 13.
BlasInfo blas_info() {
    BlasInfo info;
    using Str = char* (*)();
    if (auto cfg = blas_symbol<Str>("openblas_get_config")) info.library = cfg();
    if (auto core = blas_symbol<Str>("openblas_get_corename")) info.core = core();
    if (info.library.empty()) info.library = "unknown BLAS";
    info.threads = blas_threads();
    return info;
}

void select_blas_kernels(int /*argc*/, char** /*argv*/) {}

int blas_threads() {
    using Get = int (*)();
    auto get = blas_symbol<Get>("openblas_get_num_threads");
    return get ? get() : 1;
}

void set_blas_threads(int n) {
    using Set = void (*)(int);
    if (n <= 0) return;
    if (auto set = blas_symbol<Set>("openblas_set_num_threads")) set(n);
}

}  // namespace attnspec
