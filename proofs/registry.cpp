#include "attnspec/proofs/registry.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/io/check_records.hpp"
#include "attnspec/io/model_input.hpp"
#include "attnspec/proofs/attention_instances.hpp"
#include "attnspec/proofs/infsa_checks.hpp"
#include "attnspec/proofs/instance_spread.hpp"
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

namespace attnspec::proofs {

namespace {
// Replays: re-run a check on the inputs stored in a record (io/check_records.hpp).
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

// clang-format off
const std::vector<CheckInfo>& registry() {
    static const std::vector<CheckInfo> table = {
        {"thm3.3", "closed-form Jacobian blocks J_Q, J_K, J_V and J_X = complex-step derivatives",
         "proofs/thm_3_3.md", run_thm_3_3, replay_thm_3_3, "derived by us; SC Thm 3.3 is not in the SC summary", CheckKind::theorem, false, {0.20, 164}},
        {"thm3.4", "J full rank => kappa(J) <= kappa(X)^3 kappa(Lambda) "
                   "kappa(W_V)(kappa(W_Q)+kappa(W_K)) + kappa(X) kappa(S)",
         "proofs/thm_3_4.md", run_thm_3_4, replay_thm_3_4, "SC summary, Thm 3.4; the exact bound from earlier notes", CheckKind::theorem, false, {7.52, 654}},
        {"thm3.5", "SVD correction: sigma_i(W+C) = sigma_i + sigma_1, "
                   "kappa(W+C) = 2s1/(s1+sr) <= 2",
         "proofs/thm_3_5.md", run_thm_3_5, replay_thm_3_5, "SC summary, Thm 3.5", CheckKind::theorem, false, {0.28, 480}},
        {"lemma3.7", "Weyl: |sigma_i(W+E) - sigma_i(W)| <= ||E||_2 (our reading of Lemma 3.7)",
         "proofs/lemma_3_7.md", run_lemma_3_7, replay_lemma_3_7, "Weyl's inequality; SC Lemma 3.7 is not in the SC summary", CheckKind::theorem, false, {0.23, 288}},
        {"thm3.8", "lambda > sigma_1(W) => kappa(W+lambda I) <= (lambda+s1)/(lambda-s1) "
                   "(proved bound)",
         "proofs/thm_3_8.md", run_thm_3_8, replay_thm_3_8, "SC summary, Thm 3.8", CheckKind::theorem, false, {0.17, 288}},
        {"thm3.8-sufficient", "lambda > s1 and kappa(W) > (lambda+s1)/(lambda-s1) => "
                              "kappa(W+lambda I) < kappa(W) (follows from the bound)",
         "proofs/thm_3_8.md", run_thm_3_8_sufficient, replay_thm_3_8_sufficient,
         "SC summary, Thm 3.8", CheckKind::reading, false, {0.17, 288}},
        {"thm3.8-trained", "||W||_2 <= 1 and lambda >= 2 => kappa(W+lambda I) < kappa(W) "
                           "(reading for trained weights; fails for some kappa(W) < 3, mapped)",
         "proofs/thm_3_8.md", run_thm_3_8_trained, replay_thm_3_8_trained,
         "earlier notes, 'for lambda >= 2 under specific conditions' (not in the SC summary), on "
         "SC Thm 3.8; the hypothesis sigma_1(W) <= 1 is ours", CheckKind::reading, false, {0.19, 288}},
        {"thm3.8-above-sigma1", "lambda > sigma_1(W) alone => kappa(W+lambda I) < kappa(W) "
                                "(a FALSE reading, probed: expected violated)",
         "proofs/thm_3_8.md", run_thm_3_8_above_sigma1, replay_thm_3_8_above_sigma1,
         "SC summary, Thm 3.8", CheckKind::reading, false, {0.13, 288}},
        {"specA-sweep", "kappa(J) of SpecA (C = lambda I) over lambda x token scale "
                        "x placement x logit scale; where lambda = 10 lowers it, where it saturates",
         "proofs/speca_sweep.md", run_speca_sweep, replay_speca_sweep,
         "SC summary, the SpecA formula (lambda = 10) and its reported fall of kappa(J) in training", CheckKind::experiment, false, {1.34, 144}},
        {"infsa.neumann", "IS Neumann kernel: LU residual, N >= I >= 0, AN = NA, truncation bound",
         "proofs/infsa_neumann.md", run_infsa_neumann, replay_infsa_neumann, "InfSA summary, Neumann kernel", CheckKind::theorem, false, {0.27, 28}},
        {"infsa.perron", "IS Perron: Collatz-Wielandt enclosure of rho(A_hat) vs EigenSolver",
         "proofs/infsa_neumann.md", run_infsa_perron, replay_infsa_perron, "InfSA summary, dominant eigenvector", CheckKind::theorem, false, {0.01, 28}},
        // The real-model analysis (issue 11): on the heads of --dataset (default minilm-l6).
        {"model-weights-kappa", "kappa(W_Q), kappa(W_K), kappa(W_V) of a real model before/after "
                                "lambda I (0.5, 1, 2, 10) and the SVD correction, Weyl bound beside",
         "proofs/model_weights_kappa.md", run_model_weights_kappa, nullptr,
         "SC summary, Thm 3.5 and Thm 3.8 (on real weights)", CheckKind::experiment, true, {3.35, 72}},
        {"thm3.4-model", "thm3.4 on the heads of a real model (bias-free, its own s): kappa(J) <= "
                         "kappa(X)^3 kappa(Lambda) kappa(W_V)(kappa(W_Q)+kappa(W_K)) + kappa(X) kappa(S)",
         "proofs/thm_3_4_model.md", run_thm_3_4_model, replay_thm_3_4_model,
         "SC summary, Thm 3.4; the exact bound from earlier notes", CheckKind::theorem, true, {3.43, 72}},
        {"model-kappa-J", "kappa(J) of a real model's heads beside the thm3.4 bound, its factors "
                          "and verdict per layer, head, sentence",
         "proofs/model_kappa_j.md", run_model_kappa_j, nullptr,
         "SC summary, Thm 3.4 (on real weights)", CheckKind::experiment, true, {4.22, 72}},
        {"model-speca-lambda", "kappa(J) of SpecA (lambda I, lambda 0 to 10) on a real model's "
                               "heads with their biases",
         "proofs/model_speca_lambda.md", run_model_speca_lambda, nullptr,
         "SC summary, the SpecA formula (lambda = 10) and its reported fall of kappa(J) in training", CheckKind::experiment, true, {9.26, 72}},
        {"model-infsa", "InfSA on a real model's Q, K: rho(A_hat), min R, K for 1e-6, "
                        "Linear-InfSA cosine to the Perron vectors (the summary's 0.985)",
         "proofs/model_infsa.md", run_model_infsa, nullptr,
         "InfSA summary, fidelity (cosine 0.985)", CheckKind::experiment, true, {2.44, 576}},
    };
    return table;
}
// clang-format on

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

namespace {
std::string text(double x) {
    std::ostringstream os;
    os << x;
    return os.str();
}
}  // namespace

void check_run_options(const RunOptions& opt) {
    if (opt.trials < 0)
        throw Error(ExitCode::Usage, "trials = " + std::to_string(opt.trials) + " must be >= 0",
                    "trials");
    if (!(opt.time_budget_s >= 0) || !std::isfinite(opt.time_budget_s))
        throw Error(ExitCode::Usage,
                    "time_budget_s = " + text(opt.time_budget_s) + " s must be >= 0",
                    "time_budget_s");
    if (opt.shape.size() == 2) {  // before any check draws: a lower bound of what each needs
        const double A = double(opt.shape[0]), B = double(opt.shape[1]);
        // W, its correction, U and V of its SVD (weight checks: 4 A x B); Â of N = A tokens
        // (InfSA checks: A x A); the attention checks' J (2AB x 3AB) exceeds both.
        check_allocation(8.0 * std::min(4.0 * A * B, A * A), memory_limit_bytes(),
                         "--shape " + std::to_string(opt.shape[0]) + "x" +
                             std::to_string(opt.shape[1]) +
                             " (at least four A x B or one A x A matrix)",
                         "max_bytes");
    }
    if (opt.search_evals < -1)
        throw Error(ExitCode::Usage,
                    "search_evals = " + std::to_string(opt.search_evals) + " must be >= 0",
                    "search_evals");
    if (!(opt.search_seconds >= 0))
        throw Error(ExitCode::Usage,
                    "search_seconds = " + text(opt.search_seconds) + " s must be >= 0",
                    "search_seconds");
    if (!opt.dataset.empty())  // Usage on a malformed selector, NoInput on an unknown name
        find_dataset(DatasetSelector::parse(opt.dataset).name);
    if (opt.kappa_lambda != "nz" && opt.kappa_lambda != "strict")
        throw Error(ExitCode::Usage,
                    "kappa_lambda = '" + opt.kappa_lambda + "' must be nz or strict",
                    "kappa_lambda");
}

namespace {
double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

namespace {
std::mutex& runner_mutex() {
    static std::mutex m;
    return m;
}
thread_local bool holds_runner_lock = false;
}  // namespace

RunnerLock::RunnerLock() : took_(!holds_runner_lock) {
    if (!took_) return;
    runner_mutex().lock();
    holds_runner_lock = true;
}

RunnerLock::~RunnerLock() {
    if (!took_) return;
    holds_runner_lock = false;
    runner_mutex().unlock();
}

RunnerUnlock::RunnerUnlock() : released_(holds_runner_lock) {
    if (!released_) return;
    holds_runner_lock = false;
    runner_mutex().unlock();
}

RunnerUnlock::~RunnerUnlock() {
    if (!released_) return;
    runner_mutex().lock();
    holds_runner_lock = true;
}

RunLoop::RunLoop(const RunOptions& opt, const std::string& check, const std::string& claim,
                 const std::string& headline)
    : opt_(opt), t0_(now_s()) {
    run_.check = check;
    run_.claim = claim;
    run_.seed = opt.seed;
    run_.headline = headline;
}

long RunLoop::per_regime(long regimes, long quick, long thorough) {
    regimes_ = std::max<long>(1, regimes);
    if (opt_.trials > 0) {
        per_ = (opt_.trials + regimes_ - 1) / regimes_;
        total_ = opt_.trials;
    } else {
        per_ = opt_.thorough ? thorough : quick;
        total_ = per_ * regimes_;
    }
    return per_;
}

long RunLoop::per_regime(const std::vector<std::string>& regimes, long quick, long thorough) {
    long kept = 0;
    for (const auto& r : regimes) kept += selected(r) ? 1 : 0;
    const long n = opt_.trials > 0 ? opt_.trials : (opt_.thorough ? thorough : quick) * kept;
    per_ = kept == 0         ? 0  // nothing to draw: the loops do not run
           : opt_.trials > 0 ? (n + kept - 1) / kept
                             : (opt_.thorough ? thorough : quick);
    share_.assign(regimes.size(), 0);
    long k = 0;  // the k-th kept regime draws n / kept, one more while k < n mod kept
    for (std::size_t r = 0; r < regimes.size(); ++r)
        if (selected(regimes[r])) share_[r] = n / kept + (k++ < n % kept ? 1 : 0);
    regimes_ = std::max<long>(1, static_cast<long>(regimes.size()));
    total_ = kept ? n : 0;
    return per_;
}

bool RunLoop::selected(const std::string& regime) const {
    if (opt_.regimes.empty()) return true;
    if (std::find(offered_.begin(), offered_.end(), regime) == offered_.end())
        offered_.push_back(regime);
    for (const auto& f : opt_.regimes)
        if (regime.find(f) != std::string::npos) return any_selected_ = true;
    return false;
}

bool RunLoop::out_of_time() const {
    return opt_.time_budget_s > 0 && elapsed() >= opt_.time_budget_s;
}

bool RunLoop::skip(std::uint64_t i, const std::string& regime) {
    if (stopped_) return true;
    if (!share_.empty()) {  // named regimes: shares and the filter are known
        if (per_ <= 0) return true;
        const auto r = static_cast<std::size_t>(i / static_cast<std::uint64_t>(per_));
        const auto t = static_cast<long>(i % static_cast<std::uint64_t>(per_));
        if (r >= share_.size() || t >= share_[r]) return true;
    } else if (opt_.trials >
               0) {  // regime r draws trials / regimes, one more for r < trials % regimes
        const auto r = static_cast<long>(i / static_cast<std::uint64_t>(per_));
        const auto t = static_cast<long>(i % static_cast<std::uint64_t>(per_));
        if (t >= opt_.trials / regimes_ + (r < opt_.trials % regimes_ ? 1 : 0)) return true;
    }
    if (share_.empty() && !selected(regime)) {
        drop();
        return true;
    }
    return false;
}

void RunLoop::drop() {
    total_ = std::max(done_, total_ - 1);
    if (opt_.progress) opt_.progress(done_, total_);
}

void RunLoop::expect(long extra) { total_ += extra; }

std::uint64_t RunLoop::seed(std::uint64_t i) const { return instance_seed(opt_.seed, i); }

double RunLoop::elapsed() const { return now_s() - t0_; }

void RunLoop::submit(const std::string& regime, std::uint64_t seed, Instance fn, Keep keep,
                     double cost) {
    if (stopped_) return;
    queue_.push_back({regime, seed, std::move(fn), std::move(keep), cost});
    // Evaluated in batches, so that a huge --trials never queues more than a batch and the
    // budget stops the submitting loops (stopped()); 16 instances per worker keep the idle time
    // at a batch's end small. Under a spread the batches must be the same on every process,
    // whose --threads may differ (nodes of different sizes): the size then depends on the number
    // of processes only.
    const int batch = opt_.spread != nullptr ? std::max(256, 64 * opt_.spread->size())
                                             : std::max(64, 16 * opt_.threads);
    if (queue_.size() >= static_cast<std::size_t>(batch)) evaluate();
}

void RunLoop::evaluate() {
    std::vector<Queued> queue = std::move(queue_);
    queue_.clear();
    std::vector<std::optional<CheckResult>> out(queue.size());
    std::mutex m;  // done_, total_ and the progress callback
    // Start order: longest first, unless a time budget may cut the batch (it keeps a prefix in
    // instance order). Every instance that starts is gathered below in queue order.
    std::vector<double> cost(queue.size());
    for (std::size_t k = 0; k < queue.size(); ++k) cost[k] = queue[k].cost;
    std::vector<std::size_t> order = longest_first(cost);
    if (opt_.time_budget_s > 0)
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::size_t started = 0;
    if (opt_.spread != nullptr && opt_.spread->size() > 1) {
        evaluate_spread(queue, cost, out);
        started = queue.size();
    } else {
        RunnerUnlock others;      // other checks' runner code may run meanwhile (RunnerLock)
        BlasThreadsScope one(1);  // each instance runs single-threaded code, whatever --threads
        started = parallel_for_in_order(
            order, opt_.threads,
            [&](std::size_t k) {
                out[k] = queue[k].fn();
                std::lock_guard<std::mutex> lock(m);
                if (out[k])
                    total_ = std::max(total_, ++done_);
                else
                    total_ = std::max(done_, total_ - 1);  // nothing to check: not drawn
                if (opt_.progress) opt_.progress(done_, total_);
            },
            [&] { return stopped_ || (stopped_ = out_of_time()); });  // under the pool's lock
    }
    // Without a budget every instance started (or one threw and nothing is gathered); with one,
    // the first `started` in queue order did.
    for (std::size_t k = 0; k < started; ++k) {
        if (!out[k]) continue;
        CheckResult& r = *out[k];
        if (queue[k].keep && !queue[k].keep(r)) continue;
        if (!queue[k].regime.empty()) r.regime = queue[k].regime;
        r.seed = queue[k].seed;
        run_.results.push_back(std::move(r));
    }
}

std::vector<InstanceSpread::Slot> spread_evaluate(
    InstanceSpread& sp, const std::vector<double>& cost, int threads,
    const std::function<void(InstanceSpread::Slot& slot, std::size_t i)>& fill,
    const std::function<void(const InstanceSpread::Slot& slot)>& done) {
    // Deal the start order round-robin: every process gets a share of the long items.
    const std::vector<std::size_t> order = longest_first(cost);
    std::vector<InstanceSpread::Slot> slots(cost.size());
    std::vector<std::size_t> mine;
    for (std::size_t j = 0; j < order.size(); ++j)
        if (static_cast<int>(j % static_cast<std::size_t>(sp.size())) == sp.rank()) {
            slots[order[j]].owned = true;
            mine.push_back(order[j]);
        }
    std::vector<std::exception_ptr> thrown(slots.size());
    std::vector<std::size_t> positions(mine.size());
    for (std::size_t k = 0; k < mine.size(); ++k) positions[k] = k;
    std::mutex m;
    {
        RunnerUnlock others;
        BlasThreadsScope one(1);
        parallel_for_in_order(positions, threads, [&](std::size_t k) {
            InstanceSpread::Slot& slot = slots[mine[k]];
            try {
                fill(slot, mine[k]);
            } catch (...) {  // every process must reach share(): the error travels in the slot
                thrown[mine[k]] = std::current_exception();
                const ExceptionSummary x = summarize_exception(thrown[mine[k]]);
                slot.error_code = x.code;
                slot.error = x.message;
            }
            std::lock_guard<std::mutex> lock(m);
            if (done) done(slot);
        });
    }
    sp.share(slots);
    for (std::size_t i = 0; i < slots.size(); ++i) {
        if (slots[i].error_code == 0) continue;
        if (thrown[i]) std::rethrow_exception(thrown[i]);
        throw Error(static_cast<ExitCode>(slots[i].error_code), slots[i].error);
    }
    return slots;
}

void RunLoop::evaluate_spread(std::vector<Queued>& queue, const std::vector<double>& cost,
                              std::vector<std::optional<CheckResult>>& out) {
    if (queue.empty()) return;  // the same on every process: no exchange
    if (opt_.time_budget_s > 0)
        throw Error(ExitCode::Usage,
                    "a time budget cannot be combined with instances spread over processes: the "
                    "processes' clocks would disagree on where the run stops",
                    "time_budget_s");
    auto count = [this](const InstanceSpread::Slot& s) {
        if (s.result)
            total_ = std::max(total_, ++done_);
        else
            total_ = std::max(done_, total_ - 1);  // nothing to check: not drawn
    };
    std::vector<InstanceSpread::Slot> slots = spread_evaluate(
        *opt_.spread, cost, opt_.threads,
        [&](InstanceSpread::Slot& slot, std::size_t i) { slot.result = queue[i].fn(); },
        [&](const InstanceSpread::Slot& slot) {
            count(slot);
            if (opt_.progress) opt_.progress(done_, total_);
        });
    for (std::size_t i = 0; i < slots.size(); ++i) {
        if (!slots[i].owned) count(slots[i]);
        out[i] = std::move(slots[i].result);
    }
    if (opt_.progress) opt_.progress(done_, total_);
}

CheckRun RunLoop::finish() {
    evaluate();
    if (!opt_.regimes.empty() && !any_selected_ && !offered_.empty()) {
        std::string filter, list;
        for (const auto& f : opt_.regimes) filter += (filter.empty() ? "'" : ", '") + f + "'";
        for (const auto& r : offered_) list += (list.empty() ? "" : ", ") + r;
        throw Error(ExitCode::Usage,
                    "regime filter " + filter + " matches no regime of " + run_.check +
                        "; its regimes: " + list,
                    "regimes");
    }
    run_.summarize();
    run_.seconds = elapsed();
    return std::move(run_);
}

std::vector<WeightShape> weight_shapes(const RunOptions& opt, WeightShape large) {
    if (opt.shape.size() == 2) return {{"given", opt.shape[0], opt.shape[1]}};
    std::vector<WeightShape> shapes = {{"square", 16, 16}, {"tall", 48, 12}, {"wide", 12, 48}};
    if (opt.thorough) shapes.push_back(std::move(large));
    return shapes;
}

std::string default_embedded_heads() {
#ifdef ATTNSPEC_DEFAULT_EMBEDDED_HEADS
    if (::access(ATTNSPEC_DEFAULT_EMBEDDED_HEADS, R_OK) == 0)
        return ATTNSPEC_DEFAULT_EMBEDDED_HEADS;
#endif
    return "";
}

std::string default_model_dataset() {
    try {
        return find_dataset("minilm-l6").name;
    } catch (const Error&) {
        return "";  // absent (e.g. a trimmed source tree): the real-model analysis is skipped
    }
}

}  // namespace attnspec::proofs
