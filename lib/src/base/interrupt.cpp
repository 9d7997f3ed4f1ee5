// The process-wide interrupt flag of base/interrupt.hpp.
#include "attnspec/base/interrupt.hpp"

#include <atomic>

namespace attnspec {
namespace {
std::atomic<bool> requested{false};
}  // namespace

void request_interrupt() noexcept { requested.store(true, std::memory_order_relaxed); }
void clear_interrupt() noexcept { requested.store(false, std::memory_order_relaxed); }
bool interrupt_requested() noexcept { return requested.load(std::memory_order_relaxed); }

void check_interrupt() {
    if (requested.load(std::memory_order_relaxed)) throw Interrupted();
}

}  // namespace attnspec
