// BLAS kernels before/after (issue 13): dgemm (n = 2000) in GFLOP/s, dsyevd and dgesdd (n = 1500)
// and, optionally, one attnspec command, under OpenBLAS's own core choice ("before": Prescott on
// a CPU Debian's OpenBLAS 0.3.21 does not recognise) and the core select_blas_kernels loads
// ("after"). Each core runs in a child process of this program with OPENBLAS_CORETYPE set (the
// only way to change it); the repetitions are interleaved across cores (round r runs every core
// once), so the cores see the same machine load, and each column prints the median of the wall
// times and of the CPU times (user + sys: steadier than wall on a loaded machine; with several BLAS
// threads it also counts their waiting, so OPENBLAS_NUM_THREADS=1 gives the cleanest kernel ratio).
// Usage: bench_blas_kernels [--cores Prescott,Haswell,SkylakeX,Cooperlake] [--reps 3]
//                           [--n-gemm 2000] [--n-lapack 1500] [--cli "attnspec jacobian ..."]
// Default cores: Prescott and the one loaded here. --cli runs the shell command under each core.
#include <lapacke.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "bench_common.hpp"

extern "C" void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
                       const double*, const int*, const double*, const int*, const double*, double*,
                       const int*);

using namespace attnspec;

namespace {

std::vector<double> random_matrix(int n, unsigned seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> z;
    std::vector<double> a(static_cast<size_t>(n) * n);
    for (auto& x : a) x = z(g);
    return a;
}

double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Wall and CPU seconds of one call.
template <class F>
std::pair<double, double> timed(F f) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_now();
    f();
    return {bench::seconds_since(t0), cpu_now() - c0};
}

// One repetition of each routine in this process: wall and CPU seconds of dgemm, dsyevd, dgesdd.
void child(int n_gemm, int n_lapack) {
    const auto a = random_matrix(n_gemm, 1), b = random_matrix(n_gemm, 2);
    std::vector<double> c(a.size());
    const double one = 1, zero = 0;
    const auto t_gemm = timed([&] {
        dgemm_("N", "N", &n_gemm, &n_gemm, &n_gemm, &one, a.data(), &n_gemm, b.data(), &n_gemm,
               &zero, c.data(), &n_gemm);
    });
    auto s = random_matrix(n_lapack, 3);
    for (int i = 0; i < n_lapack; ++i)
        for (int j = 0; j < i; ++j) s[i * n_lapack + j] = s[j * n_lapack + i];
    std::vector<double> w(n_lapack), u(s.size()), vt(s.size());
    int info = 0;
    const auto t_syevd = timed([&] {
        info |= LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', n_lapack, s.data(), n_lapack, w.data());
    });
    auto g = random_matrix(n_lapack, 4);
    const auto t_gesdd = timed([&] {
        info |= LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', n_lapack, n_lapack, g.data(), n_lapack,
                               w.data(), u.data(), n_lapack, vt.data(), n_lapack);
    });
    std::printf("%s %.6f %.6f %.6f %.6f %.6f %.6f %d\n", blas_info().core.c_str(), t_gemm.first,
                t_gemm.second, t_syevd.first, t_syevd.second, t_gesdd.first, t_gesdd.second,
                info != 0);
}

std::string self_path() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Wall and CPU seconds per repetition.
struct Series {
    std::vector<double> wall, cpu;
    void add(double w, double c) { wall.push_back(w), cpu.push_back(c); }
};
struct Times {
    std::string loaded;
    Series gemm, syevd, gesdd, cli;
};

double children_cpu() {
    rusage r{};
    getrusage(RUSAGE_CHILDREN, &r);
    return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

// One repetition under `core`, in a child with OPENBLAS_CORETYPE set; false on failure.
bool run_core(const std::string& core, int ng, int nl, const std::string& cli, Times& t) {
    const std::string env = "OPENBLAS_CORETYPE=" + core + " ";
    const std::string cmd =
        env + self_path() + " --child " + std::to_string(ng) + " " + std::to_string(nl);
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return false;
    char name[64] = {0};
    double x[6] = {};
    int bad = 1;
    const bool ok = std::fscanf(p, "%63s %lf %lf %lf %lf %lf %lf %d", name, &x[0], &x[1], &x[2],
                                &x[3], &x[4], &x[5], &bad) == 8 &&
                    !bad;
    pclose(p);
    if (!ok) return false;
    t.loaded = name;
    t.gemm.add(x[0], x[1]), t.syevd.add(x[2], x[3]), t.gesdd.add(x[4], x[5]);
    if (!cli.empty()) {
        const double c0 = children_cpu();
        const auto t0 = std::chrono::steady_clock::now();
        const int rc = std::system((env + cli + " >/dev/null 2>&1").c_str());
        if (rc != 0) return false;
        t.cli.add(bench::seconds_since(t0), children_cpu() - c0);
    }
    return true;
}

double med(const std::vector<double>& v) { return v.empty() ? NAN : bench::median(v); }

}  // namespace

int main(int argc, char** argv) {
    select_blas_kernels(argc, argv);
    if (argc == 4 && std::strcmp(argv[1], "--child") == 0) {
        child(std::atoi(argv[2]), std::atoi(argv[3]));
        return 0;
    }
    const BlasInfo blas = blas_info();
    std::vector<std::string> cores = {"Prescott", blas.core};
    int reps = 3, ng = 2000, nl = 1500;
    std::string cli;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--cores") {
            cores.clear();
            for (size_t at = 0, e; at <= v.size(); at = e + 1) {
                e = std::min(v.find(',', at), v.size());
                cores.push_back(v.substr(at, e - at));
            }
        } else if (a == "--reps") {
            reps = std::atoi(v.c_str());
        } else if (a == "--n-gemm") {
            ng = std::atoi(v.c_str());
        } else if (a == "--n-lapack") {
            nl = std::atoi(v.c_str());
        } else if (a == "--cli") {
            cli = v;
        }
    }
    std::printf(
        "[setup] %s\n[setup] loaded here: %s (%s)\n[setup] cpu: %s\n[setup] BLAS threads "
        "%d, median of %d interleaved rounds\n",
        blas.library.c_str(), blas.core.c_str(), blas.reason.c_str(), blas.cpu.c_str(),
        blas.threads, reps);
    std::map<std::string, Times> t;
    for (int r = 0; r < reps; ++r)
        for (const auto& c : cores)
            if (!run_core(c, ng, nl, cli, t[c])) {
                std::printf("core %s: the child failed\n", c.c_str());
                return 1;
            }
    const double flops = 2.0 * ng * ng * static_cast<double>(ng);
    for (const bool cpu : {false, true}) {
        auto m = [&](const Series& x) { return med(cpu ? x.cpu : x.wall); };
        std::printf("%s seconds (median)\n%-15s %-12s %10s %9s %10s %10s %10s\n",
                    cpu ? "CPU (user + sys)" : "wall", "asked", "loaded", "dgemm",
                    cpu ? "GF/cpu-s" : "GFLOP/s", "dsyevd", "dgesdd", "cli");
        for (const auto& c : cores) {
            const Times& x = t[c];
            std::printf("%-15s %-12s %10.3f %9.1f %10.3f %10.3f %10.3f\n", c.c_str(),
                        x.loaded.c_str(), m(x.gemm), flops / m(x.gemm) * 1e-9, m(x.syevd),
                        m(x.gesdd), m(x.cli));
        }
        const Times &before = t[cores.front()], &after = t[blas.core];
        if (!after.gemm.wall.empty() && cores.front() != blas.core)
            std::printf(
                "speed-up %s over %s (%s time before / after): dgemm %.2fx, dsyevd %.2fx, "
                "dgesdd %.2fx, cli %.2fx\n",
                blas.core.c_str(), cores.front().c_str(), cpu ? "CPU" : "wall",
                m(before.gemm) / m(after.gemm), m(before.syevd) / m(after.syevd),
                m(before.gesdd) / m(after.gesdd), m(before.cli) / m(after.cli));
    }
    return 0;
}
