// The test programs' main: the same BLAS kernels as the CLI (select_blas_kernels, issue 13), then
// Catch2's session.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "attnspec/base/blas_runtime.hpp"

int main(int argc, char** argv) {
    attnspec::select_blas_kernels(argc, argv);
    return Catch::Session().run(argc, argv);
}
