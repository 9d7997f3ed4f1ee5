// PLACEHOLDERS, to be deleted when the twin branches merge (gpuinfsa, gpuattn, gpusolve): a weak
// check_<twin>() for each twin, so the registry links before the twins exist. Each returns one
// case that disagrees with the note "twin not built". Weak: a twin's own (strong) definition
// replaces its placeholder at link time, whichever order the branches merge in.
#include <cmath>

#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

namespace {
std::vector<TwinCase> not_built(const char* twin) {
    TwinCase c;
    c.twin = twin;
    c.case_name = "(none)";
    c.precision = "-";
    c.max_abs_err = c.max_rel_err = INFINITY;
    c.note = "twin not built";
    return {c};
}
}  // namespace

#define ATTNSPEC_TWIN_PLACEHOLDER(name)                                                          \
    __attribute__((weak)) std::vector<TwinCase> check_##name(Context&, const GpuCheckOptions&) { \
        return not_built(#name);                                                                 \
    }
ATTNSPEC_TWIN_PLACEHOLDER(linear_infsa)
ATTNSPEC_TWIN_PLACEHOLDER(spec_attention)
ATTNSPEC_TWIN_PLACEHOLDER(jacobian_spectrum)
ATTNSPEC_TWIN_PLACEHOLDER(svd)
ATTNSPEC_TWIN_PLACEHOLDER(neumann)
ATTNSPEC_TWIN_PLACEHOLDER(perron_tiled)
#undef ATTNSPEC_TWIN_PLACEHOLDER

}  // namespace attnspec::gpu
