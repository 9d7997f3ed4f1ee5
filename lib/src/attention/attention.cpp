// Attention inputs: validation, effective weights W + C, corrections, random instances.
#include "attnspec/attention/attention.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "attnspec/attention/corrections.hpp"
#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"

namespace attnspec {

namespace {

// Any matrix (owned or a strided view), read without a copy.
using MatRef = Eigen::Ref<const Eigen::MatrixXd, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

std::string shape(const MatRef& M) {
    return std::to_string(M.rows()) + "x" + std::to_string(M.cols());
}

void require_shape(const MatRef& M, Eigen::Index r, Eigen::Index c, const std::string& name,
                   const std::string& what) {
    if (M.rows() != r || M.cols() != c)
        fail_data(what + ": " + name + " is " + shape(M) + ", expected " + std::to_string(r) + "x" +
                  std::to_string(c));
    if (!M.allFinite()) fail_data(what + ": " + name + " contains NaN or Inf");
}

void validate_weights(const MatRef& W_Q, const MatRef& W_K, const MatRef& W_V, const MatRef& C_Q,
                      const MatRef& C_K, const MatRef& C_V, Eigen::Index D,
                      const std::string& what) {
    const Eigen::Index d = W_Q.cols();
    if (d == 0) fail_data(what + ": W_Q has no columns (d = 0)");
    require_shape(W_Q, D, d, "W_Q", what);
    require_shape(W_K, D, d, "W_K", what);
    require_shape(W_V, D, d, "W_V", what);
    if (C_Q.size()) require_shape(C_Q, D, d, "C_Q", what);
    if (C_K.size()) require_shape(C_K, D, d, "C_K", what);
    if (C_V.size()) require_shape(C_V, D, d, "C_V", what);
}

// A bias is optional (empty); when present it has length d and finite entries.
void validate_biases(const Eigen::VectorXd& b_Q, const Eigen::VectorXd& b_K,
                     const Eigen::VectorXd& b_V, Eigen::Index d, const std::string& what) {
    const std::pair<const Eigen::VectorXd*, const char*> biases[] = {
        {&b_Q, "b_Q"}, {&b_K, "b_K"}, {&b_V, "b_V"}};
    for (const auto& [b, name] : biases) {
        if (b->size() == 0) continue;
        if (b->size() != d)
            fail_data(what + ": " + name + " has length " + std::to_string(b->size()) +
                      ", expected d = " + std::to_string(d));
        if (!b->allFinite()) fail_data(what + ": " + name + " contains NaN or Inf");
    }
}

void validate_x_s(const MatRef& X, double s, const std::string& what) {
    if (X.rows() == 0 || X.cols() == 0) fail_data(what + ": X is empty (" + shape(X) + ")");
    if (!X.allFinite()) fail_data(what + ": X contains NaN or Inf");
    if (!(std::isfinite(s) && s > 0))
        fail_data(what + ": logit scale s must be finite and > 0, got " + std::to_string(s));
}

// W + C, or W itself (shared, not copied) when there is no correction.
SharedMatrix plus(const SharedMatrix& W, const Eigen::MatrixXd& C) {
    return C.size() ? SharedMatrix(Eigen::MatrixXd(W + C)) : W;
}

// Every kind; "lambda" parses only with its value ("lambda:10"), "given" never (supplied matrices).
constexpr EnumName<CorrectionKind> kCorrectionNames[] = {{CorrectionKind::none, "none"},
                                                         {CorrectionKind::lambda, "lambda"},
                                                         {CorrectionKind::svd, "svd"},
                                                         {CorrectionKind::given, "given"}};

}  // namespace

CorrectionSpec CorrectionSpec::parse(const std::string& text) {
    CorrectionSpec c;
    if (text.rfind("lambda:", 0) == 0) {
        const std::string v = text.substr(7);
        char* end = nullptr;
        c.lambda = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !std::isfinite(c.lambda) || c.lambda < 0)
            fail_usage("correction '" + text + "': lambda:<value> needs a finite value >= 0",
                       "correction");
        c.kind = CorrectionKind::lambda;
        return c;
    }
    for (const auto& e : kCorrectionNames)
        if (text == e.name && (e.value == CorrectionKind::none || e.value == CorrectionKind::svd)) {
            c.kind = e.value;
            return c;
        }
    fail_usage("unknown correction '" + text + "' (expected none, lambda:<value> or svd)",
               "correction");
}

std::string CorrectionSpec::describe() const {
    if (kind != CorrectionKind::lambda) return enum_name(kind, kCorrectionNames);
    char buf[64];
    std::snprintf(buf, sizeof buf, "lambda:%.17g", lambda);
    return buf;
}

void Head::validate(const std::string& what) const {
    validate_x_s(X, s, what);
    validate_weights(W_Q, W_K, W_V, C_Q, C_K, C_V, X.cols(), what);
    validate_biases(b_Q, b_K, b_V, W_Q.cols(), what);
}

Head Head::effective() const {
    Head e;
    e.X = X;
    e.s = s;
    e.W_Q = plus(W_Q, C_Q);
    e.W_K = plus(W_K, C_K);
    e.W_V = plus(W_V, C_V);
    e.b_Q = b_Q, e.b_K = b_K, e.b_V = b_V;  // biases are never corrected
    return e;
}

void apply_correction(Head& h, const CorrectionSpec& spec) {
    switch (spec.kind) {
        case CorrectionKind::given:
            return;
        case CorrectionKind::none:
            h.C_Q.resize(0, 0), h.C_K.resize(0, 0), h.C_V.resize(0, 0);
            return;
        case CorrectionKind::lambda:
            h.C_Q = lambda_correction(h.W_Q.rows(), h.W_Q.cols(), spec.lambda);
            h.C_K = lambda_correction(h.W_K.rows(), h.W_K.cols(), spec.lambda);
            h.C_V = lambda_correction(h.W_V.rows(), h.W_V.cols(), spec.lambda);
            return;
        case CorrectionKind::svd:
            h.C_Q = svd_correction(h.W_Q);
            h.C_K = svd_correction(h.W_K);
            h.C_V = svd_correction(h.W_V);
            return;
    }
}

Head MultiHead::head(Eigen::Index h) const {
    if (h < 0 || h >= H())
        fail_data("head index " + std::to_string(h) + " out of range [0, " + std::to_string(H()) +
                  ")");
    const HeadWeights& w = heads[static_cast<size_t>(h)];
    Head out;
    out.X = X;
    out.s = s;
    out.W_Q = w.W_Q, out.W_K = w.W_K, out.W_V = w.W_V;
    out.C_Q = w.C_Q, out.C_K = w.C_K, out.C_V = w.C_V;
    out.b_Q = w.b_Q, out.b_K = w.b_K, out.b_V = w.b_V;
    return out;
}

void MultiHead::validate(const std::string& what) const {
    validate_x_s(X, s, what);
    if (heads.empty()) fail_data(what + ": no heads (H = 0)");
    for (size_t h = 0; h < heads.size(); ++h) {
        const HeadWeights& w = heads[h];
        const std::string wh = what + ", head " + std::to_string(h);
        validate_weights(w.W_Q, w.W_K, w.W_V, w.C_Q, w.C_K, w.C_V, X.cols(), wh);
        validate_biases(w.b_Q, w.b_K, w.b_V, w.W_Q.cols(), wh);
        if (w.W_Q.cols() != heads[0].W_Q.cols())
            fail_data(wh + ": d = " + std::to_string(w.W_Q.cols()) + " differs from head 0's " +
                      std::to_string(heads[0].W_Q.cols()));
    }
}

BiasForm bias_form_from_string(const std::string& text) {
    if (text == "keep") return BiasForm::keep;
    if (text == "drop") return BiasForm::drop;
    fail_usage("bias form '" + text + "' (expected keep or drop)", "bias");
}

std::string apply_bias_form(std::vector<Head>& heads, BiasForm form) {
    bool has[3] = {false, false, false};
    for (Head& h : heads) {
        has[0] |= h.b_Q.size() > 0, has[1] |= h.b_K.size() > 0, has[2] |= h.b_V.size() > 0;
        if (form == BiasForm::drop) h.b_Q.resize(0), h.b_K.resize(0), h.b_V.resize(0);
    }
    if (!has[0] && !has[1] && !has[2]) return "bias-free (input has no biases)";
    if (form == BiasForm::drop) return "bias-free (paper form)";
    std::string names;
    for (int k = 0; k < 3; ++k)
        if (has[k]) names += std::string(names.empty() ? "" : ", ") + "b_" + "QKV"[k];
    return "with biases (" + names + ")";
}

double logit_scale(LogitScale k, Eigen::Index d) {
    return k == LogitScale::one ? 1.0 : 1.0 / std::sqrt(static_cast<double>(d));
}

MultiHead random_multihead(const RandomSpec& spec) {
    if (spec.N <= 0 || spec.D <= 0 || spec.d <= 0 || spec.H <= 0)
        fail_data("random instance: N, D, d, H must be positive");
    if (!(std::isfinite(spec.weight_scale) && spec.weight_scale > 0))
        fail_data("random instance: weight_scale = " + value_text(spec.weight_scale) +
                      " must be finite and > 0",
                  "weight_scale");
    if (spec.token_dist != "gaussian" && spec.token_dist != "layernorm")
        fail_usage(
            "unknown token distribution '" + spec.token_dist + "' (expected gaussian or layernorm)",
            "token_dist");
    Rng rng(spec.seed);
    MultiHead m;
    m.s = logit_scale(spec.scale, spec.d);
    Eigen::MatrixXd X = rng.gaussian(spec.N, spec.D);
    if (spec.token_dist == "layernorm") {
        for (Eigen::Index i = 0; i < spec.N; ++i) {
            auto r = X.row(i);
            r.array() -= r.mean();
            const double sd = std::sqrt(r.squaredNorm() / static_cast<double>(spec.D));
            if (sd > 0) r /= sd;  // D = 1 leaves a zero row: LayerNorm of one feature is 0
        }
    }
    m.X = std::move(X);
    const double ws = spec.weight_scale / std::sqrt(static_cast<double>(spec.D));
    for (Eigen::Index h = 0; h < spec.H; ++h) {
        HeadWeights w;
        w.W_Q = rng.gaussian(spec.D, spec.d, ws);
        w.W_K = rng.gaussian(spec.D, spec.d, ws);
        w.W_V = rng.gaussian(spec.D, spec.d, ws);
        m.heads.push_back(std::move(w));
    }
    return m;
}

Head random_head(const RandomSpec& spec) {
    RandomSpec one = spec;
    one.H = 1;
    return random_multihead(one).head(0);
}

Eigen::MatrixXd multihead_forward(const MultiHead& m) {
    m.validate();
    const Eigen::Index N = m.X.rows(), d = m.heads[0].W_Q.cols();
    Eigen::MatrixXd out(N, d * m.H());
    for (Eigen::Index h = 0; h < m.H(); ++h) {
        const Head e = m.head(h).effective();
        out.middleCols(h * d, d) =
            attention_forward<double>(e.X, e.W_Q, e.W_K, e.W_V, e.s, e.b_Q, e.b_K, e.b_V).A;
    }
    return out;
}

}  // namespace attnspec
