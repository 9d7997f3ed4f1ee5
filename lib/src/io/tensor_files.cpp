// Tensor, the container dispatch, float decoding and the .npy format (NEP 1: magic, version,
// header length, a Python dict literal {'descr', 'fortran_order', 'shape'}, raw data).
#include "attnspec/io/tensor_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "attnspec/base/errors.hpp"
#include "tensor_files_internal.hpp"

namespace attnspec {
namespace detail {

namespace {
const char* kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    return "a special file";
}
}  // namespace

ByteFile::ByteFile(const std::string& path) : path_(path) {
    // O_NONBLOCK: a FIFO without a writer would block open() forever; the type is checked on the
    // descriptor before anything is read (no window between a stat and the open).
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd_ < 0)
        throw Error(ExitCode::NoInput,
                    "cannot open '" + path + "': " + std::string(std::strerror(errno)));
    struct stat st {};
    const bool examined = ::fstat(fd_, &st) == 0;
    if (!examined || !S_ISREG(st.st_mode)) {
        const std::string why =
            examined ? std::string("is ") + kind_of(st.st_mode) + ", not a regular file"
                     : "cannot be examined: " + std::string(std::strerror(errno));
        ::close(fd_);
        fd_ = -1;
        fail_data("'" + path + "' " + why);
    }
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    size_ = static_cast<std::uint64_t>(st.st_size);
}

ByteFile::~ByteFile() {
    if (fd_ >= 0) ::close(fd_);
}

std::string ByteFile::read(std::uint64_t offset, std::uint64_t n) const {
    std::string out(n, '\0');
    std::uint64_t done = 0;
    while (done < n) {
        const ssize_t got = ::pread(fd_, &out[done], n - done, static_cast<off_t>(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            throw Error(ExitCode::IoError, "read error in '" + path_ + "' at byte " +
                                               std::to_string(offset + done) +
                                               (got < 0 ? ": " + std::string(std::strerror(errno))
                                                        : ": unexpected end of file"));
        done += static_cast<std::uint64_t>(got);
    }
    return out;
}

std::uint64_t le_uint(const char* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

int float_bytes(FloatKind k) {
    return k == FloatKind::f64 ? 8 : k == FloatKind::f32 ? 4 : k == FloatKind::u8 ? 1 : 2;
}

std::vector<double> decode_floats(const char* p, std::uint64_t count, FloatKind k,
                                  const std::string& what, bool keep_nonfinite) {
    const int w = float_bytes(k);
    std::vector<double> out(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t bits = le_uint(p + i * w, w);
        double x = 0;
        if (k == FloatKind::u8) {
            x = static_cast<double>(bits);
        } else if (k == FloatKind::f16) {
            x = half_to_double(static_cast<std::uint16_t>(bits));
        } else if (k == FloatKind::bf16) {
            x = bfloat16_to_double(static_cast<std::uint16_t>(bits));
        } else if (k == FloatKind::f32) {
            float f = 0;
            const auto b32 = static_cast<std::uint32_t>(bits);
            std::memcpy(&f, &b32, 4);
            x = f;
        } else {
            std::memcpy(&x, &bits, 8);
        }
        if (!keep_nonfinite && !std::isfinite(x))
            fail_data(what + " holds a non-finite value (" +
                      std::string(std::isnan(x) ? "NaN" : "inf") + ") at element " +
                      std::to_string(i));
        out[i] = x;
    }
    return out;
}

std::uint64_t element_count(const std::vector<std::int64_t>& shape, const std::string& what) {
    constexpr std::uint64_t kMax = std::uint64_t(1) << 53;
    std::uint64_t n = 1;
    for (std::int64_t e : shape) {
        if (e < 0) fail_data(what + " has a negative dimension");
        const auto u = static_cast<std::uint64_t>(e);
        if (u != 0 && n > kMax / u)
            fail_data(what + " declares a shape " + shape_text(shape) +
                      " with more than 2^53 elements");
        n *= u;
    }
    return n;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace detail

double half_to_double(std::uint16_t bits) {
    const int sign = bits >> 15, exp = (bits >> 10) & 0x1F, frac = bits & 0x3FF;
    double v = 0;
    if (exp == 0)
        v = std::ldexp(frac, -24);  // subnormal (or zero): frac * 2^-14 * 2^-10
    else if (exp == 31)
        v = frac ? std::nan("") : HUGE_VAL;
    else
        v = std::ldexp(frac + 1024, exp - 25);
    return sign ? -v : v;
}

double bfloat16_to_double(std::uint16_t bits) {
    const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
    float f = 0;
    std::memcpy(&f, &wide, 4);
    return f;
}

Eigen::MatrixXd Tensor::matrix(const std::string& what) const {
    if (shape.size() == 2) {
        Eigen::MatrixXd M(shape[0], shape[1]);
        for (Eigen::Index i = 0; i < M.rows(); ++i)
            for (Eigen::Index j = 0; j < M.cols(); ++j) M(i, j) = values[i * M.cols() + j];
        return M;
    }
    if (shape.size() == 1) return Eigen::Map<const Eigen::VectorXd>(values.data(), shape[0]);
    fail_data(what + " has shape " + detail::shape_text(shape) + ", expected a matrix or vector");
}

std::vector<std::int64_t> TensorFile::declared_shape(const std::string& name) const {
    for (const TensorEntry& e : entries())
        if (e.name == name) return e.shape;
    fail_data(path_ + ": no tensor '" + name + "'");
}

std::unique_ptr<TensorFile> open_tensor_file(const std::string& path) {
    const detail::ByteFile f(path);
    const std::string head = f.read(0, std::min<std::uint64_t>(4, f.size()));
    if (head == std::string("PK\x03\x04", 4) || head == std::string("PK\x05\x06", 4))
        return open_npz(path);
    if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npz") == 0)
        fail_data("'" + path +
                  "' is not a zip archive (an .npz file is one; its first bytes are "
                  "not 'PK')");
    return open_safetensors(path);
}

}  // namespace attnspec
