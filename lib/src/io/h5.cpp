// HDF5 RAII ids, group writer and reader (io/h5.hpp).
#include "attnspec/io/h5.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/base/memory.hpp"
#include "h5_internal.hpp"
#include "tensor_files_internal.hpp"

namespace attnspec {

using io_detail::io_fail;
using io_detail::no_times;
using io_detail::silence_hdf5;
using io_detail::utf8_vlen_type;

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
                            const hsize_t* dims, const void* data, bool compress) {
    H5Id space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
    H5Id dcpl = no_times(H5P_DATASET_CREATE);
    hsize_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    if (compress &&
        n >= (1u << 16)) {  // large: chunk + shuffle + deflate (chunks of ~1 MiB or less)
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

void H5Group::write(const std::string& name, const Eigen::MatrixXd& m, bool compress) {
    // Eigen is column-major; HDF5 (and h5py) are row-major: store the row-major copy so that the
    // dataset's shape is (rows, cols) and h5py's f[name][i, j] == m(i, j).
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm = m;
    hsize_t dims[2] = {static_cast<hsize_t>(m.rows()), static_cast<hsize_t>(m.cols())};
    write_numeric(name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 2, dims, rm.data(), compress);
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
    ptrs.reserve(v.size());
    for (const auto& s : v) ptrs.push_back(s.c_str());
    if (!v.empty() && H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
        io_fail("cannot write dataset '" + name + "'");
}

// ---------------------------------------------------------------- H5Reader
namespace {

// "float64", "int32", "string", ... for a stored HDF5 type.
std::string type_name(hid_t t) {
    const std::string bits = std::to_string(8 * H5Tget_size(t));
    switch (H5Tget_class(t)) {
        case H5T_FLOAT:
            return "float" + bits;
        case H5T_INTEGER:
            return (H5Tget_sign(t) == H5T_SGN_NONE ? "uint" : "int") + bits;
        case H5T_STRING:
            return "string";
        case H5T_COMPOUND:
            return "compound";
        case H5T_ENUM:
            return "enum";
        case H5T_ARRAY:
            return "array";
        case H5T_VLEN:
            return "vlen";
        case H5T_OPAQUE:
            return "opaque";
        case H5T_BITFIELD:
            return "bitfield";
        case H5T_REFERENCE:
            return "reference";
        default:
            return "other";
    }
}

std::string dims_text(const std::vector<hsize_t>& dims) {
    std::string t;
    for (size_t i = 0; i < dims.size(); ++i) t += (i ? " x " : "") + std::to_string(dims[i]);
    return t;
}

// Number of values an attribute or dataset space holds (scalar: 1, null: 0); -1 if malformed.
double space_points(hid_t space) {
    const H5S_class_t cls = H5Sget_simple_extent_type(space);
    if (cls == H5S_SCALAR) return 1;
    if (cls == H5S_NULL) return 0;
    const int rank = H5Sget_simple_extent_ndims(space);
    if (cls != H5S_SIMPLE || rank < 0) return -1;
    std::vector<hsize_t> dims(rank);
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    double n = 1;
    for (hsize_t d : dims) n *= static_cast<double>(d);
    return n;
}

std::string count_text(double n) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.0f", n);
    return buf;
}

bool is_external(H5L_type_t t) { return t == H5L_TYPE_EXTERNAL || t >= H5L_TYPE_UD_MIN; }

}  // namespace

H5Reader::H5Reader(const std::string& path) : path_(path) {
    silence_hdf5();
    // Opened first without blocking: missing or unreadable -> 66, a FIFO, device or directory ->
    // 65, before HDF5 opens the path (its blocking open() waited forever on a FIFO).
    { const detail::ByteFile check(path); }
    htri_t is = H5Fis_hdf5(path.c_str());
    if (is <= 0) throw Error(ExitCode::DataError, "'" + path + "' is not an HDF5 file");
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) throw Error(ExitCode::DataError, "'" + path + "' is a malformed HDF5 file");
    file_ = H5Id(f, H5Fclose);
    H5O_info_t info;
    if (H5Oget_info2(f, &info, H5O_INFO_BASIC) < 0)
        throw Error(ExitCode::DataError, "'" + path + "' is a malformed HDF5 file");
    fileno_ = info.fileno;
}

// Refuses every link on the way to `path` that leads to another file (external or user-defined
// links). Missing links are left to the caller.
void H5Reader::check_links(const std::string& path) const {
    size_t pos = 0;
    while (pos != std::string::npos) {
        pos = path.find('/', pos + 1);
        const std::string prefix = path.substr(0, pos);
        if (prefix.empty() || prefix == "/") continue;
        if (H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) return;
        H5L_info_t li;
        if (H5Lget_info(file_.get(), prefix.c_str(), &li, H5P_DEFAULT) < 0) return;
        if (is_external(li.type))
            throw Error(
                ExitCode::DataError,
                path_ + ": '" + prefix + "' is an external link (to another file): refused");
    }
}

// Refuses an object that lives in another file (reached through a link chain).
void H5Reader::check_local(hid_t obj, const std::string& what) const {
    H5O_info_t info;
    if (H5Oget_info2(obj, &info, H5O_INFO_BASIC) < 0 || info.fileno != fileno_)
        throw Error(ExitCode::DataError,
                    path_ + ": " + what + " lies in another file (external link): refused");
}

bool H5Reader::exists(const std::string& path) const {
    if (path == "/" || path.empty()) return true;
    check_links(path);
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
    check_links(path);
    H5O_info_t info;
    if (H5Oget_info_by_name2(file_.get(), path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
        return false;
    if (info.fileno != fileno_)
        throw Error(ExitCode::DataError,
                    path_ + ": '" + path + "' lies in another file (external link): refused");
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
// Link names of an open group: creation order where the file tracks it, else by name.
std::vector<std::string> link_names(hid_t g) {
    std::vector<std::string> out;
    if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, nullptr, collect_name, &out) < 0) {
        out.clear();
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &out);
    }
    return out;
}
}  // namespace

std::vector<std::string> H5Reader::children(const std::string& group) const {
    check_links(group);
    H5Id g(H5Gopen2(file_.get(), group.c_str(), H5P_DEFAULT), H5Gclose);
    if (!g.valid()) throw Error(ExitCode::DataError, path_ + ": no group '" + group + "'");
    check_local(g.get(), "group '" + group + "'");
    return link_names(g.get());
}

std::vector<std::string> H5Reader::attr_names(const std::string& obj) const {
    std::vector<std::string> out;
    check_links(obj);
    H5Id o(H5Oopen(file_.get(), obj.c_str(), H5P_DEFAULT), H5Oclose);
    if (!o.valid()) throw Error(ExitCode::DataError, path_ + ": no object '" + obj + "'");
    check_local(o.get(), "'" + obj + "'");
    H5Aiterate2(o.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attr, &out);
    return out;
}

bool H5Reader::has_attr(const std::string& obj, const std::string& name) const {
    check_links(obj);
    return H5Aexists_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

// The attribute `name` of `obj`, checked to hold exactly one value (any type) before any read.
H5Id H5Reader::open_attr(const std::string& obj, const std::string& name) const {
    check_links(obj);
    H5Id o(H5Oopen(file_.get(), obj.c_str(), H5P_DEFAULT), H5Oclose);
    H5Id a(o.valid() ? H5Aopen(o.get(), name.c_str(), H5P_DEFAULT) : -1, H5Aclose);
    if (!a.valid())
        throw Error(ExitCode::DataError,
                    path_ + ": missing attribute '" + name + "' on '" + obj + "'");
    check_local(o.get(), "'" + obj + "'");
    H5Id sp(H5Aget_space(a.get()), H5Sclose);
    const double n = sp.valid() ? space_points(sp.get()) : -1;
    if (n != 1)
        throw Error(ExitCode::DataError,
                    path_ + ": attribute '" + name + "' on '" + obj + "' holds " +
                        (n < 0 ? std::string("a malformed dataspace") : count_text(n) + " values") +
                        ", expected one value");
    return a;
}

std::string H5Reader::attr_string(const std::string& obj, const std::string& name) const {
    H5Id a = open_attr(obj, name);
    H5Id ftype(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(ftype.get()) != H5T_STRING)
        throw Error(ExitCode::DataError, path_ + ": attribute '" + name + "' on '" + obj + "' is " +
                                             type_name(ftype.get()) + ", not a string");
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
    if (n == 0 || n > (1u << 20))
        throw Error(ExitCode::DataError, path_ + ": attribute '" + name + "' on '" + obj +
                                             "' is a string of " + std::to_string(n) +
                                             " bytes (at most 1 MiB is read)");
    std::string s(n, '\0');
    H5Id mtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mtype.get(), n);
    if (H5Aread(a.get(), mtype.get(), s.data()) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read attribute '" + name + "'");
    return s.substr(0, s.find('\0'));
}

long H5Reader::count_value(double v, const std::string& what) const {
    if (!(v >= 0) || v > 9007199254740992.0 || v != std::floor(v))
        throw Error(ExitCode::DataError, path_ + ": " + what + " holds " + format_number(v, 6) +
                                             ", expected a count (an integer from 0 to 2^53)");
    return static_cast<long>(v);
}

long H5Reader::attr_count(const std::string& obj, const std::string& name) const {
    return count_value(attr_double(obj, name), "attribute '" + name + "' on '" + obj + "'");
}

double H5Reader::attr_double(const std::string& obj, const std::string& name) const {
    H5Id a = open_attr(obj, name);
    H5Id ftype(H5Aget_type(a.get()), H5Tclose);
    auto cls = H5Tget_class(ftype.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
        throw Error(ExitCode::DataError, path_ + ": attribute '" + name + "' on '" + obj + "' is " +
                                             type_name(ftype.get()) + ", not a number");
    double x = 0;
    if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &x) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read attribute '" + name + "'");
    return x;
}

std::string H5Reader::attr_as_text(const std::string& obj, const std::string& name) const {
    H5Id a(H5Aopen_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
    if (!a.valid()) return "?";
    H5Id sp(H5Aget_space(a.get()), H5Sclose);
    if (!sp.valid() || space_points(sp.get()) != 1) return "[array]";
    H5Id ftype(H5Aget_type(a.get()), H5Tclose);
    auto cls = H5Tget_class(ftype.get());
    if (cls == H5T_STRING) return attr_string(obj, name);
    if (cls == H5T_FLOAT || cls == H5T_INTEGER) {
        char buf[40];
        double x = attr_double(obj, name);
        std::snprintf(buf, sizeof buf, cls == H5T_INTEGER ? "%.0f" : "%.6g", x);
        return buf;
    }
    return "[unsupported type]";
}

// `dataset`, opened after checking that it is a dataset of this file whose data lie in this file.
H5Id H5Reader::open_dataset(const std::string& dataset) const {
    if (!exists(dataset))
        throw Error(ExitCode::DataError, path_ + ": no dataset '" + dataset + "'");
    H5Id d(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid())
        throw Error(ExitCode::DataError, path_ + ": '" + dataset + "' is not a dataset");
    check_local(d.get(), "dataset '" + dataset + "'");
    H5Id dcpl(H5Dget_create_plist(d.get()), H5Pclose);
    if (!dcpl.valid())
        throw Error(ExitCode::DataError, path_ + ": malformed dataset '" + dataset + "'");
    if (H5Pget_external_count(dcpl.get()) != 0)
        throw Error(ExitCode::DataError,
                    path_ + ": dataset '" + dataset +
                        "' keeps its data in external files (HDF5 external storage): refused");
    if (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL)
        throw Error(ExitCode::DataError,
                    path_ + ": dataset '" + dataset +
                        "' is a virtual dataset (its data lie in other files): refused");
    return d;
}

std::vector<hsize_t> H5Reader::shape(const std::string& dataset) const {
    H5Id d = open_dataset(dataset);
    H5Id sp(H5Dget_space(d.get()), H5Sclose);
    int rank = sp.valid() ? H5Sget_simple_extent_ndims(sp.get()) : -1;
    if (rank < 0) throw Error(ExitCode::DataError, path_ + ": malformed dataset '" + dataset + "'");
    std::vector<hsize_t> dims(rank);
    H5Sget_simple_extent_dims(sp.get(), dims.data(), nullptr);
    return dims;
}

std::string H5Reader::dtype(const std::string& dataset) const {
    H5Id d = open_dataset(dataset);
    H5Id t(H5Dget_type(d.get()), H5Tclose);
    return t.valid() ? type_name(t.get()) : "other";
}

double H5Reader::declared_bytes(const std::string& dataset) const {
    double n = 8;
    for (hsize_t k : shape(dataset)) n *= static_cast<double>(k);
    return n;
}

void H5Reader::check_fits(double bytes, const std::string& what) const {
    check_allocation(bytes, memory_limit_bytes(), path_ + ": " + what, "max_bytes");
}

// Refuses a dataset whose declared size the file cannot hold: `raw` bytes declared (elements x
// stored element size) against the bytes HDF5 allocated for it. Unwritten storage reads as the
// fill value, so a file of a few KB could declare 10^9 values and have them all allocated; the
// deflate filter attnspec writes compresses at most ~1000:1, so a ratio above 4096 is not data.
void H5Reader::check_stored(hid_t d, double raw, const std::string& dataset,
                            const std::string& dims) const {
    const double stored = static_cast<double>(H5Dget_storage_size(d));
    if (raw > double(1 << 20) && raw > 4096.0 * stored)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' declares " + dims +
                                             " values (" + human_bytes(raw) +
                                             ") but the file stores " + human_bytes(stored) +
                                             " of it: a truncated or tampered file, not read");
}

// The one reader of numeric datasets: shape, type, stored size and the memory budget are
// checked before anything is allocated; the data are read once, straight into `out` (row-major:
// `cols` values per row).
void H5Reader::read_doubles(const std::string& dataset, bool float_only, std::vector<hsize_t>& dims,
                            const std::function<double*(std::size_t rows, std::size_t cols)>& out,
                            double copies) const {
    dims = shape(dataset);
    if (dims.empty() || dims.size() > 2)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' has rank " +
                                             std::to_string(dims.size()) + ", expected 1 or 2");
    H5Id d = open_dataset(dataset);
    H5Id ftype(H5Dget_type(d.get()), H5Tclose);
    auto cls = H5Tget_class(ftype.get());
    const size_t size = H5Tget_size(ftype.get());
    if (float_only && !(cls == H5T_FLOAT && (size == 4 || size == 8)))
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' is " +
                                             type_name(ftype.get()) +
                                             ", expected float32 or float64");
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' is not numeric");
    const double elems = static_cast<double>(dims[0]) * (dims.size() == 2 ? dims[1] : 1);
    if (elems == 0)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' is empty");
    check_fits(copies * 8.0 * elems, "reading '" + dataset + "' (" + dims_text(dims) + ")");
    check_stored(d.get(), elems * static_cast<double>(size), dataset, dims_text(dims));
    const auto rows = static_cast<std::size_t>(dims[0]);
    const auto cols = dims.size() == 2 ? static_cast<std::size_t>(dims[1]) : std::size_t(1);
    if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out(rows, cols)) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read dataset '" + dataset + "'");
}

Eigen::MatrixXd H5Reader::read_numeric(const std::string& dataset, bool allow_nonfinite,
                                       bool float_only) const {
    // A column (rank 1 or one column) is read straight into the result; a matrix goes through
    // a row-major buffer (HDF5's order) and is copied once: two copies at the peak.
    const std::vector<hsize_t> declared = shape(dataset);
    const bool column = declared.size() == 1 || (declared.size() == 2 && declared[1] == 1);
    Eigen::MatrixXd out;
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm;
    std::vector<hsize_t> dims;
    read_doubles(
        dataset, float_only, dims,
        [&](std::size_t rows, std::size_t cols) {
            if (column) {
                out.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
                return out.data();
            }
            rm.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
            return rm.data();
        },
        column ? 1.0 : 2.0);
    if (!column) {
        out = rm;
        rm.resize(0, 0);
    }
    if (!allow_nonfinite && !out.allFinite())
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' contains NaN or Inf");
    return out;
}

Eigen::MatrixXd H5Reader::matrix(const std::string& dataset, bool allow_nonfinite) const {
    return read_numeric(dataset, allow_nonfinite, false);
}

Eigen::MatrixXd H5Reader::input_matrix(const std::string& dataset) const {
    return read_numeric(dataset, false, true);
}

std::vector<double> H5Reader::vector(const std::string& dataset) const {
    std::vector<double> out;
    std::vector<hsize_t> dims;
    read_doubles(
        dataset, false, dims,
        [&](std::size_t rows, std::size_t cols) {
            out.resize(rows * cols);
            return out.data();
        },
        1.0);
    return out;
}

std::vector<double> H5Reader::array(const std::string& dataset, std::vector<hsize_t>& dims,
                                    bool allow_nonfinite) const {
    dims = shape(dataset);
    if (dims.empty() || dims.size() > 8)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' has rank " +
                                             std::to_string(dims.size()) + ", expected 1 to 8");
    H5Id d = open_dataset(dataset);
    H5Id ftype(H5Dget_type(d.get()), H5Tclose);
    const auto cls = H5Tget_class(ftype.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' is not numeric");
    double elems = 1;
    for (hsize_t e : dims) elems *= static_cast<double>(e);
    if (elems == 0)
        throw Error(ExitCode::DataError, path_ + ": dataset '" + dataset + "' is empty");
    check_fits(8.0 * elems, "reading '" + dataset + "' (" + dims_text(dims) + ")");
    check_stored(d.get(), elems * static_cast<double>(H5Tget_size(ftype.get())), dataset,
                 dims_text(dims));
    std::vector<double> out(static_cast<std::size_t>(elems));
    if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read dataset '" + dataset + "'");
    for (double x : out)
        if (!allow_nonfinite && !std::isfinite(x))
            throw Error(ExitCode::DataError,
                        path_ + ": dataset '" + dataset + "' contains NaN or Inf");
    return out;
}

std::vector<std::string> H5Reader::strings(const std::string& dataset) const {
    auto dims = shape(dataset);
    if (dims.size() != 1)
        throw Error(ExitCode::DataError, path_ + ": '" + dataset + "' is not a 1-D string dataset");
    H5Id d = open_dataset(dataset);
    H5Id ftype(H5Dget_type(d.get()), H5Tclose);
    if (H5Tget_class(ftype.get()) != H5T_STRING || H5Tis_variable_str(ftype.get()) <= 0)
        throw Error(ExitCode::DataError,
                    path_ + ": '" + dataset + "' is not a variable-length string dataset");
    check_fits(64.0 * static_cast<double>(dims[0]),
               "reading '" + dataset + "' (" + dims_text(dims) + " strings)");
    check_stored(d.get(), 16.0 * static_cast<double>(dims[0]), dataset, dims_text(dims));
    std::vector<char*> ptrs(dims[0], nullptr);
    H5Id mtype = utf8_vlen_type();
    if (dims[0] > 0 &&
        H5Dread(d.get(), mtype.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
        throw Error(ExitCode::DataError, path_ + ": cannot read '" + dataset + "'");
    std::vector<std::string> out;
    for (char* p : ptrs) {
        out.emplace_back(p ? p : "");
        H5free_memory(p);
    }
    return out;
}

namespace {
// Depth-first listing below the open group `g` (tree()); `seen` maps object addresses to the path
// where they were listed first.
void walk(hid_t g, const std::string& at, int depth, int max_depth, unsigned long fileno,
          std::map<haddr_t, std::string>& seen, std::vector<H5TreeEntry>& out) {
    for (const std::string& name : link_names(g)) {
        H5TreeEntry e;
        e.depth = depth;
        e.name = name;
        const std::string path = at + "/" + name;
        H5L_info_t li;
        H5O_info_t oi;
        if (H5Lget_info(g, name.c_str(), &li, H5P_DEFAULT) >= 0 && is_external(li.type)) {
            e.kind = H5TreeEntry::External;
        } else if (H5Oget_info_by_name2(g, name.c_str(), &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
                   oi.fileno != fileno) {
            e.kind = H5TreeEntry::Other;  // dangling soft link or another file
        } else if (auto it = seen.find(oi.addr); it != seen.end()) {
            e.kind = H5TreeEntry::Repeat;
            e.first_path = it->second;
        } else {
            seen.emplace(oi.addr, path);
            if (oi.type == H5O_TYPE_GROUP) {
                e.kind = H5TreeEntry::Group;
            } else if (oi.type == H5O_TYPE_DATASET) {
                e.kind = H5TreeEntry::Dataset;
                H5Id d(H5Dopen2(g, name.c_str(), H5P_DEFAULT), H5Dclose);
                H5Id sp(d.valid() ? H5Dget_space(d.get()) : -1, H5Sclose);
                const int rank = sp.valid() ? H5Sget_simple_extent_ndims(sp.get()) : -1;
                if (rank >= 0) {
                    e.dims.resize(rank);
                    H5Sget_simple_extent_dims(sp.get(), e.dims.data(), nullptr);
                }
            }
        }
        out.push_back(e);
        if (e.kind != H5TreeEntry::Group) continue;
        if (depth >= max_depth) {
            H5TreeEntry cut;
            cut.depth = depth + 1;
            cut.kind = H5TreeEntry::TooDeep;
            out.push_back(cut);
            continue;
        }
        H5Id child(H5Gopen2(g, name.c_str(), H5P_DEFAULT), H5Gclose);
        if (child.valid()) walk(child.get(), path, depth + 1, max_depth, fileno, seen, out);
    }
}
}  // namespace

std::vector<H5TreeEntry> H5Reader::tree(int max_depth) const {
    std::vector<H5TreeEntry> out;
    std::map<haddr_t, std::string> seen;
    H5O_info_t root;
    if (H5Oget_info2(file_.get(), &root, H5O_INFO_BASIC) >= 0) seen.emplace(root.addr, "/");
    walk(file_.get(), "", 1, max_depth, fileno_, seen, out);
    return out;
}

}  // namespace attnspec
