// The files of check-kernel: arrays by name from a NumPy .npz (float16, float32 or float64
// members, any rank) or an HDF5 file (numeric datasets of any rank at the root, /q, /k, ...),
// chosen by content (the HDF5 signature) and read as row-major float64 kernels::Array; and the
// stress-case writer. Inputs (q, k, v, do, tq, tk, tv) are refused when they hold NaN/Inf
// (except q, k, v of check-kernel attention); outputs (o, lse, dq, dk, dv, do_t) keep
// them (a kernel's NaN is a finding: kernels/attention_check.hpp). Missing file: NoInput (66);
// malformed file or missing array: DataError (65) naming the file and the array. CPU only.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/kernels/attention_problem.hpp"

namespace attnspec {

class H5Reader;
class TensorFile;

class KernelArrayFile {
  public:
    explicit KernelArrayFile(const std::string& path);
    ~KernelArrayFile();
    KernelArrayFile(const KernelArrayFile&) = delete;
    KernelArrayFile& operator=(const KernelArrayFile&) = delete;
    bool has(const std::string& name) const;
    kernels::Array read(const std::string& name, bool keep_nonfinite) const;
    // The text member `name` of an .npz (read_npz_text); "" when absent or for an HDF5 file.
    std::string text(const std::string& name) const;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
    std::unique_ptr<H5Reader> h5_;
    std::unique_ptr<TensorFile> npz_;
};

// Q, K, V (arrays "q", "k", "v") of `path` into `p` (p.mask and scale untouched); under a boolean
// or additive p.mask also p.mask_array from the array "mask" (NoInput, 66, when absent; -inf
// kept); an array "mask" under none or causal is a usage error (64). NaN/Inf in q, k, v refused
// unless `keep_nonfinite` (check-kernel attention, its derivatives, linear-infsa, pure-infsa:
// kernels/attention_nonfinite.hpp, derivative_nonfinite.hpp, infsa_nonfinite.hpp) and the mask
// is none or causal (the stated propagation is derived for those).
void load_attention_inputs(const std::string& path, kernels::AttentionProblem& p,
                           bool keep_nonfinite = false);
// The mask rules above for `f` (opened from `path`): under a boolean or additive `mask` its array
// "mask" into `out` (NoInput when absent), under none or causal a "mask" array is a usage error.
void load_mask_input(const KernelArrayFile& f, const std::string& path, kernels::MaskKind mask,
                     kernels::Array& out);

// Writes q, k, v of `p` and the `extra` arrays (a derivative case's do or tq, tk, tv) to an .npz
// at `path` (float32 members, or float64 when `f64`; io/tensor_files.hpp: write_npz), and, when
// not empty, `case_json` as the byte-string member `case` (the stress case's description).
using NamedArray = std::pair<std::string, const kernels::Array*>;
void write_attention_inputs(const std::string& path, const kernels::AttentionProblem& p, bool f64,
                            const std::vector<NamedArray>& extra = {},
                            const std::string& case_json = "");

}  // namespace attnspec
