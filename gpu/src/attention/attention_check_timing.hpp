// Timing and case naming shared by the attention twins' gpu-check entries (host code only).
#pragma once
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu::attn {

using attnspec::gpu::median_seconds;  // gpu/check/gpu_check.hpp

}  // namespace attnspec::gpu::attn
