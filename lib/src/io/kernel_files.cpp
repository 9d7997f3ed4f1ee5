// check-kernel's array files: .npz or .h5 in, .npz out (io/kernel_files.hpp).
#include "attnspec/io/kernel_files.hpp"

#include <cmath>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "tensor_files_internal.hpp"

namespace attnspec {
namespace {
bool hdf5_signature(const std::string& path) {
    const detail::ByteFile f(path);
    return f.size() >= 8 && f.read(0, 8) == std::string("\x89HDF\r\n\x1a\n", 8);
}
}  // namespace

KernelArrayFile::KernelArrayFile(const std::string& path) : path_(path) {
    if (hdf5_signature(path)) {
        h5_ = std::make_unique<H5Reader>(path);
    } else {
        npz_ = open_npz(path);
        npz_->keep_nonfinite(true);
    }
}

KernelArrayFile::~KernelArrayFile() = default;

bool KernelArrayFile::has(const std::string& name) const {
    if (h5_) return h5_->exists("/" + name);
    for (const TensorEntry& e : npz_->entries())
        if (e.name == name) return true;
    return false;
}

kernels::Array KernelArrayFile::read(const std::string& name, bool keep_nonfinite) const {
    if (!has(name)) fail_data("'" + path_ + "' has no array '" + name + "'");
    kernels::Array a;
    if (h5_) {
        std::vector<hsize_t> dims;
        a.values = h5_->array("/" + name, dims, true);
        for (hsize_t e : dims) a.shape.push_back(static_cast<std::int64_t>(e));
    } else {
        Tensor t = npz_->read(name);
        a.shape = std::move(t.shape);
        a.values = std::move(t.values);
    }
    if (!keep_nonfinite)
        for (double x : a.values)
            if (!std::isfinite(x))
                fail_data("'" + path_ + "': array '" + name +
                          "' holds NaN or Inf (an input must be finite)");
    return a;
}

std::string KernelArrayFile::text(const std::string& name) const {
    return npz_ ? read_npz_text(path_, name) : std::string();
}

void load_attention_inputs(const std::string& path, kernels::AttentionProblem& p,
                           bool keep_nonfinite) {
    const KernelArrayFile f(path);
    const bool general = kernels::general_mask(p.mask);
    p.q = f.read("q", keep_nonfinite && !general);
    p.k = f.read("k", keep_nonfinite && !general);
    p.v = f.read("v", keep_nonfinite && !general);
    load_mask_input(f, path, p.mask, p.mask_array);
}

void load_mask_input(const KernelArrayFile& f, const std::string& path, kernels::MaskKind mask,
                     kernels::Array& out) {
    const bool general = kernels::general_mask(mask);
    if (general && !f.has("mask"))
        throw Error(ExitCode::NoInput, "'" + path + "' has no array 'mask' (--mask " +
                                           kernels::mask_name(mask) + " reads it)");
    if (!general && f.has("mask"))
        fail_usage("'" + path + "' holds an array 'mask': give --mask boolean or additive (got " +
                       kernels::mask_name(mask) + ")",
                   "mask");
    if (general) out = f.read("mask", true);  // -inf: a hidden key (additive)
}

void write_attention_inputs(const std::string& path, const kernels::AttentionProblem& p, bool f64,
                            const std::vector<NamedArray>& extra, const std::string& case_json) {
    std::vector<NpyArray> arrays = {{"q", p.q.shape, &p.q.values, !f64},
                                    {"k", p.k.shape, &p.k.values, !f64},
                                    {"v", p.v.shape, &p.v.values, !f64}};
    for (const NamedArray& a : extra)
        arrays.push_back({a.first, a.second->shape, &a.second->values, !f64});
    if (case_json.empty()) return write_npz(path, arrays);
    write_npz(path, arrays, {{"case", case_json}});
}

}  // namespace attnspec
