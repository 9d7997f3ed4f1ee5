// check-kernel's reproducer: on a verdict other than pass, one .npz beside the report (or beside
// the kernel's output when no report is written) holding the inputs and the kernel's output as
// float64 (exact: every stored dtype widens without rounding), and a 0-d byte string `case`, a
// JSON object with the case (op, dtype, accumulate, mask, scale, factor; generator, seed and shape
// when known), the verdict and its
// summary, the files checked, the replay command and the worst elements of each tensor. Since it
// holds both the inputs and the output arrays, `attnspec check-kernel OP --inputs R --output R`
// with the options of `replay` re-checks it (docs/cli/check-kernel.md, "Reproducers"). CPU only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/io/kernel_files.hpp"
#include "attnspec/kernels/check_run.hpp"

namespace attnspec {

// Where the reproducer of a run goes: "<dir>/<stem>.repro.npz" for `beside` = "<dir>/<stem>.h5",
// ".npz" or any other extension (the report when there is one, else the kernel's output);
// `beside` itself when it already ends in ".repro.npz" (a reproducer being replayed). O(1).
std::string reproducer_path(const std::string& beside);

// The replay command line of `run` for a reproducer at `path`: "attnspec check-kernel OP --inputs
// PATH --output PATH --dtype .. --accumulate .. --mask .. --scale S --factor F" (S and F as
// format_exact: the same doubles; PATH single-quoted when it holds other characters than
// letters, digits and _ . / - + , : =).
std::string reproducer_replay(const kernels::KernelCheckRun& run, const std::string& path);

// The `case` member `check-kernel --generate` writes into IN: {"op", "generator", "seed",
// "shape", "dtype"} as JSON.
std::string stress_case_json(const std::string& op, const std::string& generator,
                             std::uint64_t seed, const std::vector<std::int64_t>& shape,
                             const std::string& dtype);

// Sets run.generator, seed and shape from the `case` member of `in` (written by --generate, or
// by a reproducer that knew them) when it names all three; leaves them unknown otherwise.
// DataError when the member is not a byte string or not JSON.
void read_stress_case(const KernelArrayFile& in, kernels::KernelCheckRun& run);

// Writes the reproducer of `run` to `path` atomically (io/tensor_files.hpp: write_npz): the
// arrays (inputs first, then outputs) as float64 and the `case` JSON. CantCreate / IoError as the
// atomic writer. O(total size of the arrays).
void write_kernel_reproducer(const std::string& path, const kernels::KernelCheckRun& run,
                             const std::vector<NamedArray>& arrays);

}  // namespace attnspec
