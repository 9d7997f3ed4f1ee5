#include "fuzz_support.hpp"

#include <hdf5.h>
#include <stdlib.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <new>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"

namespace attnspec::fuzz {

std::uint8_t Input::byte() { return empty() ? 0 : p_[i_++]; }

std::uint32_t Input::u32() {
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 8) | byte();
    return v;
}

double Input::number() {
    const std::uint8_t sel = byte();
    switch (sel) {
        case 0:
            return std::numeric_limits<double>::quiet_NaN();
        case 1:
            return std::numeric_limits<double>::infinity();
        case 2:
            return -std::numeric_limits<double>::infinity();
        case 3:
            return std::numeric_limits<double>::denorm_min();
        case 4:
            return DBL_MAX;
        case 5:
            return -0.0;
        case 6:
            return 1e-300;
        case 7: {
            std::uint64_t bits = (static_cast<std::uint64_t>(u32()) << 32) | u32();
            double d;
            std::memcpy(&d, &bits, sizeof d);
            return d;
        }
        case 8:
            return 1e300;
        default:
            return (static_cast<double>(sel) - 136.0) / 16.0;
    }
}

std::string Input::text(std::size_t max) {
    std::string s;
    while (s.size() < max && !empty()) {
        const char c = static_cast<char>(byte());
        if (c == 0) break;
        s.push_back(c);
    }
    return s;
}

namespace {
std::string g_dir;
void remove_temp_dir() {
    if (g_dir.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(g_dir, ec);
}
}  // namespace

const std::string& temp_dir() {
    if (g_dir.empty()) {
        std::string base = "/tmp";
        if (const char* t = std::getenv("TMPDIR"); t && *t)
            base = t;
        else if (::access("/dev/shm", W_OK) == 0)
            base = "/dev/shm";
        std::string tmpl = base + "/attnspec-fuzz-XXXXXX";
        if (!::mkdtemp(tmpl.data())) {
            std::perror("attnspec fuzz: mkdtemp");
            std::abort();
        }
        g_dir = tmpl;
        std::atexit(remove_temp_dir);
    }
    return g_dir;
}

std::string temp_path(const std::string& name) { return temp_dir() + "/" + name; }

void init_common() {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    set_memory_limit_bytes(256.0 * 1024 * 1024);
    temp_dir();
}

void expect_documented(const char* what, const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        const int c = static_cast<int>(e.code());
        const bool documented = c == 1 || c == 2 || c == 64 || c == 65 || c == 66 || c == 69 ||
                                c == 71 || c == 73 || c == 74;
        if (documented) return;
        std::fprintf(stderr, "attnspec fuzz: %s: attnspec::Error with exit code %d: %s\n", what, c,
                     e.what());
        std::abort();
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "attnspec fuzz: %s: std::bad_alloc escaped (exit 70)\n", what);
        std::abort();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attnspec fuzz: %s: non-attnspec exception (exit 70): %s\n", what,
                     e.what());
        std::abort();
    } catch (...) {
        std::fprintf(stderr, "attnspec fuzz: %s: unknown exception\n", what);
        std::abort();
    }
}

}  // namespace attnspec::fuzz
