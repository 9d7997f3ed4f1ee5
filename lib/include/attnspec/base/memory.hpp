// The process-wide memory budget: every refusal before allocating (check_allocation) that is not
// tied to a more specific option compares its estimate with memory_limit_bytes(). The CLI sets it
// from --max-memory; the default is half of the machine's physical memory (8 GiB when that cannot
// be read). CPU only; not thread-safe to set while another thread reads it (set it once, first).
#pragma once

namespace attnspec {

// Physical memory of this machine in bytes (sysconf), or 0 when it cannot be read.
double physical_memory_bytes();

// The default budget: physical_memory_bytes() / 2, or 8 GiB when that is unknown.
double default_memory_limit_bytes();

// The current budget (default_memory_limit_bytes() until set).
double memory_limit_bytes();

// Sets the budget; throws Error(Usage, parameter "max_bytes") unless 0 < bytes < inf.
void set_memory_limit_bytes(double bytes);

}  // namespace attnspec
