// HDF5 writer/reader (see report.hpp).
#include "attnspec/report.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <Spectra/Util/Version.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>

#include "attnspec/errors.hpp"
#include "git_info.hpp"


namespace attnspec {

namespace {

[[noreturn]] void io_fail(const std::string& what) { throw Error(ExitCode::IoError, what); }

void silence_hdf5() {
    static std::once_flag once;
    std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

H5Id utf8_vlen_type() {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return H5Id(t, H5Tclose);
}

H5Id no_times(hid_t cls) {
    hid_t p = H5Pcreate(cls);
    H5Pset_obj_track_times(p, 0);
    return H5Id(p, H5Pclose);
}

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

// ---------------------------------------------------------------- H5Id
H5Id& H5Id::operator=(H5Id&& o) noexcept {
    if (this != &o) {
        reset();
        id_ = o.id_;
        closer_ = o.closer_;
        o.id_ = -1;
    }
    return *this;
}
void H5Id::reset() {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = -1;
}

// ---------------------------------------------------------------- H5Group
H5Group H5Group::group(const std::string& name) {
    H5Id gcpl = no_times(H5P_GROUP_CREATE);
    // keep children in the order they were written (the run order), readable by h5py too
    H5Pset_link_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    hid_t g = H5Gcreate2(id(), name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT);
    if (g < 0) io_fail("cannot create HDF5 group '" + name + "'");
    return H5Group(H5Id(g, H5Gclose));
}

void H5Group::attr(const std::string& name, const std::string& value) {
    H5Id type = utf8_vlen_type();
    H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
    H5Id a(H5Acreate2(id(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
    if (!a.valid()) io_fail("cannot create attribute '" + name + "'");
    const char* p = value.c_str();
    if (H5Awrite(a.get(), type.get(), &p) < 0) io_fail("cannot write attribute '" + name + "'");
}

void H5Group::attr(const std::string& name, double value) {
    H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
    H5Id a(H5Acreate2(id(), name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
    if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value) < 0)
        io_fail("cannot write attribute '" + name + "'");
}

void H5Group::attr(const std::string& name, std::int64_t value) {
    H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
    H5Id a(H5Acreate2(id(), name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
    if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_INT64, &value) < 0)
        io_fail("cannot write attribute '" + name + "'");
}

void H5Group::write_numeric(const std::string& name, hid_t mem_type, hid_t file_type, int rank,
                            const hsize_t* dims, const void* data) {
    H5Id space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
    H5Id dcpl = no_times(H5P_DATASET_CREATE);
    hsize_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    if (n >= (1u << 16)) {  // large: chunk + shuffle + deflate (chunks of ~1 MiB or less)
        hsize_t chunk[2] = {dims[0], rank == 2 ? dims[1] : 1};
        const hsize_t target = 1u << 17;  // elements per chunk
        if (rank == 2) {
            if (chunk[1] > target) chunk[1] = target;
            chunk[0] = std::max<hsize_t>(1, std::min<hsize_t>(dims[0], target / chunk[1]));
        } else {
            chunk[0] = std::min<hsize_t>(dims[0], target);
        }
        H5Pset_chunk(dcpl.get(), rank, chunk);
        H5Pset_shuffle(dcpl.get());
        H5Pset_deflate(dcpl.get(), 4);
    }
    H5Id d(H5Dcreate2(id(), name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(),
                      H5P_DEFAULT),
           H5Dclose);
    if (!d.valid()) io_fail("cannot create dataset '" + name + "'");
    if (n > 0 && H5Dwrite(d.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        io_fail("cannot write dataset '" + name + "'");
}

void H5Group::write(const std::string& name, const Eigen::MatrixXd& m) {
    // Eigen is column-major; HDF5 (and h5py) are row-major: store the row-major copy so that the
    // dataset's shape is (rows, cols) and h5py's f[name][i, j] == m(i, j).
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm = m;
    hsize_t dims[2] = {static_cast<hsize_t>(m.rows()), static_cast<hsize_t>(m.cols())};
    write_numeric(name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 2, dims, rm.data());
}

void H5Group::write(const std::string& name, const std::vector<double>& v) {
    hsize_t dims[1] = {v.size()};
    write_numeric(name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 1, dims, v.data());
}

void H5Group::write(const std::string& name, const std::vector<std::int64_t>& v) {
    hsize_t dims[1] = {v.size()};
    write_numeric(name, H5T_NATIVE_INT64, H5T_STD_I64LE, 1, dims, v.data());
}

void H5Group::write(const std::string& name, const std::vector<std::string>& v) {
    H5Id type = utf8_vlen_type();
    hsize_t dims[1] = {v.size()};
    H5Id space(H5Screate_simple(1, dims, nullptr), H5Sclose);
    H5Id dcpl = no_times(H5P_DATASET_CREATE);
    H5Id d(H5Dcreate2(id(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, dcpl.get(),
                      H5P_DEFAULT),
           H5Dclose);
    if (!d.valid()) io_fail("cannot create dataset '" + name + "'");
    std::vector<const char*> ptrs;
    for (const auto& s : v) ptrs.push_back(s.c_str());
    if (!v.empty() && H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
        io_fail("cannot write dataset '" + name + "'");
}

// ---------------------------------------------------------------- provenance
namespace {
// The BLAS actually loaded: OpenBLAS announces itself through openblas_get_config.
std::string blas_name() {
    using Fn = char* (*)();
    if (auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
        const std::string c = fn();
        return c.rfind("OpenBLAS", 0) == 0 ? c : "OpenBLAS " + c;
    }
    return "reference BLAS/LAPACK (or another implementation without openblas_get_config)";
}
}  // namespace

std::vector<std::pair<std::string, std::string>> build_versions() {
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    std::vector<std::pair<std::string, std::string>> v = {
        {"tool_version", ATTNSPEC_VERSION},
        {"git_sha", ATTNSPEC_GIT_SHA},
        {"git_dirty", ATTNSPEC_GIT_DIRTY},
        {"compiler", ATTNSPEC_CXX_COMPILER},
        {"build_type", ATTNSPEC_BUILD_TYPE},
        {"eigen_version", std::to_string(EIGEN_WORLD_VERSION) + "." +
                              std::to_string(EIGEN_MAJOR_VERSION) + "." +
                              std::to_string(EIGEN_MINOR_VERSION)},
        {"spectra_version", std::to_string(SPECTRA_MAJOR_VERSION) + "." +
                                std::to_string(SPECTRA_MINOR_VERSION) + "." +
                                std::to_string(SPECTRA_PATCH_VERSION)},
        {"hdf5_version",
         std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel)},
        {"blas", blas_name()},
    };
    return v;
}

std::string utc_now_iso8601() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string host_name() {
    char buf[256] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
    return buf;
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
    if (base.empty()) throw Error(ExitCode::CantCreate, "output path '" + target + "' names a directory");
    if (::access(dir.c_str(), W_OK) != 0)
        throw Error(ExitCode::CantCreate, "cannot create report '" + target + "': directory '" +
                                              dir + "' " + std::strerror(errno));
    temp_ = dir + "/." + base + ".tmp." + std::to_string(::getpid());
    temp_slot_ = register_temp(temp_);
    hid_t f = H5Fcreate(temp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        unregister_temp(temp_slot_);
        throw Error(ExitCode::CantCreate, "cannot create report '" + target + "' (temp file '" +
                                              temp_ + "')");
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

// ---------------------------------------------------------------- checks
void write_check_result(H5Group& g, const CheckResult& r) {
    g.attr("check", r.check);
    g.attr("claim", r.claim);
    g.attr("regime", r.regime);
    g.attr("seed", std::to_string(r.seed));
    g.attr("verdict", to_string(r.verdict));
    if (!r.note.empty()) g.attr("note", r.note);
    for (const auto& [k, v] : r.conventions) g.attr("convention:" + k, v);
    {
        H5Group h = g.group("hypotheses");
        for (const auto& hy : r.hypotheses) {
            H5Group x = h.group(hy.name);
            x.attr("met", static_cast<std::int64_t>(hy.met));
            x.attr("detail", hy.detail);
        }
    }
    {
        H5Group c = g.group("comparisons");
        for (const auto& cm : r.comparisons) {
            H5Group x = c.group(cm.name);
            x.attr("relation", to_string(cm.rel));
            x.attr("lhs_name", cm.lhs_name);
            x.attr("rhs_name", cm.rhs_name);
            x.attr("lhs", cm.lhs);
            x.attr("rhs", cm.rhs);
            x.write("lhs_enclosure", std::vector<double>{cm.lhs_enc.lo, cm.lhs_enc.hi});
            x.write("rhs_enclosure", std::vector<double>{cm.rhs_enc.lo, cm.rhs_enc.hi});
            x.attr("margin", cm.margin);
            x.attr("ratio", cm.ratio);
            x.attr("verdict", to_string(cm.verdict));
            x.attr("basis", cm.basis);
            x.attr("attainable", static_cast<std::int64_t>(cm.attainable));
        }
    }
    {
        H5Group t = g.group("tolerances");
        for (const auto& tol : r.tolerances) {
            H5Group x = t.group(tol.name);
            x.attr("value", tol.value);
            x.attr("reason", tol.reason);
        }
    }
    {
        H5Group v = g.group("values");
        for (const auto& [k, x] : r.values) v.attr(k, x);
    }
    {
        H5Group in = g.group("instance");
        for (const auto& [k, m] : r.instance) in.write(k, m);
    }
}

void write_check_run(H5Group& parent, const CheckRun& run) {
    H5Group g = parent.group(run.check);
    g.attr("check", run.check);
    g.attr("claim", run.claim);
    g.attr("verdict", to_string(run.verdict));
    g.attr("seed", std::to_string(run.seed));
    g.attr("instances", static_cast<std::int64_t>(run.results.size()));
    for (int v = 0; v < 4; ++v) g.attr(std::string("n_") + to_string(static_cast<Verdict>(v)), run.count(static_cast<Verdict>(v)));
    g.attr("headline_comparison", run.headline);
    g.attr("seconds", run.seconds);
    if (!run.search_effort.empty()) g.attr("search_effort", run.search_effort);

    // Per-instance table (one row per instance).
    std::vector<std::string> regime, verdict, seeds;
    std::vector<double> lhs, rhs, margin, ratio;
    for (const auto& r : run.results) {
        regime.push_back(r.regime);
        verdict.push_back(to_string(r.verdict));
        seeds.push_back(std::to_string(r.seed));
        const Comparison* c = r.comparison(run.headline);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        lhs.push_back(c ? c->lhs : nan);
        rhs.push_back(c ? c->rhs : nan);
        margin.push_back(c ? c->margin : nan);
        ratio.push_back(c ? c->ratio : nan);
    }
    {
        H5Group t = g.group("instances");
        t.write("regime", regime);
        t.write("verdict", verdict);
        t.write("seed", seeds);
        t.write("lhs", lhs);
        t.write("rhs", rhs);
        t.write("margin", margin);
        t.write("ratio", ratio);
    }
    {
        H5Group t = g.group("regimes");
        std::vector<std::string> names;
        std::vector<std::int64_t> cnt[4];
        std::vector<double> worst, median;
        for (const auto& s : run.regimes) {
            names.push_back(s.regime);
            for (int v = 0; v < 4; ++v) cnt[v].push_back(s.counts[v]);
            worst.push_back(s.worst_ratio);
            median.push_back(s.median_ratio);
        }
        t.write("regime", names);
        for (int v = 0; v < 4; ++v) t.write(std::string("n_") + to_string(static_cast<Verdict>(v)), cnt[v]);
        t.write("worst_ratio", worst);
        t.write("median_ratio", median);
    }
    // Full records: every violated / inconclusive instance, plus the instance with the worst
    // headline ratio (so the tightest case can be replayed even when everything holds).
    H5Group recs = g.group("records");
    int worst = -1;
    double worst_ratio = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < run.results.size(); ++i) {
        const Comparison* c = run.results[i].comparison(run.headline);
        if (c && std::isfinite(c->ratio) && c->ratio > worst_ratio &&
            run.results[i].verdict != Verdict::not_applicable) {
            worst_ratio = c->ratio;
            worst = static_cast<int>(i);
        }
    }
    int written = 0;
    for (size_t i = 0; i < run.results.size(); ++i) {
        const auto& r = run.results[i];
        const bool keep = static_cast<int>(i) == worst || r.verdict == Verdict::violated ||
                          r.verdict == Verdict::inconclusive;
        if (!keep || written >= 64) continue;
        H5Group x = recs.group("instance_" + std::to_string(i));
        if (static_cast<int>(i) == worst) x.attr("is_worst", static_cast<std::int64_t>(1));
        write_check_result(x, r);
        ++written;
    }
}

void write_instance_file(const std::string& path, const CheckResult& r, const Provenance& prov) {
    ReportWriter w(path, prov);
    w.root().attr("kind", "attnspec-instance");
    w.root().attr("check", r.check);
    H5Group g = w.root().group("record");
    write_check_result(g, r);
    w.commit();
}

// ---------------------------------------------------------------- H5Reader
H5Reader::H5Reader(const std::string& path) : path_(path) {
    silence_hdf5();
    if (::access(path.c_str(), R_OK) != 0)
        throw Error(ExitCode::NoInput, "cannot read '" + path + "': " + std::strerror(errno));
    htri_t is = H5Fis_hdf5(path.c_str());
    if (is <= 0) throw Error(ExitCode::DataError, "'" + path + "' is not an HDF5 file");
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) throw Error(ExitCode::DataError, "'" + path + "' is a malformed HDF5 file");
    file_ = H5Id(f, H5Fclose);
}

bool H5Reader::exists(const std::string& path) const {
    if (path == "/" || path.empty()) return true;
    // check each prefix (H5Lexists fails on missing intermediate groups)
    size_t pos = 0;
    while (true) {
        pos = path.find('/', pos + 1);
        std::string prefix = path.substr(0, pos);
        if (!prefix.empty() && prefix != "/") {
            if (H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
        }
        if (pos == std::string::npos) return true;
    }
}

bool H5Reader::is_group(const std::string& path) const {
    H5O_info_t info;
    if (H5Oget_info_by_name(file_.get(), path.c_str(), &info, H5P_DEFAULT) < 0) return false;
    return info.type == H5O_TYPE_GROUP;
}

namespace {
herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* data) {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
}
herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* data) {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
}
}  // namespace

std::vector<std::string> H5Reader::children(const std::string& group) const {
    std::vector<std::string> out;
    H5Id g(H5Gopen2(file_.get(), group.c_str(), H5P_DEFAULT), H5Gclose);
    if (!g.valid()) throw Error(ExitCode::DataError, path_ + ": no group '" + group + "'");
    // creation order where the file tracks it (attnspec reports do), else by name
    if (H5Literate(g.get(), H5_INDEX_CRT_ORDER, H5_ITER_INC, nullptr, collect_name, &out) < 0) {
        out.clear();
        H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &out);
    }
    return out;
}

std::vector<std::string> H5Reader::attr_names(const std::string& obj) const {
    std::vector<std::string> out;
    H5Id o(H5Oopen(file_.get(), obj.c_str(), H5P_DEFAULT), H5Oclose);
    if (!o.valid()) throw Error(ExitCode::DataError, path_ + ": no object '" + obj + "'");
    H5Aiterate2(o.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attr, &out);
    return out;
}

bool H5Reader::has_attr(const std::string& obj, const std::string& name) const {
    return H5Aexists_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::string H5Reader::attr_string(const std::string& obj, const std::string& name) const {
    H5Id a(H5Aopen_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
    if (!a.valid())
        throw Error(ExitCode::DataError, path_ + ": missing attribute '" + name + "' on '" + obj + "'");
    H5Id ftype(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(ftype.get()) != H5T_STRING)
        throw Error(ExitCode::DataError, path_ + ": attribute '" + name + "' is not a string");
    if (H5Tis_variable_str(ftype.get()) > 0) {
        H5Id mtype = utf8_vlen_type();
        char* p = nullptr;
        if (H5Aread(a.get(), mtype.get(), &p) < 0)
            throw Error(ExitCode::DataError, path_ + ": cannot read attribute '" + name + "'");
        std::string s = p ? p : "";
        H5free_memory(p);
        return s;
    }
    size_t n = H5Tget_size(ftype.get());
    std::string s(n, '\0');
    H5Id mtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mtype.get(), n);
    if (H5Aread(a.get(), mtype.get(), s.data()) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read attribute '" + name + "'");
    return s.substr(0, s.find('\0'));
}

double H5Reader::attr_double(const std::string& obj, const std::string& name) const {
    H5Id a(H5Aopen_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
    if (!a.valid())
        throw Error(ExitCode::DataError, path_ + ": missing attribute '" + name + "' on '" + obj + "'");
    H5Id ftype(H5Aget_type(a.get()), H5Tclose);
    auto cls = H5Tget_class(ftype.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
        throw Error(ExitCode::DataError, path_ + ": attribute '" + name + "' is not numeric");
    double x = 0;
    if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &x) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read attribute '" + name + "'");
    return x;
}

std::string H5Reader::attr_as_text(const std::string& obj, const std::string& name) const {
    H5Id a(H5Aopen_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
    if (!a.valid()) return "?";
    H5Id ftype(H5Aget_type(a.get()), H5Tclose);
    auto cls = H5Tget_class(ftype.get());
    if (cls == H5T_STRING) return attr_string(obj, name);
    if (cls == H5T_FLOAT || cls == H5T_INTEGER) {
        H5Id sp(H5Aget_space(a.get()), H5Sclose);
        if (H5Sget_simple_extent_npoints(sp.get()) != 1) return "[array]";
        char buf[40];
        double x = attr_double(obj, name);
        std::snprintf(buf, sizeof buf, cls == H5T_INTEGER ? "%.0f" : "%.6g", x);
        return buf;
    }
    return "[unsupported type]";
}

std::vector<hsize_t> H5Reader::shape(const std::string& dataset) const {
    if (!exists(dataset)) throw Error(ExitCode::DataError, path_ + ": no dataset '" + dataset + "'");
    H5Id d(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid()) throw Error(ExitCode::DataError, path_ + ": '" + dataset + "' is not a dataset");
    H5Id sp(H5Dget_space(d.get()), H5Sclose);
    int rank = H5Sget_simple_extent_ndims(sp.get());
    if (rank < 0) throw Error(ExitCode::DataError, path_ + ": malformed dataset '" + dataset + "'");
    std::vector<hsize_t> dims(rank);
    H5Sget_simple_extent_dims(sp.get(), dims.data(), nullptr);
    return dims;
}

Eigen::MatrixXd H5Reader::matrix(const std::string& dataset, bool allow_nonfinite) const {
    auto dims = shape(dataset);
    if (dims.empty() || dims.size() > 2)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' has rank " +
                                             std::to_string(dims.size()) + ", expected 1 or 2");
    H5Id d(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
    H5Id ftype(H5Dget_type(d.get()), H5Tclose);
    auto cls = H5Tget_class(ftype.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' is not numeric");
    const Eigen::Index rows = static_cast<Eigen::Index>(dims[0]);
    const Eigen::Index cols = dims.size() == 2 ? static_cast<Eigen::Index>(dims[1]) : 1;
    if (rows == 0 || cols == 0)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' is empty");
    check_allocation(8.0 * rows * cols, 8.0 * (1ull << 33), "reading '" + dataset + "'");
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm(rows, cols);
    if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, rm.data()) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read dataset '" + dataset + "'");
    if (!allow_nonfinite && !rm.allFinite())
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' contains NaN or Inf");
    return rm;
}

std::vector<double> H5Reader::vector(const std::string& dataset) const {
    Eigen::MatrixXd m = matrix(dataset, true);
    return std::vector<double>(m.data(), m.data() + m.size());
}

std::vector<std::string> H5Reader::strings(const std::string& dataset) const {
    auto dims = shape(dataset);
    if (dims.size() != 1)
        throw Error(ExitCode::DataError, path_ + ": '" + dataset + "' is not a 1-D string dataset");
    H5Id d(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
    H5Id ftype(H5Dget_type(d.get()), H5Tclose);
    if (H5Tget_class(ftype.get()) != H5T_STRING || H5Tis_variable_str(ftype.get()) <= 0)
        throw Error(ExitCode::DataError, path_ + ": '" + dataset + "' is not a variable-length string dataset");
    std::vector<char*> ptrs(dims[0], nullptr);
    H5Id mtype = utf8_vlen_type();
    if (dims[0] > 0 && H5Dread(d.get(), mtype.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read '" + dataset + "'");
    std::vector<std::string> out;
    for (char* p : ptrs) {
        out.emplace_back(p ? p : "");
        H5free_memory(p);
    }
    return out;
}

}  // namespace attnspec
