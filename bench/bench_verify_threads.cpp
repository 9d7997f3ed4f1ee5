// verify --threads (issue 13, "every core, same answer"), measured from the user's side: the
// attnspec CLI runs `verify --all --dataset ''` and the default `verify --all` (the real-model
// analysis included) with --threads 1 and --threads <cores>, alternating, side by side in one run;
// median wall time of --reps runs each, the speed-up ratio against the target (>= 1.7x on
// 2 cores, >= 6x on 16 or more), and whether the two reports compare equal
// (scripts/compare-reports.py --rtol 0).
// usage: bench_verify_threads [--cli PATH] [--source DIR] [--threads T] [--reps R] [--quick]
//   --cli      the attnspec executable (default: ../cli/attnspec beside this program's folder)
//   --source   the source tree, for scripts/compare-reports.py (default: the current directory)
//   --threads  the parallel run's thread count (default: every core this process may use)
//   --quick    only `verify --all --dataset ''` (about a quarter of the time)
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/parallel.hpp"
#include "bench_common.hpp"

using namespace attnspec;

namespace {
std::string self_dir() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return ".";
    std::string p(buf, static_cast<size_t>(n));
    return p.substr(0, p.find_last_of('/'));
}

// CPU seconds (user + system) of the finished children so far (the CLI under std::system's shell).
double children_cpu_seconds() {
    rusage r{};
    getrusage(RUSAGE_CHILDREN, &r);
    auto sec = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
    return sec(r.ru_utime) + sec(r.ru_stime);
}

// One run's wall seconds (and its CPU seconds in *cpu); NaN when the CLI failed (exit status
// other than 0, 1, 2: verify's verdict codes).
double run_seconds(const std::string& cmd, double* cpu) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = children_cpu_seconds();
    const int rc = std::system(cmd.c_str());
    const double s = bench::seconds_since(t0);
    *cpu = children_cpu_seconds() - c0;
    const int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    if (code < 0 || code > 2) {
        std::printf("  failed (exit %d): %s\n", code, cmd.c_str());
        return NAN;
    }
    return s;
}

// The target for this many threads: 1.7 on 2 cores, 6 on 16 or more (none below 2).
double target(int threads) { return threads >= 16 ? 6.0 : threads >= 2 ? 1.7 : NAN; }

struct Setup {
    std::string cli, source = ".", dir;
    int threads = 1, reps = 3;
};

void measure(const Setup& st, const std::string& label, const std::string& args) {
    const int threads = st.threads, reps = st.reps;
    const std::string& dir = st.dir;
    std::printf("[%s] attnspec verify %s: --threads 1 vs --threads %d, %d runs each, alternating\n",
                label.c_str(), args.c_str(), threads, reps);
    std::vector<double> one, many;
    for (int r = 0; r < reps; ++r)
        for (int t : {1, threads}) {
            const std::string out = dir + "/" + label + "-t" + std::to_string(t) + ".h5";
            double cpu = NAN;
            const double s =
                run_seconds(st.cli + " verify " + args + " -q --fail-on never --out " + out +
                                " --threads " + std::to_string(t) + " > /dev/null",
                            &cpu);
            (t == 1 ? one : many).push_back(s);
            // on a loaded machine the wall times say how much of the cores the run got; the CPU
            // seconds say how much work it did (about equal for both: the same instances)
            std::printf("  run %d, --threads %d: %.2f s wall, %.2f s CPU\n", r + 1, t, s, cpu);
        }
    const double m1 = bench::median(one), mn = bench::median(many);
    const std::string script = st.source + "/scripts/compare-reports.py";
    const std::string cmp = "/usr/bin/python3 " + script + " --rtol 0 " + dir + "/" + label +
                            "-t1.h5 " + dir + "/" + label + "-t" + std::to_string(threads) +
                            ".h5 > /dev/null 2>&1";
    const int rc = access(script.c_str(), R_OK) == 0 ? std::system(cmp.c_str()) : -1;
    const char* same = rc == 0  ? "equal"
                       : rc < 0 ? "not compared (no scripts/compare-reports.py: give --source)"
                                : "DIFFERENT";
    std::printf(
        "[%s] median %.2f s (1 thread) vs %.2f s (%d threads): speed-up %.2fx, target "
        ">= %.1fx: %s; reports %s under compare-reports.py --rtol 0\n",
        label.c_str(), m1, mn, threads, m1 / mn, target(threads),
        std::isnan(target(threads))  ? "none for 1 core"
        : m1 / mn >= target(threads) ? "met"
                                     : "NOT met",
        same);
}
}  // namespace

int main(int argc, char** argv) {
    select_blas_kernels(argc, argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each run's line as it ends, also into a file
    Setup st;
    st.cli = self_dir() + "/../cli/attnspec";
    st.threads = available_threads();
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--cli")
            st.cli = next();
        else if (a == "--source")
            st.source = next();
        else if (a == "--threads")
            st.threads = std::atoi(next().c_str());
        else if (a == "--reps")
            st.reps = std::atoi(next().c_str());
        else if (a == "--quick")
            quick = true;
        else {
            std::fprintf(stderr,
                         "usage: bench_verify_threads [--cli PATH] [--source DIR] [--threads T] "
                         "[--reps R] [--quick]\n");
            return 64;
        }
    }
    if (st.threads < 1 || st.reps < 1 || access(st.cli.c_str(), X_OK) != 0) {
        std::fprintf(stderr,
                     "bench_verify_threads: need --threads >= 1, --reps >= 1 and an "
                     "executable --cli (got '%s')\n",
                     st.cli.c_str());
        return 64;
    }
    const BlasInfo blas = blas_info();
    std::printf(
        "[setup] %d cores available; BLAS %s, core %s (OPENBLAS_CORETYPE=%s, inherited by "
        "the CLI); 1-minute load average read from /proc/loadavg:",
        available_threads(), blas.library.c_str(),
        blas.core.empty() ? "unknown" : blas.core.c_str(),
        std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset");
    std::fflush(stdout);
    std::system("cut -d' ' -f1 /proc/loadavg");
    char tmpl[] = "/tmp/bench_verify_threads.XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::perror("mkdtemp");
        return 73;
    }
    st.dir = tmpl;
    measure(st, "all-no-dataset", "--all --dataset ''");
    if (!quick) measure(st, "all", "--all");
    std::system(("rm -rf " + st.dir).c_str());
    return 0;
}
