// BLAS kernels before/after (issue 13), and OpenBLAS against BLIS: the dense kernels of attnspec's
// κ(J) engine and, optionally, one attnspec command, under several BLAS variants side by side.
//
// A variant is one of
//   * an OpenBLAS core type (`--cores Prescott,Cooperlake`): the child runs with
//     OPENBLAS_CORETYPE=<core> (the only way to change OpenBLAS's choice);
//   * `auto` in --cores: OpenBLAS's own choice (OPENBLAS_CORETYPE unset, ATTNSPEC_BLAS_CORE=off;
//     Prescott on a CPU Debian's OpenBLAS 0.3.21 does not recognise);
//   * BLIS (`--blis /usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4`): the child runs with
//     LD_PRELOAD="<blis> <ref-lapack>", so every BLAS and CBLAS symbol (dgemm_, cblas_dsyrk, ...)
//     resolves to BLIS and every LAPACK routine (dpotrf_, dsyevd_, ...) to reference LAPACK
//     (`--ref-lapack`, default Debian's /usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3), which
//     calls BLIS for its BLAS: BLIS has no LAPACK of its own. OpenBLAS stays loaded (attnspec links
//     it) but serves nothing; it gets OPENBLAS_NUM_THREADS=1 and ATTNSPEC_BLAS_CORE=off, and BLIS
//     gets BLIS_NUM_THREADS = this program's BLAS thread count. BLIS picks its own
//     sub-configuration at load time from CPUID (BLIS_ARCH_DEBUG=1 prints it; the child prints
//     bli_arch_string).
// Every child prints which library serves dgemm_ and dpotrf_ (dladdr), so a variant that did not
// load what it claims shows in the [variant] lines.
//
// Kernels (`--kernels`, any of): dgemm (C = A B, n x n x n, cblas_dgemm as attnspec calls it),
// dsyrk (C = A A^T lower, A n x n, cblas_dsyrk: the Gram of certified.cpp), dpotrf (Cholesky of
// that Gram + n I, LAPACKE_dpotrf: the engine's shift-and-invert and the certificate), dsyevdN
// (eigenvalues only, LAPACKE_dsyevd 'N': gram_eigenvalues), dsyevd (with vectors), dgesdd (SVD,
// 'S'). Sizes: `--sizes 4096,1856` runs every kernel at every n; without it dgemm runs at --n-gemm
// (2000) and the others at --n-lapack (1500). A kernel written kernel:n (dsyevdN:1856) runs at
// that n only.
//
// The repetitions are interleaved across variants (round r runs every variant once), so the
// variants see the same machine load; each column prints the median of the wall times and of the
// CPU times (user + sys of the child: steadier than wall on a loaded machine; with several BLAS
// threads it also counts their spinning, so OPENBLAS_NUM_THREADS=1 gives the cleanest kernel
// ratio), then each variant's ratio to the first one (baseline / variant: > 1 is faster).
// Usage: bench_blas_kernels [--cores auto,Cooperlake] [--blis LIB] [--ref-lapack LIB] [--reps 3]
//                           [--kernels dgemm,dsyevd,dgesdd] [--sizes N,N] [--n-gemm 2000]
//                           [--n-lapack 1500] [--cli "attnspec jacobian ..."]
// Default variants: Prescott and the core loaded here. --cli runs the shell command under each.
// Threads: OPENBLAS_NUM_THREADS=1 (or 2) in front of the program sets them for every variant.
// Measured results and the choice they support: docs/blas.md (here BLIS 0.9.0 picks its
// AVX2 haswell sub-configuration and runs 1.4-8x slower than OpenBLAS with the Cooperlake core
// that attnspec chooses, 1.8-2x on the (128, 384, 32) jacobian command: OpenBLAS is kept).
#include <cblas.h>
#include <dlfcn.h>
#include <lapacke.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
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

std::vector<std::string> split(const std::string& v) {
    std::vector<std::string> out;
    for (size_t at = 0, e; at <= v.size(); at = e + 1) {
        e = std::min(v.find(',', at), v.size());
        out.push_back(v.substr(at, e - at));
    }
    return out;
}

// The file of the library that serves `symbol` in this process ("?" when none).
std::string provider(const char* symbol) {
    Dl_info d{};
    void* p = dlsym(RTLD_DEFAULT, symbol);
    if (!p || !dladdr(p, &d) || !d.dli_fname) return "?";
    return d.dli_fname;
}

// What runs in this child: the OpenBLAS core, or BLIS and its sub-configuration.
std::string variant_label() {
    using ArchId = int (*)();
    using ArchStr = const char* (*)(int);
    const std::string gemm = provider("dgemm_");
    auto id = reinterpret_cast<ArchId>(dlsym(RTLD_DEFAULT, "bli_arch_query_id"));
    auto str = reinterpret_cast<ArchStr>(dlsym(RTLD_DEFAULT, "bli_arch_string"));
    if (gemm.find("blis") != std::string::npos && id && str)
        return std::string("BLIS:") + str(id());
    const std::string core = blas_info().core;
    return core.empty() ? "unknown" : core;
}

// One kernel at size n, timed; false when the routine reported failure.
bool run_kernel(const std::string& k, int n, std::pair<double, double>& t) {
    const auto a = random_matrix(n, 1);
    std::vector<double> c(a.size());
    int info = 0;
    if (k == "dgemm") {
        const auto b = random_matrix(n, 2);
        t = timed([&] {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n,
                        b.data(), n, 0.0, c.data(), n);
        });
    } else if (k == "dsyrk") {
        t = timed([&] {
            cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0, a.data(), n, 0.0,
                        c.data(), n);
        });
    } else if (k == "dpotrf") {
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0, a.data(), n, 0.0, c.data(),
                    n);
        for (int i = 0; i < n; ++i) c[static_cast<size_t>(i) * n + i] += n;
        t = timed([&] { info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, c.data(), n); });
    } else if (k == "dsyevd" || k == "dsyevdN") {
        std::vector<double> s = a, w(n);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < i; ++j)
                s[static_cast<size_t>(i) * n + j] = s[static_cast<size_t>(j) * n + i];
        const char jobz = k == "dsyevd" ? 'V' : 'N';
        t = timed(
            [&] { info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, jobz, 'L', n, s.data(), n, w.data()); });
    } else if (k == "dgesdd") {
        std::vector<double> g = a, w(n), u(a.size()), vt(a.size());
        t = timed([&] {
            info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', n, n, g.data(), n, w.data(), u.data(), n,
                                  vt.data(), n);
        });
    } else {
        return false;
    }
    return info == 0;
}

// The child: argv = kernel:n tokens. Prints "L <label> <dgemm_ file> <dpotrf_ file>", then one
// "K <kernel> <n> <wall> <cpu> <ok>" line per token.
void child(int argc, char** argv) {
    std::printf("L %s %s %s\n", variant_label().c_str(), provider("dgemm_").c_str(),
                provider("dpotrf_").c_str());
    for (int i = 2; i < argc; ++i) {
        const std::string tok = argv[i];
        const size_t colon = tok.find(':');
        const std::string k = tok.substr(0, colon);
        const int n = std::atoi(tok.c_str() + colon + 1);
        std::pair<double, double> t{NAN, NAN};
        const bool ok = run_kernel(k, n, t);
        std::printf("K %s %d %.6f %.6f %d\n", k.c_str(), n, t.first, t.second, ok ? 1 : 0);
        std::fflush(stdout);
    }
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
struct Variant {
    std::string name, env;  // env: the shell prefix that makes the child run this variant
    std::string label, gemm_lib, potrf_lib;
    std::map<std::string, Series> t;  // by column ("dgemm@4096", "cli")
};

double children_cpu() {
    rusage r{};
    getrusage(RUSAGE_CHILDREN, &r);
    return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

// One repetition of variant v in a child; false on failure.
bool run_variant(Variant& v, const std::vector<std::string>& tokens, const std::string& cli) {
    std::string cmd = v.env + self_path() + " --child";
    for (const auto& tok : tokens) cmd += " " + tok;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return false;
    char a[512] = {0}, b[512] = {0}, c[512] = {0};
    size_t got = 0;
    bool ok = std::fscanf(p, " L %511s %511s %511s", a, b, c) == 3;
    while (ok && got < tokens.size()) {
        char k[64] = {0};
        int n = 0, good = 0;
        double w = 0, u = 0;
        ok = std::fscanf(p, " K %63s %d %lf %lf %d", k, &n, &w, &u, &good) == 5 && good;
        if (ok) v.t[std::string(k) + "@" + std::to_string(n)].add(w, u), ++got;
    }
    ok = (pclose(p) == 0) && ok;
    if (!ok) return false;
    v.label = a, v.gemm_lib = b, v.potrf_lib = c;
    if (!cli.empty()) {
        const double c0 = children_cpu();
        const auto t0 = std::chrono::steady_clock::now();
        if (std::system((v.env + cli + " >/dev/null 2>&1").c_str()) != 0) return false;
        v.t["cli"].add(bench::seconds_since(t0), children_cpu() - c0);
    }
    return true;
}

double med(const std::vector<double>& v) { return v.empty() ? NAN : bench::median(v); }

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "--child") == 0) {
        // The variant's environment decides the kernels: never re-execute to another core.
        setenv("ATTNSPEC_BLAS_CORE", "off", 0);
        select_blas_kernels(argc, argv);
        child(argc, argv);
        return 0;
    }
    select_blas_kernels(argc, argv);
    const BlasInfo blas = blas_info();
    std::vector<std::string> cores = {"Prescott", blas.core},
                             kernels = {"dgemm", "dsyevd", "dgesdd"};
    std::vector<int> sizes;
    int reps = 3, ng = 2000, nl = 1500;
    std::string cli, blis, ref_lapack = "/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--cores") {
            cores = split(v);
        } else if (a == "--kernels") {
            kernels = split(v);
        } else if (a == "--sizes") {
            for (const auto& s : split(v)) sizes.push_back(std::atoi(s.c_str()));
        } else if (a == "--reps") {
            reps = std::atoi(v.c_str());
        } else if (a == "--n-gemm") {
            ng = std::atoi(v.c_str());
        } else if (a == "--n-lapack") {
            nl = std::atoi(v.c_str());
        } else if (a == "--cli") {
            cli = v;
        } else if (a == "--blis") {
            blis = v;
        } else if (a == "--ref-lapack") {
            ref_lapack = v;
        } else {
            std::fprintf(stderr, "bench_blas_kernels: unknown option %s\n", a.c_str());
            return 64;
        }
    }
    std::vector<std::string> tokens, columns;
    for (const auto& k : kernels) {
        if (k.find(':') != std::string::npos) {  // kernel:n, at that size only
            tokens.push_back(k);
            continue;
        }
        std::vector<int> ns = sizes;
        if (ns.empty()) ns = {k == "dgemm" ? ng : nl};
        for (int n : ns) tokens.push_back(k + ":" + std::to_string(n));
    }
    for (const auto& tok : tokens)
        columns.push_back(tok.substr(0, tok.find(':')) + "@" + tok.substr(tok.find(':') + 1));
    if (!cli.empty()) columns.push_back("cli");

    std::vector<Variant> vs;
    for (const auto& c : cores) {
        Variant v;
        v.name = c == "auto" ? "OpenBLAS-auto" : c;
        v.env = c == "auto" ? "env -u OPENBLAS_CORETYPE ATTNSPEC_BLAS_CORE=off "
                            : "OPENBLAS_CORETYPE=" + c + " ";
        vs.push_back(v);
    }
    if (!blis.empty()) {
        Variant v;
        v.name = "BLIS";
        v.env = "env -u OPENBLAS_CORETYPE LD_PRELOAD='" + blis + " " + ref_lapack +
                "' OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=" + std::to_string(blas.threads) +
                " ATTNSPEC_BLAS_CORE=off ";
        vs.push_back(v);
    }
    std::printf(
        "[setup] %s\n[setup] loaded here: %s (%s)\n[setup] cpu: %s\n[setup] BLAS threads "
        "%d, median of %d interleaved rounds\n",
        blas.library.c_str(), blas.core.c_str(), blas.reason.c_str(), blas.cpu.c_str(),
        blas.threads, reps);
    for (int r = 0; r < reps; ++r)
        for (auto& v : vs)
            if (!run_variant(v, tokens, cli)) {
                std::printf("variant %s: the child failed\n", v.name.c_str());
                return 1;
            }
    for (const auto& v : vs)
        std::printf("[variant] %s: runs %s; dgemm_ from %s, dpotrf_ from %s\n", v.name.c_str(),
                    v.label.c_str(), v.gemm_lib.c_str(), v.potrf_lib.c_str());
    for (const bool cpu : {false, true}) {
        auto m = [&](const Variant& v, const std::string& col) {
            const auto it = v.t.find(col);
            return it == v.t.end() ? NAN : med(cpu ? it->second.cpu : it->second.wall);
        };
        std::printf("%s seconds (median)\n%-26s", cpu ? "CPU (user + sys)" : "wall", "variant");
        for (const auto& col : columns) std::printf(" %13s", col.c_str());
        std::printf("\n");
        for (const auto& v : vs) {
            std::printf("%-26s", v.name.c_str());
            for (const auto& col : columns) std::printf(" %13.3f", m(v, col));
            std::printf("\n");
        }
        for (size_t i = 1; i < vs.size(); ++i) {
            std::printf("%-26s", (vs.front().name + "/" + vs[i].name).c_str());
            for (const auto& col : columns)
                std::printf(" %12.2fx", m(vs.front(), col) / m(vs[i], col));
            std::printf("\n");
        }
    }
    return 0;
}
