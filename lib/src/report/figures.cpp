#include "attnspec/report/figures.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/report_writer.hpp"

#ifndef ATTNSPEC_SOURCE_DIR
#define ATTNSPEC_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

namespace attnspec {

std::string figures_python() {
    const char* p = std::getenv("ATTNSPEC_PYTHON");
    return p && *p ? p : "/usr/bin/python3";
}

std::string figures_script() {
    for (const char* name : {"ATTNSPEC_FIGURES_SCRIPT", "ATTNSPEC_RENDER_SCRIPT"}) {
        const char* s = std::getenv(name);
        if (s && *s) return s;
    }
    // An installed attnspec (cmake --install) runs the copy installed beside it, in
    // <prefix>/share/attnspec/, never the source tree it was built from (which may be gone).
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path installed =
            exe.parent_path().parent_path() / "share" / "attnspec" / "render_figures.py";
        if (fs::is_regular_file(installed, ec)) return installed.string();
    }
    return ATTNSPEC_SOURCE_DIR "/scripts/render_figures.py";  // the build tree's attnspec
}

double figures_timeout_seconds() {
    const char* t = std::getenv("ATTNSPEC_RENDER_TIMEOUT");
    if (!t || !*t) return 600;
    char* end = nullptr;
    const double v = std::strtod(t, &end);
    if (*end != '\0' || !(v > 0) || v > 1e6)
        throw Error(ExitCode::Usage, "ATTNSPEC_RENDER_TIMEOUT='" + std::string(t).substr(0, 40) +
                                         "' is not a number of seconds from 0 to 1e6");
    return v;
}

namespace {
[[noreturn]] void bad_manifest(const std::string& path, int line, const std::string& why) {
    throw Error(ExitCode::Internal, "the figures script broke its contract: " + path + " line " +
                                        std::to_string(line) + ": " + why);
}

// A manifest path: relative, inside the figures directory, an existing regular file.
void check_figure_file(const std::string& dir, const std::string& tsv, int line,
                       const std::string& rel) {
    if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos)
        bad_manifest(tsv, line, "path '" + rel + "' is not relative to the figures directory");
    if (!fs::is_regular_file(dir + "/" + rel))
        bad_manifest(tsv, line, "'" + rel + "' was not written");
}

// Runs PYTHON SCRIPT --report F --out DIR with its stdout on our stderr; the exit status.
int run_script(const std::string& report, const std::string& out, const PageLog& note) {
    const std::string py = figures_python(), script = figures_script();
    if (!fs::is_regular_file(script))
        throw Error(ExitCode::NoInput, "figures script '" + script +
                                           "' not found (set ATTNSPEC_RENDER_SCRIPT, or pass "
                                           "--no-figures for the Markdown only)");
    if (::access(py.c_str(), X_OK) != 0)
        throw Error(ExitCode::NoInput, "figures interpreter '" + py +
                                           "' cannot be run: " + std::strerror(errno) +
                                           " (set ATTNSPEC_PYTHON, or pass --no-figures for the "
                                           "Markdown only)");
    if (note) note("figures: " + py + " " + script + " --report " + report + " --out " + out);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(ExitCode::Internal, std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::setpgid(0, 0);
        ::dup2(2, 1);
        const char* argv[] = {py.c_str(), script.c_str(), "--report", report.c_str(),
                              "--out",    out.c_str(),    nullptr};
        ::execv(py.c_str(), const_cast<char* const*>(argv));
        std::fprintf(stderr, "attnspec: cannot run '%s': %s\n", py.c_str(), std::strerror(errno));
        ::_exit(127);
    }
    // Its own process group, killed whole by the signal cleanup (report_writer.hpp) or at the
    // timeout, so that no script outlives attnspec or writes into a removed temp.
    ::setpgid(pid, pid);
    set_signal_cleanup_child(pid);
    struct Forget {
        ~Forget() { set_signal_cleanup_child(0); }
    } forget;
    const double limit = figures_timeout_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    int st = 0;
    while (true) {
        const pid_t got = ::waitpid(pid, &st, WNOHANG);
        if (got == pid) break;
        if (got < 0 && errno != EINTR) throw Error(ExitCode::Internal, "waitpid failed");
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit) {
            ::kill(-pid, SIGKILL);
            while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
            throw Error(ExitCode::Internal,
                        "the figures script ran longer than " + std::to_string(int(limit)) +
                            " s (ATTNSPEC_RENDER_TIMEOUT): stopped; --no-figures renders the "
                            "Markdown only");
        }
        ::usleep(20000);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void figures_into(const std::string& report, const std::string& figdir, const PageLog& note) {
    const int rc = run_script(report, figdir, note);
    if (rc == 0) return;
    if (rc == 65)
        throw Error(ExitCode::DataError,
                    "the figures script refused " + report + " (exit 65, its message above)");
    if (rc == 69)
        throw Error(ExitCode::NoDevice,
                    "figures need matplotlib and h5py for " + figures_python() +
                        " (Debian: python3-matplotlib python3-h5py, scripts/install-deps.sh); "
                        "--no-figures renders the Markdown only");
    throw Error(ExitCode::Internal, "the figures script failed with exit " + std::to_string(rc) +
                                        " (its message above); --no-figures renders the "
                                        "Markdown only");
}

// Swaps `tmp` in for `dir`: an atomic exchange when dir exists (tmp then holds the previous
// tree), a rename otherwise.
void commit_dir(const std::string& tmp, const std::string& dir) {
    if (fs::exists(dir)) {
        if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0)
            return;  // tmp now holds the previous tree: the caller removes it
        throw Error(ExitCode::CantCreate, "cannot replace '" + dir + "': " + std::strerror(errno));
    }
    if (std::rename(tmp.c_str(), dir.c_str()) != 0)
        throw Error(ExitCode::CantCreate,
                    "cannot rename into '" + dir + "': " + std::strerror(errno));
}

// Removes the temps `.<name>.tmp.<pid>.<random>` in `parent` left by renders that were killed
// (their pid is gone); a live render's temp is never touched.
void remove_stale_page_temps(const std::string& parent, const std::string& name) {
    const std::string prefix = temp_name_prefix(name);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(parent, ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind(prefix, 0) != 0) continue;
        char* end = nullptr;
        const long pid = std::strtol(n.c_str() + prefix.size(), &end, 10);
        if (pid <= 0 || *end != '.' || pid == ::getpid()) continue;
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
    }
}

// The page manifest: written last into every page directory, one path per line relative to the
// directory (a directory with a trailing '/'), after the line kManifestHeader. A directory is
// replaced only when everything in it is listed there (page_foreign_entries).
constexpr const char* kManifestName = ".attnspec-page";
constexpr const char* kManifestHeader =
    "attnspec rendered page: the files below were written by "
    "attnspec report render";

// Every entry below `dir` (relative, directories with a trailing '/', depth-first), at most
// `cap` of them (then `complete` is false); symbolic links and special files are listed with
// the suffix " (link)" / " (special)" so that they never match a manifest line.
std::vector<std::string> entries_below(const std::string& dir, std::size_t cap, bool& complete) {
    std::vector<std::string> out;
    complete = true;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (out.size() >= cap) {
            complete = false;
            break;
        }
        const fs::path rel = it->path().lexically_relative(dir);
        const fs::file_status st = it->symlink_status(ec);
        if (ec) break;
        std::string name = rel.string();
        if (fs::is_symlink(st))
            name += " (link)";
        else if (fs::is_directory(st))
            name += "/";
        else if (!fs::is_regular_file(st))
            name += " (special)";
        out.push_back(name);
    }
    if (ec) complete = false;
    return out;
}

// The names a page written before manifests holds: report.md and, with figures/, its
// figures.tsv, figures.json and the files figures.tsv names.
std::set<std::string> legacy_page_names(const std::string& dir) {
    std::set<std::string> names{"report.md"};
    std::ifstream tsv(dir + "/figures/figures.tsv");
    if (!tsv) return names;
    names.insert({"figures/", "figures/figures.tsv", "figures/figures.json"});
    std::string line;
    std::getline(tsv, line);  // the header
    for (int n = 0; n < 100000 && std::getline(tsv, line); ++n) {
        std::vector<std::string> c;
        std::stringstream ss(line);
        for (std::string x; std::getline(ss, x, '\t');) c.push_back(x);
        if (c.size() != 5) continue;
        for (const std::string& f : {c[2], c[3]})
            if (!f.empty() && f[0] != '/' && f.find("..") == std::string::npos)
                names.insert("figures/" + f);
    }
    return names;
}

// What `dir` holds that is not part of a page attnspec wrote there: the entries its manifest
// does not list (a page rendered before manifests: report.md, figures/ and what figures.tsv
// names). Empty when `dir` may be replaced.
std::vector<std::string> page_foreign_entries(const std::string& dir) {
    constexpr std::size_t kMaxEntries = 100000;
    bool complete = true;
    const std::vector<std::string> have = entries_below(dir, kMaxEntries, complete);
    std::set<std::string> ours;
    std::ifstream m(dir + "/" + kManifestName);
    std::string line;
    if (m && std::getline(m, line) && line == kManifestHeader) {
        ours.insert(kManifestName);
        for (std::size_t n = 0; n < kMaxEntries && std::getline(m, line); ++n) ours.insert(line);
    } else {
        ours = legacy_page_names(dir);
    }
    std::vector<std::string> foreign;
    for (const std::string& e : have)
        if (!ours.count(e)) foreign.push_back(e);
    if (!complete) foreign.push_back("(more than " + std::to_string(kMaxEntries) + " entries)");
    return foreign;
}

// 73 naming (up to five of) the entries of `dir` that are not part of a page.
[[noreturn]] void refuse_foreign(const std::string& dir, const std::vector<std::string>& foreign) {
    std::string names;
    for (std::size_t i = 0; i < foreign.size() && i < 5; ++i)
        names += (i ? ", " : "") +
                 (foreign[i].size() > 80 ? foreign[i].substr(0, 80) + "..." : foreign[i]);
    if (foreign.size() > 5) names += " and " + std::to_string(foreign.size() - 5) + " more";
    throw Error(ExitCode::CantCreate,
                "'" + dir + "' holds files that are not part of a page attnspec rendered there (" +
                    names + "): not replacing it (move them out or give another --out)");
}

// Writes the manifest of the page being built in `tmp`: everything in it.
void write_manifest(const std::string& tmp) {
    bool complete = true;
    std::string text = std::string(kManifestHeader) + "\n";
    for (const std::string& e : entries_below(tmp, 1000000, complete)) text += e + "\n";
    write_text_file_atomically(tmp + "/" + kManifestName, text);
}

std::string parent_of(const std::string& dir) {
    const fs::path p = fs::path(dir).lexically_normal();
    const fs::path parent = (p.has_filename() ? p : p.parent_path()).parent_path();
    return parent.empty() ? "." : parent.string();
}
}  // namespace

std::vector<PageFigure> read_figures_manifest(const std::string& dir) {
    const std::string tsv = dir + "/figures.tsv";
    std::ifstream f(tsv);
    if (!f) bad_manifest(tsv, 0, "missing");
    if (!fs::is_regular_file(dir + "/figures.json"))
        bad_manifest(dir + "/figures.json", 0, "missing");
    std::string line;
    if (!std::getline(f, line) || line != "id\tsection\tsvg\tpng\tcaption")
        bad_manifest(tsv, 1, "header is not 'id<TAB>section<TAB>svg<TAB>png<TAB>caption'");
    std::vector<PageFigure> out;
    for (int n = 2; std::getline(f, line); ++n) {
        if (line.empty()) continue;
        std::vector<std::string> c;
        std::stringstream ss(line);
        for (std::string x; std::getline(ss, x, '\t');) c.push_back(x);
        if (c.size() != 5) bad_manifest(tsv, n, std::to_string(c.size()) + " fields, expected 5");
        check_figure_file(dir, tsv, n, c[2]);
        check_figure_file(dir, tsv, n, c[3]);
        out.push_back({c[0], c[1], c[2], c[3], c[4]});
    }
    return out;
}

void check_page_dir_target(const std::string& dir, const std::string& input) {
    check_output_name(dir);  // before any filesystem call: a too-long name is 73, not 70
    const std::string parent = parent_of(dir);
    if (!fs::is_directory(parent))
        throw Error(ExitCode::CantCreate,
                    "cannot create '" + dir + "': '" + parent + "' is not a directory");
    struct stat s {};
    if (::lstat(dir.c_str(), &s) != 0) return;                   // a new path
    if (!S_ISDIR(s.st_mode)) check_output_target(dir, {input});  // 64 the input, 73 special
    if (!S_ISDIR(s.st_mode))
        throw Error(ExitCode::CantCreate,
                    "'" + dir +
                        "' exists and is not a directory: --out DIR takes a directory "
                        "(a path ending in .md writes the Markdown alone)");
    if (fs::is_empty(dir)) return;
    if (!fs::exists(dir + "/report.md"))
        throw Error(ExitCode::CantCreate,
                    "'" + dir +
                        "' is a directory without a report.md: not replacing it (give a "
                        "new path or a previous render's directory)");
    const std::vector<std::string> foreign = page_foreign_entries(dir);
    if (!foreign.empty()) refuse_foreign(dir, foreign);
}

std::size_t write_page_dir(const std::string& report, const std::string& dir, const Page& page,
                           bool figures, const PageLog& note) {
    const fs::path target = fs::path(dir).lexically_normal();
    const std::string name =
        (target.has_filename() ? target : target.parent_path()).filename().string();
    remove_stale_page_temps(parent_of(dir), name);
    std::string tmp =
        parent_of(dir) + "/" + temp_name_prefix(name) + std::to_string(::getpid()) + ".XXXXXX";
    if (!::mkdtemp(tmp.data()))
        throw Error(ExitCode::CantCreate,
                    "cannot create a temp directory beside '" + dir + "': " + std::strerror(errno));
    struct Cleanup {  // the temp, or after the swap the previous DIR: removed on every path
        std::string path;
        int slot;  // and by the signal cleanup (SIGINT, SIGTERM, SIGHUP)
        ~Cleanup() {
            std::error_code ec;
            if (!path.empty()) fs::remove_all(path, ec);
            unregister_temp_tree(slot);
        }
    } cleanup{tmp, register_temp_tree(tmp)};
    ::chmod(tmp.c_str(), 0755);
    std::vector<PageFigure> figs;
    if (figures) {
        const std::string figdir = tmp + "/figures";
        if (::mkdir(figdir.c_str(), 0755) != 0)
            throw Error(ExitCode::CantCreate,
                        "cannot create '" + figdir + "': " + std::strerror(errno));
        figures_into(report, figdir, note);
        figs = read_figures_manifest(figdir);
    }
    write_text_file_atomically(tmp + "/report.md", page_markdown(page, figs, "figures"));
    write_manifest(tmp);
    check_page_dir_target(dir, report);  // again: files may have been added meanwhile
    const bool replacing = fs::exists(dir);
    commit_dir(tmp, dir);
    if (replacing) {  // tmp holds the previous tree: anything added since the check goes back
        const std::vector<std::string> foreign = page_foreign_entries(tmp);
        if (!foreign.empty()) {
            if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0)
                cleanup.path.clear();  // could not swap back: keep both trees
            refuse_foreign(dir, foreign);
        }
    }
    return figs.size();
}

}  // namespace attnspec
