// The /jacobian report section (report/jacobian_section.hpp).
#include "attnspec/report/jacobian_section.hpp"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "attnspec/report/names.hpp"
#include "attnspec/report/spectrum_record.hpp"

namespace attnspec {

namespace {

namespace jn = names::jacobian;

std::int64_t i64(Eigen::Index n) { return static_cast<std::int64_t>(n); }
}  // namespace

JacobianSection::JacobianSection(H5Group& parent, const AttentionHeads& in, JacobianWrt wrt,
                                 const std::string& source, const std::string& correction,
                                 const std::string& bias_form)
    : g_(parent.group(jn::kGroup)), in_(in), wrt_(wrt) {
    const Head& h0 = in.heads.at(0);
    g_.attr(jn::kWrt, to_string(wrt));
    if (in.uniform()) g_.attr(jn::ks, h0.s);
    g_.attr(jn::kCorrection, correction);
    g_.attr("bias_form", bias_form);
    if (in.uniform()) {
        g_.attr(jn::kN, i64(h0.N())), g_.attr(jn::kD, i64(h0.D()));
        g_.attr(jn::kd, i64(h0.d()));
    }
    g_.attr("H", i64(static_cast<Eigen::Index>(in.size())));
    g_.attr(jn::kSource, source);
    if (!in.dtype.empty()) g_.attr("input_dtype", in.dtype);  // as stored in the --input file
    g_.attr(jn::kVec,
            "column-major; rows i + N c of A (N x d); columns a + D b of W_* (blocks Q, K, V) or "
            "m + N a of X");
    g_.attr(jn::kEvaluatedAt, "W + C (corrections frozen)");
    g_.attr(jn::kSharedX, in.shared_X ? "yes" : "no");
    if (in.shared_X) g_.write("X", h0.X);
}

void JacobianSection::write_head(std::size_t h, const HeadJacobian& r, const Eigen::MatrixXd& J) {
    const Head& hd = in_.heads.at(h);
    H5Group gh = g_.group(jn::kHeadPrefix + std::to_string(h));
    if (r.has_spectrum) {
        H5Group gs = gh.group(jn::kSpectrum);
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
    gh.attr(jn::kName, in_.names.at(h));
    gh.attr(jn::kN, i64(hd.N())), gh.attr(jn::kD, i64(hd.D())), gh.attr(jn::kd, i64(hd.d()));
    gh.attr(jn::ks, hd.s);
    if (std::isfinite(r.frobenius)) gh.attr(jn::kFrobenius, r.frobenius);
    if (std::isfinite(r.max_abs)) gh.attr(jn::kMaxAbs, r.max_abs), gh.attr(jn::kSeconds, r.seconds);
    if (r.has_blocks)
        for (int b = 0; b < 3; ++b)
            gh.attr(std::string("frobenius_J_") + "QKV"[b], r.frobenius_blocks[b]);
    // Above 64 MiB J is written uncompressed: deflate would cost seconds per 100 MB of values
    // that barely compress.
    if (J.size()) gh.write(jacobian_symbol(wrt_), J, 8.0 * J.size() <= 64.0 * (1 << 20));
}

void JacobianSection::finish(const JacobianAnalysis& a) {
    if (a.shared_X && std::isfinite(a.frobenius_layer))
        g_.attr(jn::kFrobeniusLayer, a.frobenius_layer);
    else if (!a.shared_X)
        g_.attr("layer", "not reported: each head has its own X (a layer needs a shared X)");
    g_.attr(jn::kStored, a.plan.store   ? "yes"
                         : a.plan.dense ? "no (above --store-limit)"
                         : a.plan.fits
                             ? "no (not formed: --svd needs no dense J)"
                             : "no (not formed: above --max-memory; --svd needs no dense J)");
}

}  // namespace attnspec
