// Seeded stress inputs for attention kernels (kernels/stress.hpp).
#include "attnspec/kernels/stress.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"

namespace attnspec::kernels {
namespace {

constexpr EnumName<StressCase> kStressNames[] = {
    {StressCase::gaussian, "gaussian"},     {StressCase::large_logits, "large-logits"},
    {StressCase::near_ties, "near-ties"},   {StressCase::spike_v, "spike-v"},
    {StressCase::heavy_tail, "heavy-tail"}, {StressCase::rank_deficient_k, "rank-deficient-k"},
    {StressCase::denormal, "denormal"},     {StressCase::nan_q, "nan-q"},
    {StressCase::inf_q, "inf-q"},           {StressCase::nan_k, "nan-k"},
    {StressCase::inf_k, "inf-k"},           {StressCase::nan_v, "nan-v"},
    {StressCase::inf_v, "inf-v"},           {StressCase::nan_do, "nan-do"},
    {StressCase::inf_do, "inf-do"},         {StressCase::nan_tq, "nan-tq"},
    {StressCase::inf_tq, "inf-tq"},         {StressCase::nan_tk, "nan-tk"},
    {StressCase::inf_tk, "inf-tk"},         {StressCase::nan_tv, "nan-tv"},
    {StressCase::inf_tv, "inf-tv"},
};

constexpr double kLargeLogit = 1e4;  // max |s q.k| of large-logits
constexpr double kTieSpread = 1e-3;  // near-ties: k_j = b + 1e-3 g_j
constexpr double kSpike = 1e3;       // spike-v: the one-hot value
constexpr double kHeavyClip = 1e3;   // heavy-tail: |x| clipped (fp16's range is 65504)
constexpr int kDenormalShift = 4;    // denormal: k = 2^(emin - 4) g, |g| clipped to 8
constexpr double kDenormalClip = 8;  // so |k| <= 2^(emin - 1)
constexpr std::uint64_t kDirectionStream = 0xD1B54A32D192ED03ULL;  // dO and tangents: seed ^ this
constexpr std::uint64_t kMaskStream = 0x9E3779B97F4A7C15ULL;       // masks: seed ^ this

struct Dims {
    long heads = 1, N = 0, d = 0;  // heads: B H flattened
};

Array filled(const std::vector<std::int64_t>& shape, Rng& rng, double (*draw)(Rng&)) {
    Array a;
    a.shape = shape;
    std::size_t n = 1;
    for (std::int64_t e : shape) n *= static_cast<std::size_t>(e);
    a.values.resize(n);
    for (double& x : a.values) x = draw(rng);
    return a;
}

double normal(Rng& r) { return r.normal(); }
double unit(Rng& r) { return r.uniform(); }  // U(0, 1)
// Student's t with 3 degrees of freedom: N(0, 1) / sqrt(chi^2_3 / 3), clipped.
double heavy(Rng& r) {
    double chi2 = 0;
    for (int i = 0; i < 3; ++i) {
        const double g = r.normal();
        chi2 += g * g;
    }
    const double x = r.normal() / std::sqrt(chi2 / 3);
    return std::clamp(x, -kHeavyClip, kHeavyClip);
}

// K rows around one base row per head: b + spread g_j.
void near_ties(Array& k, Rng& rng, const Dims& D) {
    for (long h = 0; h < D.heads; ++h) {
        std::vector<double> b(static_cast<size_t>(D.d));
        for (double& x : b) x = rng.normal();
        for (long j = 0; j < D.N; ++j)
            for (long c = 0; c < D.d; ++c)
                k.values[(h * D.N + j) * D.d + c] = b[c] + kTieSpread * rng.normal();
    }
}

// K = G H / sqrt(r) per head.
void rank_deficient(Array& k, Rng& rng, const Dims& D) {
    const long r = std::max(1L, D.d / 8);
    for (long h = 0; h < D.heads; ++h) {
        const Eigen::MatrixXd K =
            rng.gaussian(D.N, r) * rng.gaussian(r, D.d) / std::sqrt(double(r));
        for (long j = 0; j < D.N; ++j)
            for (long c = 0; c < D.d; ++c) k.values[(h * D.N + j) * D.d + c] = K(j, c);
    }
}

// Scales q and k by one factor so that max |s q.k| over the tensor is kLargeLogit.
void large_logits(Array& q, Array& k, const Dims& D, double s) {
    double mx = 0;
    for (long h = 0; h < D.heads; ++h)
        for (long i = 0; i < D.N; ++i)
            for (long j = 0; j < D.N; ++j) {
                double dot = 0;
                for (long c = 0; c < D.d; ++c)
                    dot += q.values[(h * D.N + i) * D.d + c] * k.values[(h * D.N + j) * D.d + c];
                mx = std::max(mx, std::fabs(s * dot));
            }
    const double f = mx > 0 ? std::sqrt(kLargeLogit / mx) : 1.0;
    for (double& x : q.values) x *= f;
    for (double& x : k.values) x *= f;
}

// denormal: k = 2^(emin - 4) g with |g| clipped to 8 and v = 2^(emin - 1) U(0, 1), below the
// smallest normal 2^emin of `storage` (q stays N(0, 1): the logits s q.k are ~2^(emin - 4)).
void denormal(Array& k, Array& v, Format storage) {
    const double tiny = smallest_normal(storage);
    const int e = format_spec(storage).emin - kDenormalShift;
    for (double& x : k.values) x = std::ldexp(std::clamp(x, -kDenormalClip, kDenormalClip), e);
    for (double& x : v.values) x *= tiny / 2;
}

// One non-finite element per head of `a` (heads of N rows of width d), its row and column (and,
// with `sign`, the sign of +-inf) drawn from `rng`.
void plant(Array& a, bool is_nan, bool sign, Rng& rng, long N, long d) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const long heads = static_cast<long>(a.values.size()) / (N * d);
    for (long h = 0; h < heads; ++h) {
        const long row = rng.integer(0, N - 1), col = rng.integer(0, d - 1);
        double x = is_nan ? nan : inf;
        if (sign && rng.integer(0, 1) == 1) x = -inf;
        a.values[static_cast<size_t>((h * N + row) * d + col)] = x;
    }
}

// The array of q, k, v a case of nan-q .. inf-v names.
void plant_nonfinite(StressCase c, AttentionProblem& p, Rng& rng, const Dims& D) {
    Array& a = c == StressCase::nan_q || c == StressCase::inf_q   ? p.q
               : c == StressCase::nan_k || c == StressCase::inf_k ? p.k
                                                                  : p.v;
    const bool is_nan = c == StressCase::nan_q || c == StressCase::nan_k || c == StressCase::nan_v;
    plant(a, is_nan, c == StressCase::inf_v, rng, D.N, D.d);
}

// nan-do .. inf-tv: the cases planting into a direction array (generate_directions).
bool direction_case(StressCase c) {
    return static_cast<int>(c) >= static_cast<int>(StressCase::nan_do);
}

}  // namespace

const char* stress_name(StressCase c) { return enum_name(c, kStressNames); }

StressCase parse_stress(const std::string& text, const std::string& parameter) {
    return enum_from_name(text, kStressNames, "stress case", parameter);
}

std::vector<StressCase> stress_cases() {
    std::vector<StressCase> all;
    for (const auto& e : kStressNames)
        if (e.value != StressCase::denormal && !is_nonfinite_case(e.value)) all.push_back(e.value);
    return all;
}

std::vector<StressCase> nonfinite_stress_cases() {
    std::vector<StressCase> all;
    for (const auto& e : kStressNames)
        if (is_nonfinite_case(e.value) && !direction_case(e.value)) all.push_back(e.value);
    return all;
}

std::vector<StressCase> derivative_nonfinite_cases(bool vjp) {
    std::vector<StressCase> all = nonfinite_stress_cases();
    for (const auto& e : kStressNames) {
        const bool is_do = e.value == StressCase::nan_do || e.value == StressCase::inf_do;
        if (direction_case(e.value) && is_do == vjp) all.push_back(e.value);
    }
    return all;
}

std::vector<StressCase> nonfinite_cases_for(const std::string& operation) {
    if (operation == "attention" || operation == "linear-infsa" || operation == "pure-infsa" ||
        operation == "neumann")
        return nonfinite_stress_cases();
    if (operation == "attention-vjp" || operation == "attention-jvp")
        return derivative_nonfinite_cases(operation == "attention-vjp");
    return {};
}

bool is_nonfinite_case(StressCase c) {
    return static_cast<int>(c) >= static_cast<int>(StressCase::nan_q);
}

AttentionProblem generate_stress(StressCase c, std::uint64_t seed,
                                 const std::vector<std::int64_t>& shape, Format storage,
                                 double scale) {
    if (shape.size() < 2 || shape.size() > 4)
        fail_data("a stress shape is (N, d), (H, N, d) or (B, H, N, d), got " + shape_text(shape));
    double count = 1;
    for (std::int64_t e : shape) {
        if (e < 1) fail_data("a stress shape has dimensions >= 1, got " + shape_text(shape));
        count *= static_cast<double>(e);
    }
    if (count > double(1 << 28))
        fail_data("a stress shape above 2^28 elements: " + shape_text(shape));
    Dims D;
    D.N = static_cast<long>(shape[shape.size() - 2]), D.d = static_cast<long>(shape.back());
    D.heads = static_cast<long>(count) / (D.N * D.d);
    Rng rng(seed);
    AttentionProblem p;
    p.scale = scale;
    const double s = scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(D.d));
    double (*draw)(Rng&) = c == StressCase::heavy_tail ? heavy : normal;
    p.q = filled(shape, rng, draw);
    if (c == StressCase::near_ties)
        for (double& x : p.q.values) x *= 3;
    p.k = filled(shape, rng, draw);
    if (c == StressCase::near_ties) near_ties(p.k, rng, D);
    if (c == StressCase::rank_deficient_k) rank_deficient(p.k, rng, D);
    p.v = filled(shape, rng, c == StressCase::denormal ? unit : draw);
    if (c == StressCase::spike_v)
        for (long h = 0; h < D.heads; ++h)
            for (long col = 0; col < D.d; ++col)
                p.v.values[(h * D.N + D.N / 2) * D.d + col] = col == 0 ? kSpike : 0.0;
    if (c == StressCase::large_logits) large_logits(p.q, p.k, D, s);
    if (c == StressCase::denormal) denormal(p.k, p.v, storage);
    for (Array* a : {&p.q, &p.k, &p.v})
        for (double& x : a->values) x = round_to(x, storage);
    if (is_nonfinite_case(c) && !direction_case(c)) plant_nonfinite(c, p, rng, D);
    return p;
}

std::vector<Array> generate_directions(StressCase c, std::uint64_t seed,
                                       const std::vector<std::vector<std::int64_t>>& shapes,
                                       Format storage) {
    Rng rng(seed ^ kDirectionStream);
    double (*draw)(Rng&) = c == StressCase::heavy_tail ? heavy : normal;
    std::vector<Array> out;
    for (const auto& shape : shapes) {
        out.push_back(filled(shape, rng, draw));
        for (double& x : out.back().values) x = round_to(x, storage);
    }
    if (!direction_case(c)) return out;
    const int k = static_cast<int>(c) - static_cast<int>(StressCase::nan_do);  // do, do, tq, tq, ..
    const size_t want = k < 2 ? 1 : 3, at = k < 2 ? 0 : static_cast<size_t>(k / 2 - 1);
    if (shapes.size() != want)
        fail_data(std::string("stress case ") + stress_name(c) + " plants into " +
                  (want == 1 ? "the cotangent do (attention-vjp)" : "a tangent (attention-jvp)"));
    const auto& shape = shapes[at];
    const long d = static_cast<long>(shape.back());
    const long N = static_cast<long>(shape[shape.size() - 2]);
    plant(out[at], k % 2 == 0, k % 2 == 1, rng, N, d);
    return out;
}

Array generate_mask(MaskKind mask, std::uint64_t seed, const std::vector<std::int64_t>& q_shape,
                    Format storage) {
    if (!general_mask(mask))
        fail_data(std::string("a generated mask is boolean or additive, not ") + mask_name(mask),
                  "mask");
    const std::size_t rank = q_shape.size();
    const long N = static_cast<long>(q_shape[rank - 2]);
    const long B = rank == 4 ? static_cast<long>(q_shape[0]) : 1;
    const long H = rank >= 3 ? static_cast<long>(q_shape[rank - 3]) : 1;
    Array m;
    m.shape.assign(q_shape.begin(), q_shape.end() - 1);
    m.shape.push_back(N);
    m.values.assign(static_cast<size_t>(B * H * N * N), 0.0);
    Rng rng(seed ^ kMaskStream);
    const long full = 7 % std::min(N, 16L);
    const double hidden = mask == MaskKind::boolean ? 0.0 : -HUGE_VAL;
    const long pad_max = N / 4;  // the key padding hides 0 .. floor(N / 4) keys
    for (long b = 0; b < B; ++b) {
        const long pad = static_cast<long>(std::floor(rng.uniform(0, double(pad_max + 1))));
        for (long h = 0; h < H; ++h)
            for (long i = 0; i < N; ++i)
                for (long j = 0; j < N; ++j) {
                    const bool hole = rng.uniform() < 0.125;
                    const double value = rng.uniform(-4, 0);
                    const bool hide = hole || j >= N - std::min(pad, N / 4) || i % 16 == full;
                    m.values[static_cast<size_t>(((b * H + h) * N + i) * N + j)] =
                        hide                        ? hidden
                        : mask == MaskKind::boolean ? 1.0
                                                    : round_to(value, storage);
                }
    }
    return m;
}

}  // namespace attnspec::kernels
