#pragma once
#include <string>

namespace attnspec::gpu::detail {
inline std::string version_string(int v) {  // 13000 -> "13.0"
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
}  // namespace attnspec::gpu::detail
