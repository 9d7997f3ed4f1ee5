// Atomic report writer and temp-file cleanup on signals (io/report_writer.hpp).
#include "attnspec/io/report_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "attnspec/base/errors.hpp"
#include "h5_internal.hpp"

namespace attnspec {

using io_detail::io_fail;
using io_detail::silence_hdf5;

namespace {

// ---- temp-file registry for signal cleanup (async-signal-safe: fixed buffers, unlink only) ----
constexpr int kMaxTemps = 16;
char g_temps[kMaxTemps][4096];
std::atomic<bool> g_used[kMaxTemps];

int register_temp(const std::string& path) {
    for (int i = 0; i < kMaxTemps; ++i) {
        bool expected = false;
        if (g_used[i].compare_exchange_strong(expected, true)) {
            std::snprintf(g_temps[i], sizeof g_temps[i], "%s", path.c_str());
            return i;
        }
    }
    return -1;
}
void unregister_temp(int slot) {
    if (slot >= 0) g_used[slot] = false;
}
extern "C" void cleanup_and_reraise(int sig) {
    for (int i = 0; i < kMaxTemps; ++i)
        if (g_used[i]) unlink(g_temps[i]);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

}  // namespace

void install_cleanup_signal_handlers() {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, cleanup_and_reraise);
}

// ---------------------------------------------------------------- ReportWriter
namespace {
std::pair<std::string, std::string> split_dir(const std::string& path) {
    auto pos = path.find_last_of('/');
    if (pos == std::string::npos) return {".", path};
    return {pos == 0 ? "/" : path.substr(0, pos), path.substr(pos + 1)};
}
void fsync_path(const std::string& p, int flags) {
    int fd = ::open(p.c_str(), flags);
    if (fd < 0) io_fail("cannot open '" + p + "' for fsync: " + std::strerror(errno));
    int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) io_fail("fsync failed on '" + p + "': " + std::strerror(errno));
}
}  // namespace

ReportWriter::ReportWriter(const std::string& target, const Provenance& prov) : target_(target) {
    silence_hdf5();
    auto [dir, base] = split_dir(target);
    if (base.empty())
        throw Error(ExitCode::CantCreate, "output path '" + target + "' names a directory");
    if (::access(dir.c_str(), W_OK) != 0)
        throw Error(ExitCode::CantCreate, "cannot create report '" + target + "': directory '" +
                                              dir + "' " + std::strerror(errno));
    temp_ = dir + "/." + base + ".tmp." + std::to_string(::getpid());
    temp_slot_ = register_temp(temp_);
    hid_t f = H5Fcreate(temp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        unregister_temp(temp_slot_);
        throw Error(ExitCode::CantCreate,
                    "cannot create report '" + target + "' (temp file '" + temp_ + "')");
    }
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
    if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
    unregister_temp(temp_slot_);
}

void ReportWriter::commit() {
    root_.reset();
    if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) io_fail("cannot flush report '" + temp_ + "'");
    file_.reset();
    fsync_path(temp_, O_RDONLY);
    {  // reopen and validate
        H5Reader check(temp_);
        if (check.attr_string("/", "schema_version") != kSchemaVersion)
            io_fail("report validation failed: schema_version mismatch in '" + temp_ + "'");
    }
    if (std::rename(temp_.c_str(), target_.c_str()) != 0)
        throw Error(ExitCode::CantCreate,
                    "cannot rename report into place '" + target_ + "': " + std::strerror(errno));
    committed_ = true;
    fsync_path(split_dir(target_).first, O_RDONLY | O_DIRECTORY);
}

}  // namespace attnspec
