#include "test_support.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace attnspec::test {

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(f.good());
}

bool exists(const std::string& path) {
    struct stat s {};
    return ::stat(path.c_str(), &s) == 0;
}

std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d))
            if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
                out.emplace_back(e->d_name);
        ::closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

int temps_in(const std::string& dir) {
    const auto names = entries(dir);
    return static_cast<int>(std::count_if(names.begin(), names.end(), [](const std::string& n) {
        return n.find(".tmp.") != std::string::npos;
    }));
}

std::string temp_dir() {
    char tmpl[] = "/tmp/attnspec_test_XXXXXX";
    const char* d = mkdtemp(tmpl);
    REQUIRE(d != nullptr);
    return d;
}

TempDir::TempDir() : path(temp_dir()) {}
TempDir::~TempDir() { std::system(("rm -rf " + path).c_str()); }

std::string safetensors(const std::string& header, const std::string& data) {
    std::string s(8, '\0');
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    return s + header + data;
}

namespace {
CliResult run_captured(const std::string& cmd, bool merge_streams) {
    const std::string dir = temp_dir();
    const std::string redirect =
        merge_streams ? " >" + dir + "/out 2>&1" : " >" + dir + "/out 2>" + dir + "/err";
    const int status = std::system((cmd + " </dev/null" + redirect).c_str());
    CliResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir + "/out");
    r.err = slurp(dir + "/err");
    std::system(("rm -rf " + dir).c_str());
    return r;
}
}  // namespace

CliResult run_shell(const std::string& cmd) { return run_captured(cmd, false); }
CliResult run_shell_merged(const std::string& cmd) { return run_captured(cmd, true); }

CliResult run_cli(const std::string& args) {
#ifdef ATTNSPEC_CLI_PATH
    // $ATTNSPEC_TEST_CLI: the CLI of a relocated build (the GPU bundle's `run` sets it).
    const char* cli = std::getenv("ATTNSPEC_TEST_CLI");
    return run_shell(std::string(cli && *cli ? cli : ATTNSPEC_CLI_PATH) + " " + args);
#else
    (void)args;
    FAIL("ATTNSPEC_CLI_PATH not defined");
    return {};
#endif
}

int sh(const std::string& cmd) {
    const int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int python(const std::string& script, const std::string& args, std::string* out,
           const std::string& log) {
    const std::string dir = temp_dir();
    const std::string output = log.empty() ? dir + "/py.out" : log;
    write_file(dir + "/script.py", script);
    const int rc = sh(std::string(ATTNSPEC_PYTHON) + " " + dir + "/script.py " + args + " > " +
                      output + " 2>&1");
    const std::string text = slurp(output);
    if (out) *out = text;
    if (rc != 0) UNSCOPED_INFO("python exited " << rc << ": " << text);
    std::system(("rm -rf " + dir).c_str());
    return rc;
}

int compare_reports(const std::string& a, const std::string& b, const std::string& options,
                    const std::string& log) {
    return sh(std::string(ATTNSPEC_PYTHON) + " " + ATTNSPEC_SOURCE_DIR +
              "/scripts/compare-reports.py " + options + " " + a + " " + b + " > " + log + " 2>&1");
}

}  // namespace attnspec::test
