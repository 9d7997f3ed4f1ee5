// The check table and its replay adapters (registry.hpp); how a row runs: run_loop.hpp.
#include "attnspec/proofs/registry.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "attnspec/base/errors.hpp"
#include "attnspec/proofs/attention_instances.hpp"
#include "attnspec/proofs/infsa_checks.hpp"
#include "attnspec/proofs/model_infsa.hpp"
#include "attnspec/proofs/model_kappa_j.hpp"
#include "attnspec/proofs/model_speca_lambda.hpp"
#include "attnspec/proofs/model_weights_kappa.hpp"
#include "attnspec/proofs/speca_sweep.hpp"
#include "attnspec/proofs/thm_3_3.hpp"
#include "attnspec/proofs/thm_3_4.hpp"
#include "attnspec/proofs/thm_3_4_model.hpp"
#include "attnspec/proofs/thm_3_5.hpp"
#include "attnspec/proofs/thm_3_8.hpp"
#include "attnspec/report/check_records.hpp"

namespace attnspec::proofs {

namespace {
// Replays: re-run a check on the inputs stored in a record (report/check_records.hpp).
using G = const std::string&;
CheckResult replay_thm_3_3(const H5Reader& r, G g) { return check_thm_3_3(stored_head(r, g)); }
CheckResult replay_thm_3_4(const H5Reader& r, G g) { return check_thm_3_4(stored_head(r, g)); }
CheckResult replay_thm_3_4_model(const H5Reader& r, G g) {
    return check_thm_3_4_model(stored_head(r, g));
}
CheckResult replay_thm_3_5(const H5Reader& r, G g) {
    return check_thm_3_5(stored_matrix(r, g, "W"));
}
CheckResult replay_lemma_3_7(const H5Reader& r, G g) {
    return check_lemma_3_7(stored_matrix(r, g, "W"), stored_matrix(r, g, "E"));
}
CheckResult replay_thm_3_8(const H5Reader& r, G g) {
    return check_thm_3_8(stored_matrix(r, g, "W"), stored_value(r, g, "lambda"));
}
CheckResult replay_thm_3_8_sufficient(const H5Reader& r, G g) {
    return check_thm_3_8_sufficient(stored_matrix(r, g, "W"), stored_value(r, g, "lambda"));
}
CheckResult replay_thm_3_8_trained(const H5Reader& r, G g) {
    return check_thm_3_8_trained(stored_matrix(r, g, "W"), stored_value(r, g, "lambda"));
}
CheckResult replay_thm_3_8_above_sigma1(const H5Reader& r, G g) {
    return check_thm_3_8_above_sigma1(stored_matrix(r, g, "W"), stored_value(r, g, "lambda"));
}
CheckResult replay_speca_sweep(const H5Reader& r, G g) {
    return sweep_speca(stored_head(r, g), stored_value(r, g, "q_only") > 0);
}
CheckResult replay_infsa_neumann(const H5Reader& r, G g) {
    return check_infsa_neumann(stored_matrix(r, g, "A_hat"), stored_value(r, g, "gamma"));
}
CheckResult replay_infsa_perron(const H5Reader& r, G g) {
    return check_infsa_perron(stored_matrix(r, g, "A_hat"));
}
}  // namespace

namespace {
// One row of the table, a named field per line (C++17 has no designated initializers): each
// setter fills the CheckInfo field of its name; a row converts to its CheckInfo.
class Row {
  public:
    explicit Row(std::string name) { c_.name = std::move(name); }
    Row& summary(std::string s) {
        c_.summary = std::move(s);
        return *this;
    }
    Row& statement(std::string file) {
        c_.statement_file = std::move(file);
        return *this;
    }
    Row& run(std::function<CheckRun(const RunOptions&)> f) {
        c_.run = std::move(f);
        return *this;
    }
    Row& replay(std::function<CheckResult(const H5Reader&, const std::string&)> f) {
        c_.replay = std::move(f);
        return *this;
    }
    Row& source(std::string s) {
        c_.source = std::move(s);
        return *this;
    }
    Row& kind(CheckKind k) {
        c_.kind = k;
        return *this;
    }
    Row& needs_dataset() {
        c_.needs_dataset = true;
        return *this;
    }
    Row& cost(double seconds, double instances) {
        c_.cost = {seconds, instances};
        return *this;
    }
    operator CheckInfo() const { return c_; }  // the table's element, implicitly

  private:
    CheckInfo c_;
};
}  // namespace

// The table: one row per check, one field per line.
const std::vector<CheckInfo>& registry() {
    static const std::vector<CheckInfo> table = {
        Row("thm3.3")
            .summary("closed-form Jacobian blocks J_Q, J_K, J_V and J_X = complex-step derivatives")
            .statement("proofs/thm_3_3.md")
            .run(run_thm_3_3)
            .replay(replay_thm_3_3)
            .source("derived by us; SC Thm 3.3 is not in the SC summary")
            .kind(CheckKind::theorem)
            .cost(0.20, 164),
        Row("thm3.4")
            .summary("J full rank => kappa(J) <= kappa(X)^3 kappa(Lambda) "
                     "kappa(W_V)(kappa(W_Q)+kappa(W_K)) + kappa(X) kappa(S)")
            .statement("proofs/thm_3_4.md")
            .run(run_thm_3_4)
            .replay(replay_thm_3_4)
            .source("SC summary, Thm 3.4; the exact bound from earlier notes")
            .kind(CheckKind::theorem)
            .cost(7.52, 654),
        Row("thm3.5")
            .summary("SVD correction: sigma_i(W+C) = sigma_i + sigma_1, "
                     "kappa(W+C) = 2s1/(s1+sr) <= 2")
            .statement("proofs/thm_3_5.md")
            .run(run_thm_3_5)
            .replay(replay_thm_3_5)
            .source("SC summary, Thm 3.5")
            .kind(CheckKind::theorem)
            .cost(0.28, 480),
        Row("lemma3.7")
            .summary("Weyl: |sigma_i(W+E) - sigma_i(W)| <= ||E||_2 (our reading of Lemma 3.7)")
            .statement("proofs/lemma_3_7.md")
            .run(run_lemma_3_7)
            .replay(replay_lemma_3_7)
            .source("Weyl's inequality; SC Lemma 3.7 is not in the SC summary")
            .kind(CheckKind::theorem)
            .cost(0.23, 288),
        Row("thm3.8")
            .summary("lambda > sigma_1(W) => kappa(W+lambda I) <= (lambda+s1)/(lambda-s1) "
                     "(proved bound)")
            .statement("proofs/thm_3_8.md")
            .run(run_thm_3_8)
            .replay(replay_thm_3_8)
            .source("SC summary, Thm 3.8")
            .kind(CheckKind::theorem)
            .cost(0.17, 288),
        Row("thm3.8-sufficient")
            .summary("lambda > s1 and kappa(W) > (lambda+s1)/(lambda-s1) => kappa(W+lambda I) < "
                     "kappa(W) (follows from the bound)")
            .statement("proofs/thm_3_8.md")
            .run(run_thm_3_8_sufficient)
            .replay(replay_thm_3_8_sufficient)
            .source("SC summary, Thm 3.8")
            .kind(CheckKind::reading)
            .cost(0.17, 288),
        Row("thm3.8-trained")
            .summary("||W||_2 <= 1 and lambda >= 2 => kappa(W+lambda I) < kappa(W) (reading for "
                     "trained weights; fails for some kappa(W) < 3, mapped)")
            .statement("proofs/thm_3_8.md")
            .run(run_thm_3_8_trained)
            .replay(replay_thm_3_8_trained)
            .source("earlier notes, 'for lambda >= 2 under specific conditions' (not in the SC "
                    "summary), on SC Thm 3.8; the hypothesis sigma_1(W) <= 1 is ours")
            .kind(CheckKind::reading)
            .cost(0.19, 288),
        Row("thm3.8-above-sigma1")
            .summary("lambda > sigma_1(W) alone => kappa(W+lambda I) < kappa(W) (a FALSE reading, "
                     "probed: expected violated)")
            .statement("proofs/thm_3_8.md")
            .run(run_thm_3_8_above_sigma1)
            .replay(replay_thm_3_8_above_sigma1)
            .source("SC summary, Thm 3.8")
            .kind(CheckKind::reading)
            .cost(0.13, 288),
        Row("specA-sweep")
            .summary("kappa(J) of SpecA (C = lambda I) over lambda x token scale x placement x "
                     "logit scale; where lambda = 10 lowers it, where it saturates")
            .statement("proofs/speca_sweep.md")
            .run(run_speca_sweep)
            .replay(replay_speca_sweep)
            .source("SC summary, the SpecA formula (lambda = 10) and its reported fall of "
                    "kappa(J) in training")
            .kind(CheckKind::experiment)
            .cost(1.34, 144),
        Row("infsa.neumann")
            .summary("IS Neumann kernel: LU residual, N >= I >= 0, AN = NA, truncation bound")
            .statement("proofs/infsa_neumann.md")
            .run(run_infsa_neumann)
            .replay(replay_infsa_neumann)
            .source("InfSA summary, Neumann kernel")
            .kind(CheckKind::theorem)
            .cost(0.27, 28),
        Row("infsa.perron")
            .summary("IS Perron: Collatz-Wielandt enclosure of rho(A_hat) vs EigenSolver")
            .statement("proofs/infsa_neumann.md")
            .run(run_infsa_perron)
            .replay(replay_infsa_perron)
            .source("InfSA summary, dominant eigenvector")
            .kind(CheckKind::theorem)
            .cost(0.01, 28),
        // The real-model analysis (issue 11): on the heads of --dataset (default minilm-l6).
        Row("model-weights-kappa")
            .summary("kappa(W_Q), kappa(W_K), kappa(W_V) of a real model before/after lambda I "
                     "(0.5, 1, 2, 10) and the SVD correction, Weyl bound beside")
            .statement("proofs/model_weights_kappa.md")
            .run(run_model_weights_kappa)
            .source("SC summary, Thm 3.5 and Thm 3.8 (on real weights)")
            .kind(CheckKind::experiment)
            .needs_dataset()
            .cost(3.35, 72),
        Row("thm3.4-model")
            .summary("thm3.4 on the heads of a real model (bias-free, its own s): kappa(J) <= "
                     "kappa(X)^3 kappa(Lambda) kappa(W_V)(kappa(W_Q)+kappa(W_K)) + kappa(X) "
                     "kappa(S)")
            .statement("proofs/thm_3_4_model.md")
            .run(run_thm_3_4_model)
            .replay(replay_thm_3_4_model)
            .source("SC summary, Thm 3.4; the exact bound from earlier notes")
            .kind(CheckKind::theorem)
            .needs_dataset()
            .cost(3.43, 72),
        Row("model-kappa-J")
            .summary("kappa(J) of a real model's heads beside the thm3.4 bound, its factors and "
                     "verdict per layer, head, sentence")
            .statement("proofs/model_kappa_j.md")
            .run(run_model_kappa_j)
            .source("SC summary, Thm 3.4 (on real weights)")
            .kind(CheckKind::experiment)
            .needs_dataset()
            .cost(4.22, 72),
        Row("model-speca-lambda")
            .summary("kappa(J) of SpecA (lambda I, lambda 0 to 10) on a real model's heads with "
                     "their biases")
            .statement("proofs/model_speca_lambda.md")
            .run(run_model_speca_lambda)
            .source("SC summary, the SpecA formula (lambda = 10) and its reported fall of "
                    "kappa(J) in training")
            .kind(CheckKind::experiment)
            .needs_dataset()
            .cost(9.26, 72),
        Row("model-infsa")
            .summary("InfSA on a real model's Q, K: rho(A_hat), min R, K for 1e-6, Linear-InfSA "
                     "cosine to the Perron vectors (the summary's 0.985)")
            .statement("proofs/model_infsa.md")
            .run(run_model_infsa)
            .source("InfSA summary, fidelity (cosine 0.985)")
            .kind(CheckKind::experiment)
            .needs_dataset()
            .cost(2.44, 576),
    };
    return table;
}

const char* to_string(CheckKind k) {
    switch (k) {
        case CheckKind::reading:
            return "reading";
        case CheckKind::experiment:
            return "experiment";
        case CheckKind::theorem:
            break;
    }
    return "theorem";
}

namespace {
// A search record ("search/<regime>") stays only when some --regime value containing "search"
// matches it.
bool keep_search_record(const std::vector<std::string>& filter, const std::string& regime) {
    if (regime.rfind("search/", 0) != 0 || filter.empty()) return true;
    for (const auto& f : filter)
        if (f.find("search") != std::string::npos && regime.find(f) != std::string::npos)
            return true;
    return false;
}
}  // namespace

CheckRun run_check(const CheckInfo& c, RunOptions opt) {
    const auto& f = opt.regimes;
    const bool names_search = std::any_of(f.begin(), f.end(), [](const std::string& v) {
        return v.find("search") != std::string::npos;
    });
    const bool skip_search = !f.empty() && !names_search;
    if (skip_search) opt.search_budget_s = 0;  // no time spent on results that would be dropped
    CheckRun run = c.run(opt);
    run.source = c.source;
    run.kind = to_string(c.kind);
    const auto n = run.results.size();
    run.results.erase(
        std::remove_if(run.results.begin(), run.results.end(),
                       [&](const CheckResult& r) { return !keep_search_record(f, r.regime); }),
        run.results.end());
    if (skip_search && !run.search_effort.empty())
        run.search_effort = "none: the --regime filter names no search regime";
    if (run.results.size() != n) run.summarize();
    return run;
}

const CheckInfo* find_check(const std::string& name) {
    for (const auto& c : registry())
        if (c.name == name) return &c;
    return nullptr;
}

namespace {
// A record's seed attribute: decimal digits only, at most 2^64 - 1 (DataError otherwise).
std::uint64_t stored_seed(const std::string& text, const std::string& group) {
    const bool digits = text.find_first_not_of("0123456789") == std::string::npos;
    errno = 0;
    const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
    if (!digits || errno == ERANGE)
        fail_data(group + ": seed '" + text.substr(0, 40) +
                  "' is not an integer from 0 to 18446744073709551615");
    return v;
}
}  // namespace

CheckResult replay_record(const CheckInfo& c, const H5Reader& r, const std::string& group) {
    if (!c.replay)
        throw Error(ExitCode::Usage, "check '" + c.name + "' cannot replay stored instances");
    check_replay_size(r, group);  // estimated from the declared shapes, before any read
    CheckResult res = c.replay(r, group);
    const StoredRecord id = read_check_record(r, group);
    if (!id.seed.empty()) res.seed = stored_seed(id.seed, group);
    if (!id.regime.empty()) res.regime = id.regime;
    return res;
}

double estimated_cost(const CheckInfo& c, const RunOptions& opt) {
    const RunCost& m = c.cost;
    if (m.seconds <= 0) return 1.0;
    if (opt.trials > 0 && m.instances > 0) return m.seconds * opt.trials / m.instances;
    return m.seconds * (opt.thorough ? 2.0 : 1.0);
}

std::vector<CheckRun> run_checks(const std::vector<const CheckInfo*>& checks, const RunOptions& opt,
                                 const CheckEvents& events) {
    std::vector<CheckTask> tasks;
    tasks.reserve(checks.size());
    for (const CheckInfo* c : checks)
        tasks.push_back(
            {[c](const RunOptions& o) { return run_check(*c, o); }, estimated_cost(*c, opt)});
    return run_side_by_side(tasks, opt, events);
}

}  // namespace attnspec::proofs
