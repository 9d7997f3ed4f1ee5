// Hostile HDF5 inputs (issue 14, reading side), built with the HDF5 C API: attributes that hold
// more than one value, data stored outside the file (external raw storage, virtual datasets,
// external links), declared sizes above the memory budget (refused before anything is read), and
// stored types (float32 accepted and recorded, integers refused). Every case must end in one
// DataError naming the file and the object.
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/io/attention_input.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/io/matrix_input.hpp"
#include "attnspec/io/qk_input.hpp"
#include "attnspec/report/check_records.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// An open file being built; closed (flushed) by close() or the destructor.
struct File {
    hid_t id;
    explicit File(const std::string& path)
        : id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {
        REQUIRE(id >= 0);
    }
    ~File() { close(); }
    void close() {
        if (id >= 0) H5Fclose(id);
        id = -1;
    }
};

// A dataset of `type` and shape `dims` under `loc`, written with `data` (double values converted
// by HDF5) unless data is null (then only declared: no storage is allocated). `dcpl` optional.
void dataset(hid_t loc, const char* name, hid_t type, std::vector<hsize_t> dims,
             const std::vector<double>* data = nullptr, hid_t dcpl = H5P_DEFAULT) {
    const hid_t sp = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    REQUIRE(d >= 0);
    if (data)
        REQUIRE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data->data()) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
}

std::vector<double> values(size_t n, double start = 0.5) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = start + 0.01 * static_cast<double>(i);
    return v;
}

// A float64 attribute holding `v.size()` values (one value: a 1-element simple space).
void attr_array(hid_t loc, const char* name, const std::vector<double>& v) {
    const hsize_t n = v.size();
    const hid_t sp = H5Screate_simple(1, &n, nullptr);
    const hid_t a = H5Acreate2(loc, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(a >= 0);
    REQUIRE(H5Awrite(a, H5T_NATIVE_DOUBLE, v.data()) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
}

// A root-form attention input: X (N x D), W_Q, W_K, W_V (D x d) of `type`.
void attention_input(hid_t f, hid_t type = H5T_IEEE_F64LE, hsize_t N = 3, hsize_t D = 2,
                     hsize_t d = 2) {
    const auto x = values(N * D), w = values(D * d, 0.1);
    dataset(f, "X", type, {N, D}, &x);
    for (const char* n : {"W_Q", "W_K", "W_V"}) dataset(f, n, type, {D, d}, &w);
}

}  // namespace

TEST_CASE("h5 hostile: an array-valued attribute is refused before reading", "[io][hostile]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string path = dir + "/s_array.h5";
    {
        File f(path);
        attention_input(f.id);
        attr_array(f.id, "s", values(64));  // 64 doubles where one is read
        attr_array(f.id, "gamma", values(3));
        attr_array(f.id, "one", {2.5});  // a 1-element array is one value
        const hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        const hsize_t n = 4;
        const hid_t sp = H5Screate_simple(1, &n, nullptr);
        const hid_t a = H5Acreate2(f.id, "label", t, sp, H5P_DEFAULT, H5P_DEFAULT);
        const char* strs[4] = {"a", "b", "c", "d"};
        REQUIRE(H5Awrite(a, t, strs) >= 0);
        H5Aclose(a), H5Sclose(sp), H5Tclose(t);
    }
    const Error e = error_of([&] { load_attention_heads(path); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e, path));
    CHECK(has(e, "attribute 's'"));
    CHECK(has(e, "holds 64 values, expected one value"));

    const H5Reader r(path);
    CHECK(r.attr_double("/", "one") == 2.5);
    CHECK(has(error_of([&] { r.attr_double("/", "gamma"); }), "attribute 'gamma' on '/' holds 3"));
    CHECK(has(error_of([&] { r.attr_string("/", "label"); }), "attribute 'label' on '/' holds 4"));
    CHECK(r.attr_as_text("/", "label") == "[array]");
    CHECK(r.attr_as_text("/", "s") == "[array]");
}

TEST_CASE("h5 hostile: gamma and instance values must hold one value", "[io][hostile]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string path = dir + "/qk.h5";
    {
        File f(path);
        const auto q = values(12);
        dataset(f.id, "Q", H5T_IEEE_F64LE, {4, 3}, &q);
        dataset(f.id, "K", H5T_IEEE_F64LE, {4, 3}, &q);
        attr_array(f.id, "gamma", values(16));
        const hid_t g = H5Gcreate2(f.id, "values", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        attr_array(g, "lambda", values(32));
        H5Gclose(g);
    }
    const Error e = error_of([&] { load_qk_input(path); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e, "attribute 'gamma' on '/' holds 16 values"));
    const H5Reader r(path);
    const Error v = error_of([&] { stored_value(r, "/", "lambda"); });
    CHECK(v.code() == ExitCode::DataError);
    CHECK(has(v, "attribute 'lambda' on '/values' holds 32 values"));
}

TEST_CASE("h5 hostile: external raw storage and virtual datasets are refused", "[io][hostile]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string secret = dir + "/secret.bin";
    {
        std::FILE* s = std::fopen(secret.c_str(), "wb");
        REQUIRE(s);
        const auto bytes = values(6);  // 6 valid doubles: the read itself would succeed
        std::fwrite(bytes.data(), sizeof(double), bytes.size(), s);
        std::fclose(s);
    }
    const std::string ext = dir + "/external.h5", vds = dir + "/virtual.h5";
    {
        File f(ext);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        REQUIRE(H5Pset_external(dcpl, secret.c_str(), 0, 6 * sizeof(double)) >= 0);
        dataset(f.id, "X", H5T_IEEE_F64LE, {3, 2}, nullptr, dcpl);
        H5Pclose(dcpl);
        const auto w = values(4, 0.1);
        for (const char* n : {"W_Q", "W_K", "W_V"}) dataset(f.id, n, H5T_IEEE_F64LE, {2, 2}, &w);
    }
    const Error e = error_of([&] { load_attention_heads(ext); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e, "dataset '/X' keeps its data in external files"));
    CHECK(has(error_of([&] { load_matrix_input(ext, "X"); }), "external files"));
    {
        File f(vds);
        attention_input(f.id);
        const hsize_t dims[2] = {3, 2};
        const hid_t src = H5Screate_simple(2, dims, nullptr);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        REQUIRE(H5Pset_virtual(dcpl, src, ext.c_str(), "/W_Q", src) >= 0);
        dataset(f.id, "M", H5T_IEEE_F64LE, {3, 2}, nullptr, dcpl);
        H5Pclose(dcpl), H5Sclose(src);
    }
    const Error v = error_of([&] { load_matrix_input(vds, "M"); });
    CHECK(v.code() == ExitCode::DataError);
    CHECK(has(v, "dataset 'M' is a virtual dataset"));
}

TEST_CASE("h5 hostile: external links are refused, not followed", "[io][hostile]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string other = dir + "/other.h5", link = dir + "/link.h5";
    {
        File f(other);
        attention_input(f.id);
        H5Gclose(H5Gcreate2(f.id, "heads", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    }
    {
        File f(link);
        attention_input(f.id);
        REQUIRE(H5Ldelete(f.id, "X", H5P_DEFAULT) >= 0);
        REQUIRE(H5Lcreate_external(other.c_str(), "/X", f.id, "X", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    }
    const Error e = error_of([&] { load_attention_heads(link); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e, link));
    CHECK(has(e, "'/X' is an external link"));
    // a soft link inside the file that leads through an external link to a group
    const std::string soft = dir + "/soft.h5";
    {
        File f(soft);
        attention_input(f.id);
        REQUIRE(H5Lcreate_external(other.c_str(), "/", f.id, "ext", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        REQUIRE(H5Lcreate_soft("/ext/heads", f.id, "heads", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    }
    const H5Reader r(soft);
    CHECK(has(error_of([&] { r.children("/heads"); }), "lies in another file"));
    CHECK(has(error_of([&] { r.matrix("/ext/X"); }), "'/ext' is an external link"));
}

TEST_CASE("h5 hostile: declared sizes are refused before any read or allocation", "[io][hostile]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string path = dir + "/big.h5";
    {
        File f(path);
        // declared only (no storage): 2e5 x 64 doubles = 97.7 MiB; W_Q has NaN, which a read
        // would refuse: the size must be refused first
        const auto w = values(64 * 4, 0.1);
        std::vector<double> bad = w;
        bad[0] = std::nan("");
        dataset(f.id, "X", H5T_IEEE_F64LE, {200000, 64});
        dataset(f.id, "W_Q", H5T_IEEE_F64LE, {64, 4}, &bad);
        dataset(f.id, "W_K", H5T_IEEE_F64LE, {64, 4}, &w);
        dataset(f.id, "W_V", H5T_IEEE_F64LE, {64, 4}, &w);
        dataset(f.id, "Q", H5T_IEEE_F64LE, {200000, 64});
        dataset(f.id, "K", H5T_IEEE_F64LE, {4, 64}, &w);
        dataset(f.id, "X_issue", H5T_IEEE_F64LE, {1000000000, 4});  // the (1e9, 4)
        dataset(f.id, "huge", H5T_IEEE_F64LE, {1000000000ull, 1000000000ull});
    }
    {
        MemoryBudget budget(1 << 20);  // --max-memory 1MiB
        const Error e = error_of([&] { load_attention_heads(path); });
        CHECK(e.code() == ExitCode::DataError);
        CHECK(e.parameter() == "max_bytes");
        CHECK(has(e, path));
        CHECK(has(e, "would need 195.3 MiB"));  // the estimate: X as read plus the head's copy
        CHECK(has(e, "1.0 MiB"));
        const Error q = error_of([&] { load_qk_input(path); });
        CHECK(q.code() == ExitCode::DataError);
        CHECK(has(q, "would need 97."));
        const H5Reader r(path);
        const Error m = error_of([&] { r.matrix("X"); });
        // a matrix is read into HDF5's row order and copied once: two copies at the peak
        CHECK(has(m, "reading 'X' (200000 x 64) would need 195.3 MiB"));
        CHECK(has(error_of([&] { load_matrix_input(path, "X"); }), "would need 390.6 MiB"));
    }
    {
        MemoryBudget budget(8.0 * (1ull << 30));
        const H5Reader r(path);
        const Error x = error_of([&] { r.matrix("X_issue"); });
        CHECK(x.code() == ExitCode::DataError);
        CHECK(has(x, "reading 'X_issue' (1000000000 x 4) would need 59.6 GiB"));
    }
    // 1e18 elements (8e18 bytes): the estimate does not overflow, refused at the default budget
    const H5Reader r(path);
    const Error h = error_of([&] { r.matrix("huge"); });
    CHECK(h.code() == ExitCode::DataError);
    CHECK(has(h, "reading 'huge' (1000000000 x 1000000000) would need"));
}

TEST_CASE("h5 hostile: float32 inputs are read and recorded, integers refused", "[io][hostile]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string f32 = dir + "/f32.h5", i32 = dir + "/i32.h5", f16 = dir + "/f16.h5";
    {
        File f(f32);
        attention_input(f.id, H5T_IEEE_F32LE);
    }
    const AttentionHeads in = load_attention_heads(f32);
    CHECK(in.dtype == "float32");
    CHECK(in.heads.at(0).X(1, 0) == static_cast<double>(static_cast<float>(0.52)));
    {
        File f(i32);
        attention_input(f.id, H5T_STD_I32LE);
    }
    const Error e = error_of([&] { load_attention_heads(i32); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e, i32));
    CHECK(has(e, "dataset '/X' is int32, expected float32 or float64"));
    CHECK(has(error_of([&] { load_matrix_input(i32, "W_Q"); }), "'W_Q' is int32"));
    {
        File f(f16);
        const auto q = values(12);
        const hid_t half = H5Tcopy(H5T_IEEE_F32LE);
        REQUIRE(H5Tset_fields(half, 15, 10, 5, 0, 10) >= 0);
        REQUIRE(H5Tset_size(half, 2) >= 0);
        REQUIRE(H5Tset_ebias(half, 15) >= 0);
        dataset(f.id, "Q", half, {4, 3}, &q);
        dataset(f.id, "K", H5T_STD_U8LE, {4, 3}, &q);
        H5Tclose(half);
    }
    const Error q = error_of([&] { load_qk_input(f16); });
    CHECK(q.code() == ExitCode::DataError);
    CHECK(has(q, "dataset 'Q' is float16, expected float32 or float64"));
    // reports keep integer datasets (regime counts): matrix() still reads them
    const H5Reader r(f16);
    CHECK(r.matrix("K").rows() == 4);
    CHECK(r.dtype("K") == "uint8");
}
