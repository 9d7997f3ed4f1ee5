#include "h5_builder.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace attnspec::fuzz {

H5File H5File::create(const std::string& path) {
    return H5File(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
}
H5File H5File::open_rw(const std::string& path) {
    return H5File(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
}
H5File::~H5File() {
    if (id_ >= 0) H5Fclose(id_);
}

namespace {

// A link-creation property list that creates missing intermediate groups.
hid_t lcpl() {
    static const hid_t p = [] {
        const hid_t l = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(l, 1);
        return l;
    }();
    return p;
}

// The external raw-storage file every dataset with H5Pset_external points at (4 KiB of bytes
// that are not a valid matrix of anything in particular).
const std::string& external_file() {
    static const std::string path = [] {
        const std::string p = temp_path("external.bin");
        std::ofstream f(p, std::ios::binary);
        for (int i = 0; i < 4096; ++i) f.put(static_cast<char>((i * 37 + 11) & 0xff));
        return p;
    }();
    return path;
}

enum class Kind { F64, F32, I32, I64, U8, VlenStr, FixedStr, Compound, Count };

hid_t file_type(Kind k) {
    switch (k) {
        case Kind::F64:
            return H5Tcopy(H5T_IEEE_F64LE);
        case Kind::F32:
            return H5Tcopy(H5T_IEEE_F32LE);
        case Kind::I32:
            return H5Tcopy(H5T_STD_I32LE);
        case Kind::I64:
            return H5Tcopy(H5T_STD_I64LE);
        case Kind::U8:
            return H5Tcopy(H5T_STD_U8LE);
        case Kind::VlenStr: {
            const hid_t t = H5Tcopy(H5T_C_S1);
            H5Tset_size(t, H5T_VARIABLE);
            H5Tset_cset(t, H5T_CSET_UTF8);
            return t;
        }
        case Kind::FixedStr: {
            const hid_t t = H5Tcopy(H5T_C_S1);
            H5Tset_size(t, 8);
            return t;
        }
        case Kind::Compound:
        default: {
            const hid_t t = H5Tcreate(H5T_COMPOUND, 16);
            H5Tinsert(t, "re", 0, H5T_IEEE_F64LE);
            H5Tinsert(t, "im", 8, H5T_IEEE_F64LE);
            return t;
        }
    }
}

// A dataspace chosen by the input: scalar, null, or simple of rank 1..3 (dims 0..5, or huge).
hid_t random_space(Input& in, bool allow_huge, bool* huge, hsize_t* count) {
    *huge = false;
    *count = 0;
    const unsigned sel = in.byte() % 10;
    if (sel == 0) {
        *count = 1;
        return H5Screate(H5S_SCALAR);
    }
    if (sel == 1) return H5Screate(H5S_NULL);
    const int rank = 1 + static_cast<int>(in.pick(3));
    hsize_t dims[3];
    const bool want_huge = allow_huge && sel == 9;
    hsize_t n = 1;
    for (int i = 0; i < rank; ++i) {
        if (want_huge) {
            static const hsize_t big[] = {1,         4, 64, 1000000, 1000000000ull, 2147483649ull,
                                          1ull << 40};
            dims[i] = big[in.pick(sizeof big / sizeof big[0])];
        } else {
            dims[i] = in.pick(6);
        }
        n *= dims[i];
    }
    *huge = want_huge;
    *count = want_huge ? 0 : n;
    return H5Screate_simple(rank, dims, nullptr);
}

// Writes `count` elements of type `k` chosen by the input through `write` (H5Dwrite / H5Awrite).
template <class Write>
void write_values(Kind k, hsize_t count, Input& in, Write write) {
    if (count == 0) return;
    if (k == Kind::VlenStr) {
        std::vector<std::string> s(count);
        std::vector<const char*> p(count);
        for (hsize_t i = 0; i < count; ++i) {
            s[i] = in.text(12);
            p[i] = s[i].c_str();
        }
        const hid_t t = file_type(k);
        write(t, p.data());
        H5Tclose(t);
    } else if (k == Kind::FixedStr) {
        std::vector<char> b(count * 8, 0);
        for (auto& c : b) c = static_cast<char>(in.byte());
        const hid_t t = file_type(k);
        write(t, b.data());
        H5Tclose(t);
    } else if (k == Kind::Compound) {
        std::vector<double> v(count * 2);
        for (auto& x : v) x = in.number();
        const hid_t t = file_type(k);
        write(t, v.data());
        H5Tclose(t);
    } else {
        std::vector<double> v(count);
        for (auto& x : v) x = in.number();
        write(H5T_NATIVE_DOUBLE, v.data());
    }
}

struct Objects {
    std::vector<std::string> groups{"/"}, datasets, all{"/"}, names;
};

herr_t visit(hid_t root, const char* name, const H5L_info_t* info, void* data) {
    auto* o = static_cast<Objects*>(data);
    const std::string path = std::string("/") + name;
    o->all.push_back(path);
    const char* base = std::strrchr(name, '/');
    o->names.emplace_back(base ? base + 1 : name);
    if (info->type != H5L_TYPE_HARD) return 0;
    const hid_t obj = H5Oopen(root, name, H5P_DEFAULT);
    if (obj < 0) return 0;
    const H5I_type_t t = H5Iget_type(obj);
    if (t == H5I_GROUP) o->groups.push_back(path);
    if (t == H5I_DATASET) o->datasets.push_back(path);
    H5Oclose(obj);
    return 0;
}

herr_t attr_name(hid_t, const char* name, const H5A_info_t*, void* data) {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
}

Objects objects(hid_t file) {
    Objects o;
    H5Lvisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit, &o);
    return o;
}

std::vector<std::string> attr_names(hid_t file, const std::string& obj) {
    std::vector<std::string> names;
    const hid_t o = H5Oopen(file, obj.c_str(), H5P_DEFAULT);
    if (o < 0) return names;
    hsize_t idx = 0;
    H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, attr_name, &names);
    H5Oclose(o);
    return names;
}

std::string child(const std::string& parent, const std::string& name) {
    return (parent == "/" ? "" : parent) + "/" + name;
}

template <class T>
const T& pick_of(const std::vector<T>& v, Input& in) {
    return v[in.pick(v.size())];
}

}  // namespace

void make_group(hid_t file, const std::string& path) {
    if (H5Lexists(file, path.c_str(), H5P_DEFAULT) > 0) return;
    const hid_t g = H5Gcreate2(file, path.c_str(), lcpl(), H5P_DEFAULT, H5P_DEFAULT);
    if (g >= 0) H5Gclose(g);
}

void write_matrix(hid_t file, const std::string& path, hsize_t rows, hsize_t cols, Input& in) {
    const hsize_t dims[2] = {rows, cols};
    const hid_t sp = H5Screate_simple(2, dims, nullptr);
    const hid_t d =
        H5Dcreate2(file, path.c_str(), H5T_IEEE_F64LE, sp, lcpl(), H5P_DEFAULT, H5P_DEFAULT);
    if (d >= 0) {
        std::vector<double> v(rows * cols);
        // Mostly well-formed values: the base file should load, the mutations break it.
        for (auto& x : v) x = (static_cast<double>(in.byte()) - 128.0) / 32.0;
        if (!v.empty()) H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
        H5Dclose(d);
    }
    H5Sclose(sp);
}

void write_double_attr(hid_t file, const std::string& obj, const std::string& name, double v) {
    const hid_t sp = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate_by_name(file, obj.c_str(), name.c_str(), H5T_IEEE_F64LE, sp,
                                      H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
        H5Aclose(a);
    }
    H5Sclose(sp);
}

void write_string_attr(hid_t file, const std::string& obj, const std::string& name,
                       const std::string& v) {
    const hid_t t = file_type(Kind::VlenStr);
    const hid_t sp = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate_by_name(file, obj.c_str(), name.c_str(), t, sp, H5P_DEFAULT,
                                      H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        const char* p = v.c_str();
        H5Awrite(a, t, &p);
        H5Aclose(a);
    }
    H5Sclose(sp);
    H5Tclose(t);
}

void random_dataset(hid_t file, const std::string& path, Input& in) {
    const Kind k = static_cast<Kind>(in.pick(static_cast<std::size_t>(Kind::Count)));
    bool huge = false;
    hsize_t count = 0;
    const hid_t sp = random_space(in, true, &huge, &count);
    const hid_t t = file_type(k);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    const int rank = H5Sget_simple_extent_ndims(sp);
    bool external = false;
    if (huge && rank > 0) {
        // Declared huge, nothing allocated: chunks of 1 element, written never.
        hsize_t chunk[3] = {1, 1, 1};
        H5Pset_chunk(dcpl, rank, chunk);
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    } else if (rank > 0 && k != Kind::VlenStr && in.byte() % 8 == 0) {
        // Raw data in another file (never written here: the loader reads what it holds).
        external = H5Pset_external(dcpl, external_file().c_str(), 0, H5F_UNLIMITED) >= 0;
    }
    const hid_t d = H5Dcreate2(file, path.c_str(), t, sp, lcpl(), dcpl, H5P_DEFAULT);
    if (d >= 0) {
        if (!huge && !external)
            write_values(k, count, in, [&](hid_t mt, const void* buf) {
                H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
            });
        H5Dclose(d);
    }
    H5Pclose(dcpl);
    H5Tclose(t);
    H5Sclose(sp);
}

void random_attr(hid_t file, const std::string& obj, const std::string& name, Input& in) {
    if (H5Aexists_by_name(file, obj.c_str(), name.c_str(), H5P_DEFAULT) > 0)
        H5Adelete_by_name(file, obj.c_str(), name.c_str(), H5P_DEFAULT);
    const Kind k = static_cast<Kind>(in.pick(static_cast<std::size_t>(Kind::Count)));
    bool huge = false;
    hsize_t count = 0;
    const hid_t sp = random_space(in, false, &huge, &count);
    const hid_t t = file_type(k);
    const hid_t a = H5Acreate_by_name(file, obj.c_str(), name.c_str(), t, sp, H5P_DEFAULT,
                                      H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        write_values(k, count, in, [&](hid_t mt, const void* buf) { H5Awrite(a, mt, buf); });
        H5Aclose(a);
    }
    H5Tclose(t);
    H5Sclose(sp);
}

void mutate(hid_t file, Input& in, const std::vector<std::string>& vocab, int max_ops) {
    for (int op = 0; op < max_ops && !in.empty(); ++op) {
        Objects o = objects(file);
        std::vector<std::string> names = vocab;
        names.insert(names.end(), o.names.begin(), o.names.end());
        const std::string& parent = pick_of(o.groups, in);
        const std::string fresh = child(parent, pick_of(names, in));
        switch (in.byte() % 10) {
            case 0:  // replace an existing dataset by a random one
                if (!o.datasets.empty()) {
                    const std::string p = pick_of(o.datasets, in);
                    H5Ldelete(file, p.c_str(), H5P_DEFAULT);
                    random_dataset(file, p, in);
                }
                break;
            case 1:
                random_dataset(file, fresh, in);
                break;
            case 2:
            case 3: {  // replace or add an attribute (existing names first)
                const std::string& obj = in.flag() && !o.datasets.empty() ? pick_of(o.datasets, in)
                                                                          : pick_of(o.groups, in);
                std::vector<std::string> an = attr_names(file, obj);
                const std::string name =
                    !an.empty() && in.flag() ? pick_of(an, in) : pick_of(names, in);
                random_attr(file, obj, name, in);
                break;
            }
            case 4: {  // delete a link
                const std::string& p = pick_of(o.all, in);
                if (p != "/") H5Ldelete(file, p.c_str(), H5P_DEFAULT);
                break;
            }
            case 5: {  // delete an attribute
                const std::string& obj = pick_of(o.all, in);
                std::vector<std::string> an = attr_names(file, obj);
                if (!an.empty())
                    H5Adelete_by_name(file, obj.c_str(), pick_of(an, in).c_str(), H5P_DEFAULT);
                break;
            }
            case 6:
                make_group(file, fresh);
                break;
            case 7: {  // hard link to an existing object (a group's ancestor makes a cycle)
                const std::string& target = in.flag() ? pick_of(o.groups, in) : pick_of(o.all, in);
                H5Lcreate_hard(file, target.c_str(), file, fresh.c_str(), lcpl(), H5P_DEFAULT);
                break;
            }
            case 8: {  // soft link: to an object, to itself, or dangling
                std::string target = in.flag() ? pick_of(o.all, in) : fresh;
                if (in.byte() % 4 == 0) target = "/" + in.text(8);
                H5Lcreate_soft(target.c_str(), file, fresh.c_str(), lcpl(), H5P_DEFAULT);
                break;
            }
            default: {  // external link: to a file in the temp dir, to a missing file
                const std::string ext =
                    in.flag() ? external_file() : temp_path("missing-" + std::to_string(in.byte()));
                const std::string obj = in.flag() ? "/" : "/" + pick_of(names, in);
                H5Lcreate_external(ext.c_str(), obj.c_str(), file, fresh.c_str(), lcpl(),
                                   H5P_DEFAULT);
                break;
            }
        }
    }
}

}  // namespace attnspec::fuzz
