#include "test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace attnspec::test {

namespace {
std::string slurp(const std::string& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
}  // namespace

std::string temp_dir() {
    char tmpl[] = "/tmp/attnspec_test_XXXXXX";
    const char* d = mkdtemp(tmpl);
    REQUIRE(d != nullptr);
    return d;
}

CliResult run_cli(const std::string& args) {
#ifdef ATTNSPEC_CLI_PATH
    const std::string dir = temp_dir();
    // $ATTNSPEC_TEST_CLI: the CLI of a relocated build (the GPU bundle's `run` sets it).
    const char* cli = std::getenv("ATTNSPEC_TEST_CLI");
    const std::string cmd = std::string(cli && *cli ? cli : ATTNSPEC_CLI_PATH) + " " + args + " >" +
                            dir + "/out 2>" + dir + "/err </dev/null";
    int status = std::system(cmd.c_str());
    CliResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir + "/out");
    r.err = slurp(dir + "/err");
    std::system(("rm -rf " + dir).c_str());
    return r;
#else
    (void)args;
    FAIL("ATTNSPEC_CLI_PATH not defined");
    return {};
#endif
}

}  // namespace attnspec::test
