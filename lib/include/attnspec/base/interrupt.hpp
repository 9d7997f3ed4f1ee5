// Cooperative cancellation of long library calls, for a host that cannot end the process on a
// signal: the Python package turns Ctrl-C into request_interrupt() (python/attnspec/
// _interrupt.py). Long loops call check_interrupt() at their check points: every matrix-free
// Jacobian product (attention/jacobian_ops.cpp) and before every instance of a check run
// (proofs/run_loop.cpp). While the flag is set it throws Interrupted, which unwinds like any error
// (nothing is committed: reports are written atomically after the work). A LAPACK call in
// progress (dpotrf or dsyevd of a large Gram matrix) runs to its end before the next check point.
// The CLI never sets the flag: its signals end the process (io/report_writer.hpp cleans up).
#pragma once
#include <stdexcept>

namespace attnspec {

class Interrupted : public std::runtime_error {
  public:
    Interrupted() : std::runtime_error("interrupted (request_interrupt)") {}
};

void request_interrupt() noexcept;
void clear_interrupt() noexcept;
bool interrupt_requested() noexcept;
// Throws Interrupted while the flag is set. One relaxed atomic load otherwise.
void check_interrupt();

}  // namespace attnspec
