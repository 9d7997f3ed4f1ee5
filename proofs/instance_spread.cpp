// spread_evaluate (instance_spread.hpp): the evaluation RunLoop (run_loop.hpp) and the thm3.4
// searches share under verify --mpi. The bytes the processes exchange: instance_wire.cpp.
#include "attnspec/proofs/instance_spread.hpp"

#include <exception>
#include <mutex>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

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
    run_instances(positions, threads, [&](std::size_t k) {
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
    sp.share(slots);
    for (std::size_t i = 0; i < slots.size(); ++i) {
        if (slots[i].error_code == 0) continue;
        if (thrown[i]) std::rethrow_exception(thrown[i]);
        throw Error(static_cast<ExitCode>(slots[i].error_code), slots[i].error);
    }
    return slots;
}

}  // namespace attnspec::proofs
