// Spreading a check's instances over processes (verify --mpi, cli/verify_mpi.cpp).
//
// Every process runs the same checks, in the same order, one at a time, and queues the same
// instances. RunLoop::evaluate (run_loop.hpp) evaluates only the instances its process owns
// (position j of the batch's start order belongs to process j mod size()) and then calls share(),
// which hands every process every owner's result. Each process then continues exactly as a
// serial run would: keeps, records and summaries are computed everywhere from the same results,
// so the report of any process is the serial run's. Work outside RunLoop (the thm3.4
// counterexample searches, dataset reads, experiment tables) runs on every process.
// share() is collective, so every process must reach its calls in the same order: a check may
// not run two RunLoops (or spread searches) concurrently, and a batch's size must not depend on
// anything but the options and seeds (not on time, the thread count or the process).
//
// The results travel as bytes (encode_check_result / decode_check_result): doubles are copied
// bit for bit (NaN payloads and signed zeros included), so nothing is rounded on the way.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"

namespace attnspec::proofs {

class InstanceSpread {
  public:
    // One queued instance of a batch. The owner fills `result` (nothing: the draw had nothing to
    // check) or, when the instance threw, `error_code` (an exit code, > 0) and `error`.
    struct Slot {
        bool owned = false;  // set by RunLoop: this process evaluates it
        std::optional<CheckResult> result;
        std::vector<double> numbers;  // what else the caller's work returns (thm3.4: evaluations)
        std::string text;
        int error_code = 0;
        std::string error;
    };
    virtual ~InstanceSpread() = default;
    virtual int rank() const = 0;  // 0 .. size() - 1
    virtual int size() const = 0;  // >= 1
    // Collective over every process, called once per evaluated batch with the same number of
    // slots everywhere. On return every slot holds its owner's result or error. Throws
    // attnspec::Error (the failing process's exit code) when another process has failed outside
    // an instance; then no further collective call may be made.
    virtual void share(std::vector<Slot>& slots) = 0;
};

// The spread evaluation RunLoop and the thm3.4 searches share (instance_spread.cpp): `fill(slot,
// i)` runs for the items i this process owns (position j of longest_first(cost) belongs to
// process j mod sp.size()), on `threads` workers with one BLAS thread each and without the runner
// lock (run_instances, run_loop.hpp); an exception escaping `fill` is kept in its slot, so every
// process reaches share(). `done(slot)` runs under a lock after each local item (progress). After
// share(), the first slot in index order that failed rethrows (this process's own exception where
// it threw it), as a serial run would; otherwise every slot is returned filled by its owner.
std::vector<InstanceSpread::Slot> spread_evaluate(
    InstanceSpread& sp, const std::vector<double>& cost, int threads,
    const std::function<void(InstanceSpread::Slot& slot, std::size_t i)>& fill,
    const std::function<void(const InstanceSpread::Slot& slot)>& done = {});

// Appends `r` to `out`; decode_check_result reads one back from [*p, end) and advances *p.
// Decoding throws Error(DataError) on a truncated or malformed buffer.
void encode_check_result(const CheckResult& r, std::string& out);
CheckResult decode_check_result(const char** p, const char* end);

// What one process sends in share(): its owned slots (index, then nothing / result / error).
// decode_owned_slots fills the slots a message names; it refuses (DataError) an index beyond
// `slots` or one this process owns, and a malformed message.
std::string encode_owned_slots(const std::vector<InstanceSpread::Slot>& slots);
void decode_owned_slots(const std::string& bytes, std::vector<InstanceSpread::Slot>& slots);

}  // namespace attnspec::proofs
