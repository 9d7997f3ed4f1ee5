// Progress of the operator-spectrum engine (engine_progress.hpp).
#include "attnspec/spectral/engine_progress.hpp"

#include <lapacke.h>

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>

namespace attnspec::opspec {

namespace {
double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

StageProgress::StageProgress(const EngineProgressFn& fn, std::string stage, const char* unit,
                             long total)
    : fn_(fn), t0_(std::chrono::steady_clock::now()) {
    p_.stage = std::move(stage);
    p_.unit = unit;
    p_.total = std::max(1L, total);
    p_.seconds_left = std::numeric_limits<double>::quiet_NaN();
    if (fn_) fn_(p_);
}

void StageProgress::update(long done, long grow) {
    done_ = std::max(done_, done);
    if (!fn_) return;
    if (done_ > p_.total) p_.total = done_ + std::max(1L, grow);
    p_.done = done_;
    const double t = since(t0_);
    p_.seconds_left = done_ > 0
                          ? t / static_cast<double>(done_) * static_cast<double>(p_.total - done_)
                          : std::numeric_limits<double>::quiet_NaN();
    fn_(p_);
}

void StageProgress::finish() {
    if (!fn_) return;
    p_.total = std::max(1L, done_);  // the count itself: an estimate that proved off is replaced
    p_.done = p_.total;
    p_.seconds_left = 0;
    fn_(p_);
}

void with_heartbeat(const EngineProgressFn& fn, const std::string& stage, double expected_seconds,
                    const std::function<void()>& work) {
    if (!fn) return work();
    EngineProgress p;
    p.stage = stage;
    p.unit = "%";
    p.total = 100;
    p.seconds_left = expected_seconds;
    fn(p);
    std::mutex m;
    std::condition_variable cv;
    bool finished = false;
    const auto t0 = std::chrono::steady_clock::now();
    std::thread beat([&] {
        std::unique_lock<std::mutex> lock(m);
        while (!cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return finished; })) {
            const double t = since(t0);
            p.done = std::min(99L, static_cast<long>(100 * t / expected_seconds));
            p.seconds_left = t < expected_seconds ? expected_seconds - t
                                                  : std::numeric_limits<double>::quiet_NaN();
            fn(p);
        }
    });
    auto stop = [&] {
        {
            std::lock_guard<std::mutex> lock(m);
            finished = true;
        }
        cv.notify_one();
        beat.join();
    };
    try {
        work();
    } catch (...) {
        stop();
        throw;
    }
    stop();
    p.done = 100, p.seconds_left = 0;
    fn(p);
}

double measured_cholesky_rate(const Eigen::MatrixXd& G, double shift) {
    const Eigen::Index m = std::min<Eigen::Index>(G.rows(), 1024);
    Eigen::MatrixXd A = G.topLeftCorner(m, m);
    A.diagonal().array() -= shift;
    const auto t0 = std::chrono::steady_clock::now();
    const lapack_int n = static_cast<lapack_int>(m);
    LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, A.data(), n);  // failure: the rate is still a rate
    const double t = std::max(since(t0), 1e-6);
    return static_cast<double>(m) * m * m / 3 / t;
}

double cholesky_seconds(Eigen::Index n, double rate) {
    return static_cast<double>(n) * n * n / 3 / rate;
}

double eigensolve_seconds(Eigen::Index n, double rate) {
    return kEigSlowdown * 4 * static_cast<double>(n) * n * n / 3 / rate;
}

}  // namespace attnspec::opspec
