#include "hostile_support.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "test_support.hpp"

extern char** environ;

namespace attnspec::hostile {

namespace {
// The launcher between the test and attnspec: a child forked from this (large) test process
// would count the test's pages in its ru_maxrss, so python3 starts attnspec and reports the
// peak of its own children (RUSAGE_CHILDREN: attnspec alone), the exit status, whether it was
// killed at the limit, and the wall time.
const char* kLauncher =
    "import resource, subprocess, sys, time\n"
    "limit, result, cmd = float(sys.argv[1]), sys.argv[2], sys.argv[3:]\n"
    "t0 = time.monotonic(); p = subprocess.Popen(cmd); killed = 0\n"
    "try:\n"
    "    rc = p.wait(timeout=limit)\n"
    "except subprocess.TimeoutExpired:\n"
    "    p.kill(); rc = p.wait(); killed = 1\n"
    "seconds = time.monotonic() - t0\n"
    "rc = 128 - rc if rc < 0 else rc\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(result, 'w').write('%d %d %.6f %d' % (rc, killed, seconds, peak))\n";
}  // namespace

Outcome run(const std::vector<std::string>& args, double limit_s,
            const std::vector<std::string>& env) {
#ifdef ATTNSPEC_CLI_PATH
    const char* relocated = std::getenv("ATTNSPEC_TEST_CLI");
    const std::string cli = relocated && *relocated ? relocated : ATTNSPEC_CLI_PATH;
    const std::string dir = attnspec::test::temp_dir();
    const std::string out = dir + "/out", err = dir + "/err", result = dir + "/result";
    attnspec::test::write_file(dir + "/launch.py", kLauncher);
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e) envs.emplace_back(*e);
    envs.insert(envs.end(), env.begin(), env.end());
    const std::string py = ATTNSPEC_PYTHON, script = dir + "/launch.py",
                      limit = std::to_string(time_limit(limit_s));
    std::vector<char*> argv{const_cast<char*>(py.c_str()), const_cast<char*>(script.c_str()),
                            const_cast<char*>(limit.c_str()), const_cast<char*>(result.c_str()),
                            const_cast<char*>(cli.c_str())},
        envp;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int in = ::open("/dev/null", O_RDONLY);
        const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(in, 0), ::dup2(o, 1), ::dup2(e, 2);
        ::execve(py.c_str(), argv.data(), envp.data());
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    Outcome r;
    std::istringstream res(attnspec::test::slurp(result));
    long peak_kb = 0;
    int killed = 0;
    res >> r.code >> killed >> r.seconds >> peak_kb;
    INFO("launcher: " << attnspec::test::slurp(err).substr(0, 400));
    REQUIRE(!res.fail());
    r.timed_out = killed != 0;
    r.peak_mb = static_cast<double>(peak_kb) / 1024.0;  // ru_maxrss: KiB on Linux
    r.out = attnspec::test::slurp(out);
    r.err = attnspec::test::slurp(err);
    std::system(("rm -rf " + dir).c_str());
    return r;
#else
    (void)args, (void)limit_s, (void)env;
    FAIL("ATTNSPEC_CLI_PATH not defined");
    return {};
#endif
}

int line_count(const std::string& text) {
    int n = 0;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) ++n;
        start = end + 1;
    }
    return n;
}

}  // namespace attnspec::hostile
