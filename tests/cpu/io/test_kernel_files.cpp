// check-kernel's files (io/kernel_files.hpp, io/tensor_files.hpp: write_npz): an .npz written by
// write_npz reads back bit for bit (float64) or as float32 values; float16 members ('<f2') are
// read exactly; NaN is kept in an output and refused in an input; .h5 datasets of rank <= 2 are
// read at rank 2 and 3 (row-major, as h5py shows them).
#include <cmath>
#include <cstring>

#include "attnspec/io/h5.hpp"
#include "attnspec/io/kernel_files.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

TEST_CASE("write_npz round trip: float64 bit for bit, float32 rounded once", "[io]") {
    TempDir dir;
    const std::vector<double> a = {0.1, -2.5, 1e-300, 3.0, std::ldexp(1.0, -30), 7.0};
    const std::vector<double> special = {1.0, std::nan(""), HUGE_VAL};
    write_npz(dir / "x.npz",
              {{"a", {2, 3}, &a, false}, {"b", {6}, &a, true}, {"o", {3}, &special, false}});
    const KernelArrayFile f(dir / "x.npz");
    CHECK(f.has("a"));
    CHECK_FALSE(f.has("c"));
    const kernels::Array A = f.read("a", false);
    CHECK(A.shape == std::vector<std::int64_t>{2, 3});
    CHECK(A.values == a);
    const kernels::Array B = f.read("b", false);
    for (size_t i = 0; i < a.size(); ++i)
        CHECK(B.values[i] == static_cast<double>(static_cast<float>(a[i])));
    const kernels::Array O = f.read("o", true);
    CHECK(std::isnan(O.values[1]));
    CHECK(O.values[2] == HUGE_VAL);
    CHECK(has(error_of([&] { f.read("o", false); }), "NaN or Inf"));
    CHECK(error_of([&] { f.read("c", false); }).code() == ExitCode::DataError);
}

TEST_CASE("npz float16 members are read exactly", "[io]") {
    // 0x3C00 = 1, 0x0001 = 2^-24 (smallest subnormal), 0x7BFF = 65504, 0xC000 = -2
    const std::string data = std::string("\x00\x3C\x01\x00\xFF\x7B\x00\xC0", 8);
    std::string dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }";
    while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
    const std::string npy = std::string("\x93NUMPY\x01\x00", 8) +
                            static_cast<char>(dict.size() & 0xFF) +
                            static_cast<char>(dict.size() >> 8) + dict + data;
    const Tensor t = parse_npy(npy, "h.npy");
    CHECK(t.values == std::vector<double>{1.0, std::ldexp(1.0, -24), 65504.0, -2.0});
}

TEST_CASE("kernel files in HDF5: rank 2 and rank 3 read row-major", "[io]") {
    TempDir dir;
    const std::string path = dir / "x.h5";
    {
        H5Group root(
            H5Id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose));
        Eigen::MatrixXd M(2, 3);
        M << 1, 2, 3, 4, 5, 6;
        root.write("q", M, false);
        const double k[] = {1, 2, 3, 4, 5, 6};
        const hsize_t d3[] = {1, 2, 3};
        const H5Id space(H5Screate_simple(3, d3, nullptr), H5Sclose);
        const H5Id set(H5Dcreate2(root.id(), "k", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                                  H5P_DEFAULT, H5P_DEFAULT),
                       H5Dclose);
        REQUIRE(H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, k) >= 0);
    }
    const KernelArrayFile f(path);
    const kernels::Array q = f.read("q", false);
    CHECK(q.shape == std::vector<std::int64_t>{2, 3});
    CHECK(q.values == std::vector<double>{1, 2, 3, 4, 5, 6});
    const kernels::Array k = f.read("k", false);
    CHECK(k.shape == std::vector<std::int64_t>{1, 2, 3});
    CHECK(k.values == std::vector<double>{1, 2, 3, 4, 5, 6});
    CHECK(has(error_of([&] { f.read("x", false); }), "has no array 'x'"));
}
