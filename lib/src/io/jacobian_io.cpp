// The /jacobian report section (io/jacobian_io.hpp).
#include "attnspec/io/jacobian_io.hpp"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "attnspec/io/spectrum_io.hpp"

namespace attnspec {

namespace {
std::int64_t i64(Eigen::Index n) { return static_cast<std::int64_t>(n); }
}  // namespace

JacobianSection::JacobianSection(H5Group& parent, const AttentionHeads& in, JacobianWrt wrt,
                                 const std::string& source, const std::string& correction,
                                 const std::string& bias_form)
    : g_(parent.group("jacobian")), in_(in), wrt_(wrt) {
    const Head& h0 = in.heads.at(0);
    g_.attr("wrt", to_string(wrt));
    if (in.uniform()) g_.attr("s", h0.s);
    g_.attr("correction", correction);
    g_.attr("bias_form", bias_form);
    if (in.uniform()) {
        g_.attr("N", i64(h0.N())), g_.attr("D", i64(h0.D()));
        g_.attr("d", i64(h0.d()));
    }
    g_.attr("H", i64(static_cast<Eigen::Index>(in.size())));
    g_.attr("source", source);
    if (!in.dtype.empty()) g_.attr("input_dtype", in.dtype);  // as stored in the --input file
    g_.attr("vec",
            "column-major; rows i + N c of A (N x d); columns a + D b of W_* (blocks Q, K, V) or "
            "m + N a of X");
    g_.attr("evaluated_at", "W + C (corrections frozen)");
    g_.attr("shared_X", in.shared_X ? "yes" : "no");
    if (in.shared_X) g_.write("X", h0.X);
}

void JacobianSection::write_head(std::size_t h, const HeadJacobian& r, const Eigen::MatrixXd& J) {
    const Head& hd = in_.heads.at(h);
    H5Group gh = g_.group("head_" + std::to_string(h));
    if (r.has_spectrum) {
        H5Group gs = gh.group("spectrum");
        write_operator_spectrum(gs, r.spectrum);
    }
    if (!in_.shared_X) gh.write("X", hd.X);
    gh.write("W_Q", hd.W_Q), gh.write("W_K", hd.W_K), gh.write("W_V", hd.W_V);
    if (hd.C_Q.size()) gh.write("C_Q", hd.C_Q);
    if (hd.C_K.size()) gh.write("C_K", hd.C_K);
    if (hd.C_V.size()) gh.write("C_V", hd.C_V);
    const std::pair<const Eigen::VectorXd*, const char*> biases[] = {
        {&hd.b_Q, "b_Q"}, {&hd.b_K, "b_K"}, {&hd.b_V, "b_V"}};
    for (const auto& [b, name] : biases)  // shape (d,), as in the input schema
        if (b->size()) gh.write(name, std::vector<double>(b->data(), b->data() + b->size()));
    gh.attr("name", in_.names.at(h));
    gh.attr("N", i64(hd.N())), gh.attr("D", i64(hd.D())), gh.attr("d", i64(hd.d()));
    gh.attr("s", hd.s);
    if (std::isfinite(r.frobenius)) gh.attr("frobenius", r.frobenius);
    if (std::isfinite(r.max_abs)) gh.attr("max_abs", r.max_abs), gh.attr("seconds", r.seconds);
    if (r.has_blocks)
        for (int b = 0; b < 3; ++b)
            gh.attr(std::string("frobenius_J_") + "QKV"[b], r.frobenius_blocks[b]);
    // Above 64 MiB J is written uncompressed: deflate would cost seconds per 100 MB of values
    // that barely compress.
    if (J.size()) gh.write(jacobian_symbol(wrt_), J, 8.0 * J.size() <= 64.0 * (1 << 20));
}

void JacobianSection::finish(const JacobianAnalysis& a) {
    if (a.shared_X && std::isfinite(a.frobenius_layer))
        g_.attr("frobenius_layer", a.frobenius_layer);
    else if (!a.shared_X)
        g_.attr("layer", "not reported: each head has its own X (a layer needs a shared X)");
    g_.attr("stored", a.plan.store   ? "yes"
                      : a.plan.dense ? "no (above --store-limit)"
                      : a.plan.fits
                          ? "no (not formed: --svd needs no dense J)"
                          : "no (not formed: above --max-memory; --svd needs no dense J)");
}

}  // namespace attnspec
