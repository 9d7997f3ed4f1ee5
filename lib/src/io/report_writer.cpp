// Atomic report writer, output-path checks, stale-temp removal and temp-file cleanup on signals
// (io/report_writer.hpp).
#include "attnspec/io/report_writer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "attnspec/base/errors.hpp"
#include "h5_internal.hpp"

namespace attnspec {

using io_detail::io_fail;
using io_detail::silence_hdf5;

namespace {

// ---- temp-file registry for signal cleanup (async-signal-safe: fixed buffers, unlink only) ----
constexpr int kMaxTemps = 16;
char g_temps[kMaxTemps][4096];
bool g_is_dir[kMaxTemps];  // a staging directory: rmdir (succeeds while it is still empty)
std::atomic<bool> g_used[kMaxTemps];

int register_temp(const std::string& path, bool is_dir = false) {
    for (int i = 0; i < kMaxTemps; ++i) {
        bool expected = false;
        if (g_used[i].compare_exchange_strong(expected, true)) {
            std::snprintf(g_temps[i], sizeof g_temps[i], "%s", path.c_str());
            g_is_dir[i] = is_dir;
            return i;
        }
    }
    return -1;
}
void unregister_temp(int slot) {
    if (slot >= 0) g_used[slot] = false;
}
// Directory trees (a page being rendered) removed whole on a signal, and a child process group
// (the figures script) killed first so that it writes nothing more into them.
constexpr int kMaxTrees = 4;
char g_trees[kMaxTrees][4096];
std::atomic<int> g_tree_state[kMaxTrees];  // 0 free, 1 being set, 2 removed on a signal
std::atomic<pid_t> g_child_group{0};

// Removes `name` below the open directory `parent` and, for a directory, everything in it
// (async-signal-safe: getdents64, unlinkat, fixed buffers; links are removed, never followed).
void remove_tree_at(int parent, const char* name, int depth) {
    if (::unlinkat(parent, name, 0) == 0 || errno == ENOENT || depth > 16) return;
    const int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    struct Head {  // struct linux_dirent64 without its name
        std::uint64_t ino;
        std::int64_t off;
        unsigned short reclen;
        unsigned char type;
    };
    constexpr long kNameAt = 19;  // offsetof(linux_dirent64, d_name)
    alignas(8) char buf[2048];
    for (long n; (n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;)
        for (long at = 0; at < n;) {
            Head h;
            std::memcpy(&h, buf + at, sizeof h);
            const char* entry = buf + at + kNameAt;
            at += h.reclen;
            if (std::strcmp(entry, ".") != 0 && std::strcmp(entry, "..") != 0)
                remove_tree_at(fd, entry, depth + 1);
        }
    ::close(fd);
    ::unlinkat(parent, name, AT_REMOVEDIR);
}

extern "C" void cleanup_and_reraise(int sig) {
    if (const pid_t g = g_child_group.load(); g > 0) ::kill(-g, SIGKILL);
    for (int i = 0; i < kMaxTrees; ++i)
        if (g_tree_state[i] == 2) remove_tree_at(AT_FDCWD, g_trees[i], 0);
    for (int i = 0; i < kMaxTemps; ++i) {
        if (!g_used[i]) continue;
        if (g_is_dir[i])
            rmdir(g_temps[i]);
        else
            unlink(g_temps[i]);
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

// ---- paths and names ----
}  // namespace

int register_temp_tree(const std::string& dir) {
    for (int i = 0; i < kMaxTrees; ++i) {
        int expected = 0;
        if (g_tree_state[i].compare_exchange_strong(expected, 1)) {
            std::snprintf(g_trees[i], sizeof g_trees[i], "%s", dir.c_str());
            g_tree_state[i] = 2;
            return i;
        }
    }
    return -1;
}

void unregister_temp_tree(int slot) {
    if (slot >= 0 && slot < kMaxTrees) g_tree_state[slot] = 0;
}

void set_signal_cleanup_child(pid_t group) { g_child_group = group; }

std::string temp_name_prefix(const std::string& name) {
    // ".<name>.tmp.<pid>.<16 hex>" within NAME_MAX (255 bytes): a pid of up to 10 digits leaves
    // 222 bytes for the name. A longer name is cut (at a UTF-8 boundary) and followed by "~" and
    // 16 hex digits of its FNV-1a hash: the same prefix for every run on one target.
    constexpr std::size_t kRoom = 255 - 1 - 5 - 10 - 1 - 16;
    if (name.size() <= kRoom) return "." + name + ".tmp.";
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    std::size_t keep = kRoom - 17;
    while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
    return "." + name.substr(0, keep) + "~" + hex + ".tmp.";
}

namespace {
std::pair<std::string, std::string> split_dir(const std::string& path) {
    auto pos = path.find_last_of('/');
    if (pos == std::string::npos) return {".", path};
    return {pos == 0 ? "/" : path.substr(0, pos), path.substr(pos + 1)};
}
std::string errno_text() { return std::strerror(errno); }

// 16 hex digits from the kernel's random source (the clock when that fails).
std::string random_suffix() {
    unsigned char b[8] = {};
    if (getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
        timespec t{};
        clock_gettime(CLOCK_MONOTONIC, &t);
        std::memcpy(b, &t.tv_nsec, sizeof b < sizeof t.tv_nsec ? sizeof b : sizeof t.tv_nsec);
    }
    char s[17];
    for (int i = 0; i < 8; ++i) std::snprintf(s + 2 * i, 3, "%02x", b[i]);
    return s;
}
// ".<name>.tmp." and ".<stem>.counterexamples.tmp.": the prefixes of a target's temps.
std::string temp_prefix(const std::string& base) { return temp_name_prefix(base); }
std::string companion_base(const std::string& base) {
    const bool h5 = base.size() > 3 && base.compare(base.size() - 3, 3, ".h5") == 0;
    return (h5 ? base.substr(0, base.size() - 3) : base) + ".counterexamples";
}
std::string unique_name(const std::string& dir, const std::string& prefix) {
    return dir + "/" + prefix + std::to_string(::getpid()) + "." + random_suffix();
}

// Creates a fresh temp file beside `target` (O_EXCL, O_NOFOLLOW) and returns its descriptor.
int create_temp_file(const std::string& target, std::string& path) {
    auto [dir, base] = split_dir(target);
    for (int attempt = 0; attempt < 16; ++attempt) {
        path = unique_name(dir, temp_prefix(base));
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) return fd;
        if (errno != EEXIST)
            throw Error(ExitCode::CantCreate, "cannot create '" + target + "' in directory '" +
                                                  dir + "': " + errno_text());
    }
    throw Error(ExitCode::CantCreate, "cannot create a temp file for '" + target + "'");
}

const char* file_kind(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

// The absolute, resolved form of a path whose last component may not exist yet.
std::string resolved(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf)) return buf;
    auto [dir, base] = split_dir(path);
    if (::realpath(dir.c_str(), buf)) return std::string(buf) + "/" + base;
    return path;
}

// Removes the plain files of a directory we created, then the directory (never recursing into
// a subdirectory, never following a link).
void remove_tree(const std::string& dir) {
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d)) {
            const std::string n = e->d_name;
            if (n == "." || n == "..") continue;
            ::unlinkat(::dirfd(d), n.c_str(), 0);
        }
        ::closedir(d);
    }
    ::rmdir(dir.c_str());
}

// The pid in "<prefix><pid>" or "<prefix><pid>.<anything>", or -1.
long pid_after(const std::string& name, const std::string& prefix) {
    if (name.compare(0, prefix.size(), prefix) != 0) return -1;
    size_t i = prefix.size(), j = i;
    while (j < name.size() && j - i < 10 && name[j] >= '0' && name[j] <= '9') ++j;
    if (j == i || (j < name.size() && name[j] != '.')) return -1;
    const long pid = std::strtol(name.substr(i, j - i).c_str(), nullptr, 10);
    return pid > 0 && pid <= INT_MAX ? pid : -1;
}

void write_all(int fd, const char* p, size_t n, const std::string& what) {
    while (n > 0) {
        const ssize_t k = ::write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) io_fail("cannot write " + what + ": " + (k < 0 ? errno_text() : "no progress"));
        p += k;
        n -= static_cast<size_t>(k);
    }
}
void sync_and_close(int& fd, const std::string& what) {
    const int rs = ::fsync(fd);
    const int e1 = errno;
    const int rc = ::close(fd);
    fd = -1;
    if (rs != 0) io_fail("cannot write " + what + ": " + std::strerror(e1));
    if (rc != 0) io_fail("cannot write " + what + ": " + errno_text());
}

// An exclusive lock on a directory for the commit (released by the destructor).
class DirLock {
  public:
    explicit DirLock(const std::string& dir) : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY)) {
        if (fd_ >= 0) ::flock(fd_, LOCK_EX);
    }
    ~DirLock() {
        if (fd_ >= 0) ::close(fd_);  // closing releases the lock
    }
    DirLock(const DirLock&) = delete;
    DirLock& operator=(const DirLock&) = delete;
    void sync() {
        if (fd_ >= 0 && ::fsync(fd_) != 0)
            io_fail("fsync of the report directory: " + errno_text());
    }

  private:
    int fd_;
};

}  // namespace

void install_cleanup_signal_handlers() {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, cleanup_and_reraise);
}

// ---------------------------------------------------------------- output checks
void check_output_name(const std::string& target) {
    if (target.size() >= PATH_MAX)
        throw Error(ExitCode::CantCreate, "output path of " + std::to_string(target.size()) +
                                              " bytes: longer than the system allows (" +
                                              std::to_string(PATH_MAX - 1) + ")");
    std::size_t start = 0;
    while (start <= target.size()) {  // every component, the file name included
        const std::size_t end = std::min(target.find('/', start), target.size());
        if (end - start > NAME_MAX)
            throw Error(ExitCode::CantCreate, "output path '" + target + "': a name of " +
                                                  std::to_string(end - start) +
                                                  " bytes, longer than a file name may be (" +
                                                  std::to_string(NAME_MAX) + ")");
        start = end + 1;
    }
}

void check_output_target(const std::string& target, const std::vector<std::string>& inputs) {
    if (target.empty()) return;
    check_output_name(target);
    auto [dir, base] = split_dir(target);
    if (base.empty() || base == "." || base == "..")
        throw Error(ExitCode::CantCreate, "output path '" + target + "' names a directory");
    struct stat t {};
    const bool exists = ::stat(target.c_str(), &t) == 0;
    if (exists && !S_ISREG(t.st_mode))
        throw Error(ExitCode::CantCreate, "output '" + target + "' is " + file_kind(t.st_mode) +
                                              ": attnspec writes only regular files or new paths");
    for (const auto& in : inputs) {
        if (in.empty()) continue;
        struct stat s {};
        const bool same = exists && ::stat(in.c_str(), &s) == 0
                              ? s.st_dev == t.st_dev && s.st_ino == t.st_ino
                              : resolved(in) == resolved(target);
        if (same)
            throw Error(ExitCode::Usage, "output '" + target + "' is the input '" + in +
                                             "': refusing to overwrite an input (choose "
                                             "another --out)");
    }
    std::string probe;
    const int fd = create_temp_file(target, probe);  // 73 naming the cause
    ::close(fd);
    ::unlink(probe.c_str());
}

int remove_stale_temps(const std::string& target) {
    auto [dir, base] = split_dir(target);
    const std::string files = temp_prefix(base), dirs = temp_prefix(companion_base(base));
    int removed = 0;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return 0;
    std::vector<std::string> stale;
    while (dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        long pid = pid_after(n, files);
        if (pid < 0) pid = pid_after(n, dirs);
        if (pid < 0 || pid == ::getpid()) continue;
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(n);
    }
    ::closedir(d);
    for (const auto& n : stale) {
        const std::string p = dir + "/" + n;
        struct stat s {};
        if (::lstat(p.c_str(), &s) != 0) continue;
        if (S_ISDIR(s.st_mode))
            remove_tree(p);
        else
            ::unlink(p.c_str());
        ++removed;
    }
    return removed;
}

void write_text_file_atomically(const std::string& path, const std::string& text) {
    check_output_target(path);
    remove_stale_temps(path);
    std::string temp;
    int fd = create_temp_file(path, temp);
    const int slot = register_temp(temp);
    try {
        write_all(fd, text.data(), text.size(), "'" + path + "' (temp '" + temp + "')");
        sync_and_close(fd, "'" + path + "'");
        if (std::rename(temp.c_str(), path.c_str()) != 0)
            throw Error(ExitCode::CantCreate, "cannot rename into '" + path + "': " + errno_text());
    } catch (...) {
        if (fd >= 0) ::close(fd);
        ::unlink(temp.c_str());
        unregister_temp(slot);
        throw;
    }
    unregister_temp(slot);
}

// ---------------------------------------------------------------- ReportWriter
ReportWriter::ReportWriter(const std::string& target, const Provenance& prov) : target_(target) {
    silence_hdf5();
    check_output_target(target);
    remove_stale_temps(target);
    fd_ = create_temp_file(target, temp_);
    temp_slot_ = register_temp(temp_);
    // Built in memory: HDF5 never writes to disk itself, so a full disk is one failed write()
    // here (a clean exit 74), never a failed flush inside the library.
    H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_core(fapl.get(), 1 << 20, 0);
    hid_t f = H5Fcreate(temp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
    if (f < 0) throw Error(ExitCode::CantCreate, "cannot create report '" + target + "' (HDF5)");
    file_ = H5Id(f, H5Fclose);
    hid_t g = H5Gopen2(f, "/", H5P_DEFAULT);
    root_ = std::make_unique<H5Group>(H5Id(g, H5Gclose));
    root_->attr("schema_version", kSchemaVersion);
    for (const auto& [k, v] : build_versions()) root_->attr(k, v);
    root_->attr("command_line", prov.command_line);
    root_->attr("created_utc", utc_now_iso8601());
    root_->attr("host", host_name());
    root_->attr("seed", std::to_string(prov.seed));
    for (const auto& [k, v] : prov.extra) root_->attr(k, v);
}

ReportWriter::~ReportWriter() {
    root_.reset();
    file_.reset();
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) {
        if (!temp_.empty()) ::unlink(temp_.c_str());
        if (!staging_.empty()) remove_tree(staging_);
    }
    unregister_temp(temp_slot_);
    unregister_temp(staging_slot_);
}

std::string ReportWriter::companion_dir() const {
    auto [dir, base] = split_dir(target_);
    return dir + "/" + companion_base(base);
}

const std::string& ReportWriter::companion_staging() {
    if (!staging_.empty()) return staging_;
    auto [dir, base] = split_dir(target_);
    for (int attempt = 0; attempt < 16 && staging_.empty(); ++attempt) {
        std::string p = unique_name(dir, temp_prefix(companion_base(base)));
        if (::mkdir(p.c_str(), 0755) == 0) {
            staging_ = p;
            staging_slot_ = register_temp(staging_, true);
        } else if (errno != EEXIST)
            throw Error(ExitCode::CantCreate,
                        "cannot create directory '" + p + "' for counterexamples: " + errno_text());
    }
    if (staging_.empty()) throw Error(ExitCode::CantCreate, "cannot create a staging directory");
    return staging_;
}

void ReportWriter::commit() {
    root_.reset();
    const std::string what = "report '" + target_ + "' (temp '" + temp_ + "')";
    if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) io_fail("cannot flush " + what);
    const ssize_t size = H5Fget_file_image(file_.get(), nullptr, 0);
    if (size <= 0) io_fail("cannot serialize " + what);
    std::vector<char> image(static_cast<size_t>(size));
    if (H5Fget_file_image(file_.get(), image.data(), image.size()) != size)
        io_fail("cannot serialize " + what);
    file_.reset();
    write_all(fd_, image.data(), image.size(), what);
    sync_and_close(fd_, what);
    {  // reopen and validate
        H5Reader check(temp_);
        if (check.attr_string("/", "schema_version") != kSchemaVersion)
            io_fail("report validation failed: schema_version mismatch in '" + temp_ + "'");
    }
    DirLock lock(split_dir(target_).first);
    if (!staging_.empty()) {
        const std::string final_dir = companion_dir();
        DIR* d = ::opendir(staging_.c_str());
        bool empty = true;
        for (dirent* e = d ? ::readdir(d) : nullptr; e; e = ::readdir(d))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
                empty = false;
        if (d) ::closedir(d);
        struct stat s {};
        if (::lstat(final_dir.c_str(), &s) == 0 && S_ISDIR(s.st_mode)) remove_tree(final_dir);
        if (empty)
            ::rmdir(staging_.c_str());
        else if (std::rename(staging_.c_str(), final_dir.c_str()) != 0)
            throw Error(ExitCode::CantCreate,
                        "cannot move counterexamples into '" + final_dir + "': " + errno_text());
        staging_.clear();
        unregister_temp(staging_slot_);
        staging_slot_ = -1;
    }
    if (std::rename(temp_.c_str(), target_.c_str()) != 0)
        throw Error(ExitCode::CantCreate,
                    "cannot rename report into place '" + target_ + "': " + errno_text());
    committed_ = true;
    lock.sync();
}

}  // namespace attnspec
