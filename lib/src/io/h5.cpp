// HDF5 RAII ids, group writer and reader (io/h5.hpp).
#include "attnspec/io/h5.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "h5_internal.hpp"

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
    ptrs.reserve(v.size());
    for (const auto& s : v) ptrs.push_back(s.c_str());
    if (!v.empty() && H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
        io_fail("cannot write dataset '" + name + "'");
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
        throw Error(ExitCode::DataError,
                    path_ + ": missing attribute '" + name + "' on '" + obj + "'");
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
        throw Error(ExitCode::DataError,
                    path_ + ": missing attribute '" + name + "' on '" + obj + "'");
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
    if (!exists(dataset))
        throw Error(ExitCode::DataError, path_ + ": no dataset '" + dataset + "'");
    H5Id d(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid())
        throw Error(ExitCode::DataError, path_ + ": '" + dataset + "' is not a dataset");
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
        throw Error(ExitCode::DataError,
                    path_ + ": '" + dataset + "' is not a variable-length string dataset");
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

}  // namespace attnspec
