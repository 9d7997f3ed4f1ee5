// What a run writes never destroys what the user has (io/report_writer.hpp): unpredictable O_EXCL
// temps that never follow a planted link, stale temps of dead processes removed (a live run's
// kept), special files and inputs refused as outputs, a failed write leaving the previous report
// and no temp, concurrent writers leaving one complete report, the companion directory replaced
// with its report, and strict seeds in stored records.
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <regex>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/report/check_records.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {
// A pid that is certainly not running: a child that has exited and been reaped.
pid_t dead_pid() {
    const pid_t p = ::fork();
    if (p == 0) ::_exit(0);
    int st = 0;
    ::waitpid(p, &st, 0);
    return p;
}
// Runs `f` in a child process; returns its exit status (-signal when killed).
int in_child(const std::function<int()>& f) {
    const pid_t p = ::fork();
    if (p == 0) {
        int rc = 99;
        try {
            rc = f();
        } catch (const Error& e) {
            rc = static_cast<int>(e.code());
        } catch (...) {
            rc = 98;
        }
        ::_exit(rc);
    }
    int st = 0;
    ::waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}
void write_report(const std::string& path, const std::string& who, int n = 8) {
    ReportWriter w(path, Provenance{"test " + who, 1, {}});
    w.root().attr("who", who);
    w.root().write("M", Eigen::MatrixXd::Constant(n, n, 1.5));
    w.commit();
}
}  // namespace

TEST_CASE("report temps: unpredictable O_EXCL names that never follow a planted link",
          "[report][safety]") {
    const std::string dir = test::temp_dir(), path = dir + "/r.h5", victim_dir = test::temp_dir();
    const std::string victim = victim_dir + "/victim";
    { std::ofstream(victim) << "precious"; }
    // the old predictable name, and a guessed random one
    const std::string pid = std::to_string(::getpid());
    REQUIRE(::symlink(victim.c_str(), (dir + "/.r.h5.tmp." + pid).c_str()) == 0);
    REQUIRE(::symlink(victim.c_str(), (dir + "/.r.h5.tmp." + pid + ".0000000000000000").c_str()) ==
            0);
    std::string temp1, temp2;
    {
        ReportWriter a(path, Provenance{"t", 1, {}});
        ReportWriter b(path, Provenance{"t", 1, {}});  // a second writer gets its own temp
        const std::regex pattern("\\.r\\.h5\\.tmp\\." + pid + "\\.[0-9a-f]{16}");
        for (const auto& e : entries(dir)) {
            struct stat s {};
            ::lstat((dir + "/" + e).c_str(), &s);
            if (S_ISREG(s.st_mode) && std::regex_match(e, pattern))
                (temp1.empty() ? temp1 : temp2) = e;
        }
        a.root().attr("x", 1.0);
        a.commit();
    }
    CHECK(!temp1.empty());
    CHECK(!temp2.empty());
    CHECK(temp1 != temp2);
    CHECK(slurp(victim) == "precious");
    H5Reader r(path);
    CHECK(r.attr_double("/", "x") == 1.0);
    // only the two planted links are left beside the report: no temp of ours
    CHECK(entries(dir).size() == 3);
    std::system(("rm -rf " + dir + " " + victim_dir).c_str());
}

TEST_CASE("stale temps of dead processes are removed, a live run's are kept", "[report][safety]") {
    const std::string dir = test::temp_dir(), path = dir + "/r.h5";
    const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getppid());
    for (const std::string& n :
         std::vector<std::string>{".r.h5.tmp." + dead, ".r.h5.tmp." + dead + ".0123456789abcdef",
                                  ".r.h5.tmp." + live + ".0123456789abcdef",
                                  ".other.h5.tmp." + dead, ".r.h5.tmp.notapid"})
        std::ofstream(dir + "/" + n) << "x";
    const std::string staging = dir + "/.r.counterexamples.tmp." + dead + ".aa";
    ::mkdir(staging.c_str(), 0755);
    std::ofstream(staging + "/c.h5") << "x";
    write_report(path, "me");
    CHECK(entries(dir) == std::vector<std::string>{".other.h5.tmp." + dead,
                                                   ".r.h5.tmp." + live + ".0123456789abcdef",
                                                   ".r.h5.tmp.notapid", "r.h5"});
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("outputs: special files refused (73), inputs refused (64), new paths and files pass",
          "[report][safety]") {
    const std::string dir = test::temp_dir();
    const std::string in = dir + "/in.h5", fifo = dir + "/fifo";
    { std::ofstream(in) << "input"; }
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    CHECK(code_of([&] { check_output_target("/dev/null"); }) == ExitCode::CantCreate);
    CHECK(code_of([&] { check_output_target(fifo); }) == ExitCode::CantCreate);
    CHECK(code_of([&] { check_output_target(dir); }) == ExitCode::CantCreate);
    CHECK(code_of([&] { check_output_target(dir + "/"); }) == ExitCode::CantCreate);
    CHECK(code_of([&] { check_output_target(dir + "/missing/r.h5"); }) == ExitCode::CantCreate);
    CHECK(code_of([&] { ReportWriter w(fifo, Provenance{}); }) == ExitCode::CantCreate);
    CHECK(code_of([&] { write_text_file_atomically(fifo, "x"); }) == ExitCode::CantCreate);
    // the same file under another name: a relative path, a symlink, a hard link
    REQUIRE(::symlink(in.c_str(), (dir + "/sym.h5").c_str()) == 0);
    REQUIRE(::link(in.c_str(), (dir + "/hard.h5").c_str()) == 0);
    CHECK(code_of([&] { check_output_target(in, {in}); }) == ExitCode::Usage);
    CHECK(code_of([&] { check_output_target(dir + "/./in.h5", {in}); }) == ExitCode::Usage);
    CHECK(code_of([&] { check_output_target(dir + "/sym.h5", {in}); }) == ExitCode::Usage);
    CHECK(code_of([&] { check_output_target(dir + "/hard.h5", {in}); }) == ExitCode::Usage);
    CHECK(code_of([&] { check_output_target(in, {dir + "/sym.h5"}); }) == ExitCode::Usage);
    CHECK(code_of([&] { check_output_target(dir + "/new.h5", {in, ""}); }) == ExitCode::Ok);
    CHECK(code_of([&] { check_output_target(dir + "/new.h5", {dir + "/new.h5"}); }) ==
          ExitCode::Usage);
    CHECK(code_of([&] { check_output_target(dir + "/other.h5", {in}); }) == ExitCode::Ok);
    CHECK(slurp(in) == "input");
    // the probe leaves nothing behind
    CHECK(entries(dir) == std::vector<std::string>{"fifo", "hard.h5", "in.h5", "sym.h5"});
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE(
    "a failed write (file too large, like a full disk) keeps the previous report, removes "
    "the temp and exits 74",
    "[report][safety]") {
    const std::string dir = test::temp_dir(), path = dir + "/r.h5";
    write_report(path, "previous");
    const std::string before = slurp(path);
    const int rc = in_child([&] {
        std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
        rlimit lim{16384, 16384};
        ::setrlimit(RLIMIT_FSIZE, &lim);
        write_report(path, "new", 200);  // 320 KB of matrix
        return 0;
    });
    CHECK(rc == static_cast<int>(ExitCode::IoError));
    CHECK(slurp(path) == before);
    CHECK(entries(dir) == std::vector<std::string>{"r.h5"});
    // the text writer too
    const std::string md = dir + "/r.md";
    { std::ofstream(md) << "old page"; }
    const int rc2 = in_child([&] {
        std::signal(SIGXFSZ, SIG_IGN);
        rlimit lim{1024, 1024};
        ::setrlimit(RLIMIT_FSIZE, &lim);
        write_text_file_atomically(md, std::string(100000, 'x'));
        return 0;
    });
    CHECK(rc2 == static_cast<int>(ExitCode::IoError));
    CHECK(slurp(md) == "old page");
    CHECK(entries(dir) == std::vector<std::string>{"r.h5", "r.md"});
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("the companion directory is replaced with its report, never mixed", "[report][safety]") {
    const std::string dir = test::temp_dir(), path = dir + "/r.h5",
                      comp = dir + "/r.counterexamples";
    {
        ReportWriter w(path, Provenance{});
        CHECK(w.companion_dir() == comp);
        std::ofstream(w.companion_staging() + "/a.h5") << "first";
        w.commit();
    }
    CHECK(entries(comp) == std::vector<std::string>{"a.h5"});
    {  // a run that fails before commit leaves the old pair and no staging directory
        ReportWriter w(path, Provenance{});
        std::ofstream(w.companion_staging() + "/b.h5") << "second";
    }
    CHECK(entries(comp) == std::vector<std::string>{"a.h5"});
    CHECK(entries(dir) == std::vector<std::string>{"r.counterexamples", "r.h5"});
    {
        ReportWriter w(path, Provenance{});
        std::ofstream(w.companion_staging() + "/c.h5") << "third";
        w.commit();
    }
    CHECK(entries(comp) == std::vector<std::string>{"c.h5"});
    {  // a run with no counterexamples removes the old directory
        ReportWriter w(path, Provenance{});
        w.companion_staging();
        w.commit();
    }
    CHECK(entries(dir) == std::vector<std::string>{"r.h5"});
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("concurrent writers of one path leave one complete report with its own companions",
          "[report][safety]") {
    const std::string dir = test::temp_dir(), path = dir + "/r.h5";
    for (int round = 0; round < 4; ++round) {
        std::vector<pid_t> kids;
        for (const std::string who : {"A", "B"}) {
            const pid_t p = ::fork();
            if (p == 0) {
                int rc = 0;
                try {
                    ReportWriter w(path, Provenance{who, 1, {}});
                    w.root().attr("who", who);
                    w.root().write("M", Eigen::MatrixXd::Constant(300, 300, who == "A" ? 1 : 2));
                    for (int i = 0; i < 5; ++i)
                        std::ofstream(w.companion_staging() + "/" + who + std::to_string(i));
                    w.commit();
                } catch (...) {
                    rc = 1;
                }
                ::_exit(rc);
            }
            kids.push_back(p);
        }
        for (pid_t p : kids) {
            int st = 0;
            ::waitpid(p, &st, 0);
            CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
        }
        H5Reader r(path);
        const std::string who = r.attr_string("/", "who");
        REQUIRE((who == "A" || who == "B"));
        const Eigen::MatrixXd M = r.matrix("/M");
        CHECK(M.minCoeff() == M.maxCoeff());
        CHECK(M(0, 0) == (who == "A" ? 1.0 : 2.0));
        const auto comp = entries(dir + "/r.counterexamples");
        REQUIRE(comp.size() == 5);
        for (const auto& e : comp) CHECK(e.substr(0, 1) == who);
        CHECK(entries(dir) == std::vector<std::string>{"r.counterexamples", "r.h5"});
    }
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("a stored record's seed must be a 64-bit decimal integer (65 naming the attribute)",
          "[report][safety]") {
    const std::string dir = test::temp_dir();
    CheckResult res;
    res.check = "demo";
    res.seed = 18446744073709551615ull;
    res.finalize();
    write_instance_file(dir + "/ok.h5", res, Provenance{});
    CHECK(read_check_record(H5Reader(dir + "/ok.h5"), "/record").seed == "18446744073709551615");
    for (const std::string& bad : std::vector<std::string>{
             "abc", "12x", "-1", "18446744073709551616", std::string(300, '9'), " 1"}) {
        const std::string f = dir + "/bad.h5";
        {
            ReportWriter w(f, Provenance{});
            w.root().attr("kind", "attnspec-instance");
            H5Group g = w.root().group("record");
            g.attr("verdict", "violated");
            g.attr("seed", bad);
            w.commit();
        }
        const Error e = test::error_of([&] { read_check_record(H5Reader(f), "/record"); });
        CHECK(e.code() == ExitCode::DataError);
        CHECK(std::string(e.what()).find("attribute 'seed'") != std::string::npos);
    }
    std::system(("rm -rf " + dir).c_str());
}
