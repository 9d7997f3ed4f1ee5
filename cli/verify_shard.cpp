// The split of a check selection over shards (verify_shard.hpp).
#include "verify_shard.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "attnspec/base/errors.hpp"

namespace attnspec::cli {

ShardSpec parse_shard(const std::string& text) {
    const auto bad = [&](const std::string& why) {
        return Error(ExitCode::Usage, "--shard '" + text + "': " + why +
                                          " (expected i/n with 0 <= i < n, e.g. --shard 0/4)");
    };
    const auto slash = text.find('/');
    if (slash == std::string::npos) throw bad("no '/'");
    const auto number = [&](const std::string& s) {
        if (s.empty() || s.size() > 6 ||
            !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
            throw bad("'" + s + "' is not a number from 0 to 100000");
        return std::stoi(s);
    };
    ShardSpec s;
    s.index = number(text.substr(0, slash));
    s.count = number(text.substr(slash + 1));
    if (s.count < 1 || s.count > 100000) throw bad("n must lie in [1, 100000]");
    if (s.index >= s.count) throw bad("i must be below n");
    return s;
}

std::vector<std::vector<size_t>> plan_shards(const std::vector<const proofs::CheckInfo*>& todo,
                                             const proofs::RunOptions& opt, int count) {
    std::vector<double> cost(todo.size());
    for (size_t i = 0; i < todo.size(); ++i) cost[i] = proofs::estimated_cost(*todo[i], opt);
    std::vector<size_t> order(todo.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return cost[a] > cost[b]; });
    std::vector<std::vector<size_t>> plan(static_cast<size_t>(count));
    std::vector<double> load(static_cast<size_t>(count), 0.0);
    for (size_t i : order) {
        const auto k =
            static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        plan[k].push_back(i);
        load[k] += cost[i];
    }
    for (auto& p : plan) std::sort(p.begin(), p.end());
    return plan;
}

std::string shard_options_text(const proofs::RunOptions& opt) {
    const auto num = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        return std::string(buf);
    };
    const auto join = [](const auto& v) {
        std::ostringstream os;
        for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
        return os.str();
    };
    std::ostringstream os;
    os << "seed=" << opt.seed << "\ntrials=" << opt.trials << "\nthorough=" << opt.thorough
       << "\ntime_budget=" << num(opt.time_budget_s) << "\nshape=" << join(opt.shape)
       << "\nregimes=" << join(opt.regimes) << "\nkappa_lambda=" << opt.kappa_lambda
       << "\nsearch_evals=" << opt.search_evals << "\nsearch_seconds=" << num(opt.search_seconds)
       << "\nsearch_budget=" << num(opt.search_budget_s) << "\nembedded=" << opt.embedded_heads
       << "\ndataset=" << opt.dataset;
    return os.str();
}

}  // namespace attnspec::cli
