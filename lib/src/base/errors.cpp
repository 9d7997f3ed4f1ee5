#include "attnspec/base/errors.hpp"

#include <cmath>
#include <cstdio>
#include <new>

namespace attnspec {

std::string value_text(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

std::string human_bytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5) {
        bytes /= 1024.0;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

void check_allocation(double bytes, double limit_bytes, const std::string& what,
                      const std::string& parameter) {
    if (!(bytes <= limit_bytes))
        throw Error(ExitCode::DataError,
                    what + " would need " + human_bytes(bytes) + ", above the limit " +
                        (parameter.empty() ? "of " : parameter + " = ") + human_bytes(limit_bytes),
                    parameter);
}

ExceptionSummary summarize_exception(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const Error& x) {
        return {static_cast<int>(x.code()), x.what()};
    } catch (const std::bad_alloc&) {
        return {static_cast<int>(ExitCode::OutOfMemory), "out of memory"};
    } catch (const std::exception& x) {
        return {static_cast<int>(ExitCode::Internal), x.what()};
    } catch (...) {
        return {static_cast<int>(ExitCode::Internal), "unknown exception"};
    }
}

}  // namespace attnspec
