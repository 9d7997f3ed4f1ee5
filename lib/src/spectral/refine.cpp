// Refinement of the extremal singular triplets of an operator from the Gram Ritz vectors
// (proofs/spectral_enclosure.md §4): power steps for sigma_max, inverse iteration by PCG
// preconditioned with the Gram factor for sigma_min, and the residual-based Temple enclosure.
#include <cmath>
#include <limits>

#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/rounding.hpp"
#include "operator_spectrum_internal.hpp"

namespace attnspec::opspec {

void make_triplet(const LinearOperator& J, const Vec& u0, RefinedTriplet& t) {
    t.u = u0.normalized();
    Vec w = J.transpose_times(t.u);
    t.sigma = w.norm();
    t.v = t.sigma > 0 ? Vec(w / t.sigma) : Vec(w);
    t.res_v = (w - t.sigma * t.v).norm();
    t.res_u = (J * t.v - t.sigma * t.u).norm();
}

void set_rho(RefinedTriplet& t, double pad) {
    t.rho = iv::up(
        std::sqrt(0.5 * ((t.res_u + pad) * (t.res_u + pad) + (t.res_v + pad) * (t.res_v + pad))));
}

namespace {

// Preconditioned CG for (J J^T) x = b with M^{-1} = (G + tau I)^{-1}.
Vec pcg(const LinearOperator& J, const CholShiftOp& M, const Vec& b, int max_iter) {
    const Eigen::Index n = b.size();
    Vec x(n), z(n);
    M.perform_op(b.data(), x.data());
    Vec r = b - JJt(J, x);
    M.perform_op(r.data(), z.data());
    Vec p = z;
    double rz = r.dot(z);
    const double bn = b.norm();
    for (int it = 0; it < max_iter && r.norm() > 1e-13 * bn; ++it) {
        const Vec Ap = JJt(J, p);
        const double pAp = p.dot(Ap);
        if (!(pAp > 0)) break;  // (numerically) singular J J^T: keep the iterate
        const double a = rz / pAp;
        x += a * p;
        r -= a * Ap;
        M.perform_op(r.data(), z.data());
        const double rz2 = r.dot(z);
        p = z + (rz2 / rz) * p;
        rz = rz2;
    }
    return x;
}

// Enclosure of one refined triplet; alpha/beta bound the neighbouring singular values.
void enclose(RefinedTriplet& t, Interval gram, double alpha, double beta, double pad, bool is_max) {
    set_rho(t, pad);
    TripletBound tb;
    tb.theta = t.sigma;
    tb.theta_err = 2 * pad + 4 * kUnitRoundoff * t.sigma;
    tb.rho = t.rho;
    Interval enc = gram;
    t.basis = "gram-weyl";
    // Courant-Fischer with the unit u: sigma_min <= ||J^T u|| <= sigma_max (rows <= cols)
    if (is_max)
        enc.lo = std::max(enc.lo, iv::down(t.sigma - tb.theta_err));
    else
        enc.hi = std::min(enc.hi, iv::up(t.sigma + tb.theta_err));
    const Interval jw = iv::around(t.sigma, t.rho + tb.theta_err);
    const bool identified = (gram.lo > alpha && gram.hi < beta) || (jw.lo > alpha && jw.hi < beta);
    if (identified) {
        if (jw.lo > alpha && jw.hi < beta) {
            enc = iv::intersect(enc, jw);
            t.basis = "jordan-wielandt";
        }
        const Interval tk = temple_enclosure(tb, alpha, beta);
        if (tk.lo <= tk.hi) {
            enc = iv::intersect(enc, tk);
            t.basis = "temple";
        }
    }
    if (enc.lo > enc.hi) {  // the assumptions (gram error, product error) are contradicted
        enc = {std::min(enc.lo, enc.hi), std::max(enc.lo, enc.hi)};
        t.basis += " (inconsistent: assumptions violated)";
    }
    t.enclosure = {std::max(0.0, enc.lo), enc.hi};
}

}  // namespace

Interval gram_interval(double lambda, double delta) {
    return {iv::down(std::sqrt(std::max(0.0, lambda - delta))),
            iv::up(std::sqrt(std::max(0.0, lambda + delta)))};
}

double refine_max(const LinearOperator& J, const GramEigs& d, double gram_error, double pe,
                  int steps, RefinedTriplet& t) {
    const double lam1 = d.top_vals[0];
    t.sigma_gram = std::sqrt(std::max(0.0, lam1));
    make_triplet(J, d.top_vecs.col(0), t);
    for (int k = 0; k < steps && t.res_u > 8 * pe * t.sigma; ++k) {
        make_triplet(J, J * t.v, t);
        t.steps = k + 1;
    }
    const double pad = iv::up(pe * t.sigma * 1.01);
    // the neighbour's bound: none when J has one row; unknown (no identification) when the
    // eigensolver returned one pair of several
    const double alpha_top = d.top_vals.size() > 1
                                 ? gram_interval(d.top_vals[1], gram_error + d.top_res[1]).hi
                             : J.rows() > 1 ? std::numeric_limits<double>::infinity()
                                            : 0.0;
    enclose(t, gram_interval(lam1, gram_error + d.top_res[0]), alpha_top,
            std::numeric_limits<double>::infinity(), pad, true);
    return pad;
}

void refine_min(const LinearOperator& J, const CholShiftOp& chol, const GramEigs& d,
                double gram_error, double pe, double smax, double pad, int steps, int pcg_max_iter,
                RefinedTriplet& t) {
    t.sigma_gram = std::sqrt(std::max(0.0, d.bot_vals[0]));
    make_triplet(J, d.bot_vecs.col(0), t);
    for (int k = 0; k < steps && t.res_u > 8 * pe * smax; ++k) {
        RefinedTriplet next;
        make_triplet(J, pcg(J, chol, t.u, pcg_max_iter), next);
        if (!(next.res_u < t.res_u)) break;
        next.sigma_gram = t.sigma_gram;
        t = next;
        t.steps = k + 1;
    }
    const double beta_bot = d.bot_vals.size() > 1
                                ? gram_interval(d.bot_vals[1], gram_error + d.bot_res[1]).lo
                            : J.rows() > 1 ? 0.0
                                           : std::numeric_limits<double>::infinity();
    enclose(t, gram_interval(d.bot_vals[0], gram_error + d.bot_res[0]), 0.0, beta_bot, pad, false);
}

}  // namespace attnspec::opspec
