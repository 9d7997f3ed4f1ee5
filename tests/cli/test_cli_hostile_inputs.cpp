// Hostile HDF5 files given to the attnspec executable (issue 14, reading side), built with h5py:
// array-valued attributes, report arrays shorter than their regime table, hard-link cycles and
// deep nesting under `report show --tree`, data stored outside the file, declared sizes above the
// memory budget, and stored dtypes (float32 accepted and recorded in the report, integers
// refused). Each must end in the documented exit code with one line naming the object.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "attnspec/base/memory.hpp"
#include "test_support.hpp"

using namespace attnspec::test;

namespace {

// The executable under `timeout` (exit 124 when it runs past `seconds`), stdout captured.
attnspec::test::CliResult run_timed(const std::string& args, int seconds) {
    return attnspec::test::run_shell("timeout -s KILL " + std::to_string(seconds) + " " +
                                     std::string(ATTNSPEC_CLI_PATH) + " " + args);
}

bool one_line(const std::string& err) { return !err.empty() && err.find('\n') == err.size() - 1; }

// An attention input (root form) of dtype argv[2]; argv[3] names a variant.
const char* kAttention = R"PY(
import sys, h5py, numpy as np
path, dt, variant = sys.argv[1], sys.argv[2], sys.argv[3]
rng = np.random.default_rng(1)
with h5py.File(path, 'w') as f:
    if variant == 'declared':
        f.create_dataset('X', shape=(1000000000, 4), dtype='f8')   # no storage written
        f.create_dataset('W_Q', data=np.full((4, 2), np.nan))     # a read would refuse NaN
    elif variant == 'external':
        open(path + '.raw', 'wb').write(rng.standard_normal((5, 4)).tobytes())
        f.create_dataset('X', shape=(5, 4), dtype='f8', external=[(path + '.raw', 0, 160)])
    else:
        f['X'] = rng.standard_normal((5, 4)).astype(dt)
    for k in ('W_Q', 'W_K', 'W_V'):
        if k not in f:
            f[k] = (0.3 * rng.standard_normal((4, 2))).astype(dt)
    if variant == 's_array':
        f.attrs['s'] = np.arange(1.0, 65.0)
)PY";

// A report with one check run whose regime table is broken as argv[2] says.
const char* kReport = R"PY(
import sys, h5py, numpy as np
path, variant = sys.argv[1], sys.argv[2]
with h5py.File(path, 'w') as f:
    f.attrs['schema_version'] = '1.0'
    g = f.create_group('checks/thm')
    for k in ('claim', 'verdict', 'headline_comparison'):
        g.attrs[k] = 'x'
    g.attrs['instances'] = 3
    g.attrs['seconds'] = 0.5
    for k in ('n_holds', 'n_violated', 'n_inconclusive', 'n_not_applicable'):
        g.attrs[k] = 1
    if variant == 'attr_array':
        g.attrs['n_holds'] = np.arange(100)
    if variant == 'nan_count':
        g.attrs['instances'] = float('nan')
    t = g.create_group('regimes')
    t['regime'] = np.array(['a', 'b', 'c'], dtype=h5py.string_dtype())
    short = variant == 'short'
    for k in ('n_holds', 'n_violated', 'n_inconclusive', 'n_not_applicable'):
        t[k] = np.ones(1 if short and k == 'n_violated' else 3, dtype='i8')
    if variant == 'frac_count':
        del t['n_holds']
        t['n_holds'] = np.array([1.0, 2.5, 3.0])
    t['worst_ratio'] = np.ones(3)
    t['median_ratio'] = np.ones(3) if variant != 'strings' else np.array(['a', 'b', 'c'], dtype=h5py.string_dtype())
    if variant == 'neg_rows':  # an experiment table whose row count is -2^63
        e = f.create_group('checks/exp')
        for k, v in (('kind', 'experiment'), ('claim', 'x'), ('seed', '1'), ('axes', ''),
                     ('columns', '')):
            e.attrs[k] = v
        e.attrs['instances'] = 1
        e.attrs['seconds'] = 0.5
        e.attrs['rows'] = -9.223372036854776e18
        e.create_group('table')
)PY";

// argv[2]: 'cycle' (a -> b -> a hard links) or 'deep' (500 nested groups).
const char* kTree = R"PY(
import sys, h5py
path, variant = sys.argv[1], sys.argv[2]
with h5py.File(path, 'w') as f:
    f.attrs['schema_version'] = '1.0'
    if variant == 'cycle':
        a = f.create_group('a')
        b = a.create_group('b')
        b['back'] = a
        b['self'] = b
        a['v'] = [1.0, 2.0]
    else:
        g = f
        for i in range(500):
            g = g.create_group('g')
)PY";

// argv[2] (a report) has /<group> with input_dtype == argv[4] (argv[3] = group).
const char* kDtype = R"PY(
import sys, h5py
f = h5py.File(sys.argv[1], 'r')
v = f[sys.argv[2]].attrs['input_dtype']
v = v.decode() if isinstance(v, bytes) else v
print('input_dtype', v)
sys.exit(0 if v == sys.argv[3] else 1)
)PY";

}  // namespace

TEST_CASE("hostile cli: an array-valued attribute is a data error naming it", "[cli][hostile]") {
    const std::string dir = temp_dir();
    REQUIRE(python(kAttention, dir + "/s.h5 f8 s_array") == 0);
    const auto r = run_timed("jacobian --input " + dir + "/s.h5 --out " + dir + "/j.h5", 60);
    CHECK(r.code == 65);
    CHECK(one_line(r.err));
    CHECK(r.err.find("attribute 's' on '/' holds 64 values") != std::string::npos);

    REQUIRE(python(kReport, dir + "/r.h5 attr_array") == 0);
    const auto s = run_timed("report show " + dir + "/r.h5", 60);
    CHECK(s.code == 65);
    CHECK(s.err.find("attribute 'n_holds' on '/checks/thm' holds 100 values") != std::string::npos);
}

TEST_CASE("hostile cli: report arrays shorter than the regime table are refused",
          "[cli][hostile]") {
    const std::string dir = temp_dir();
    REQUIRE(python(kReport, dir + "/ok.h5 ok") == 0);
    const auto ok = run_timed("report show " + dir + "/ok.h5", 60);
    CHECK(ok.code == 0);
    CHECK(ok.out.find("  c: 1/1/1/1") != std::string::npos);

    REQUIRE(python(kReport, dir + "/short.h5 short") == 0);
    for (const char* action : {"show", "render"}) {
        const auto r = run_timed(std::string("report ") + action + " " + dir + "/short.h5", 60);
        CHECK(r.code == 65);
        CHECK(one_line(r.err));
        CHECK(r.err.find("'/checks/thm/regimes/n_violated' has shape (1,), expected (3,)") !=
              std::string::npos);
    }
    REQUIRE(python(kReport, dir + "/strings.h5 strings") == 0);
    const auto t = run_timed("report render " + dir + "/strings.h5", 60);
    CHECK(t.code == 65);
    CHECK(t.err.find("'/checks/thm/regimes/median_ratio' is string") != std::string::npos);
}

// Found by fuzz_report: a NaN count was cast to an integer (undefined behaviour).
TEST_CASE("hostile cli: a count that is NaN or fractional is a data error", "[cli][hostile]") {
    const std::string dir = temp_dir();
    REQUIRE(python(kReport, dir + "/nan.h5 nan_count") == 0);
    REQUIRE(python(kReport, dir + "/frac.h5 frac_count") == 0);
    for (const char* action : {"show", "render"}) {
        const auto n = run_timed(std::string("report ") + action + " " + dir + "/nan.h5", 60);
        CHECK(n.code == 65);
        CHECK(one_line(n.err));
        CHECK(n.err.find("attribute 'instances' on '/checks/thm' holds nan, expected a count") !=
              std::string::npos);
        const auto f = run_timed(std::string("report ") + action + " " + dir + "/frac.h5", 60);
        CHECK(f.code == 65);
        CHECK(f.err.find("/checks/thm/regimes/n_holds row 1 holds 2.5, expected a count") !=
              std::string::npos);
    }
}

// Found by fuzz_report: an experiment table's row count of -2^63 was cast to size_t (UB).
TEST_CASE("hostile cli: an experiment table with a negative row count is a data error",
          "[cli][hostile]") {
    const std::string dir = temp_dir();
    REQUIRE(python(kReport, dir + "/rows.h5 neg_rows") == 0);
    for (const char* action : {"show", "render"}) {
        const auto r = run_timed(std::string("report ") + action + " " + dir + "/rows.h5", 60);
        CHECK(r.code == 65);
        CHECK(one_line(r.err));
        CHECK(r.err.find("attribute 'rows' on '/checks/exp' holds") != std::string::npos);
        CHECK(r.err.find("expected a count") != std::string::npos);
    }
}

TEST_CASE("hostile cli: report show --tree ends on a link cycle and on deep nesting",
          "[cli][hostile]") {
    const std::string dir = temp_dir();
    REQUIRE(python(kTree, dir + "/cycle.h5 cycle") == 0);
    const auto c = run_timed("report show --tree " + dir + "/cycle.h5", 30);
    CHECK(c.code == 0);
    CHECK(c.out.find("back  -> /a (listed above") != std::string::npos);
    CHECK(c.out.find("self  -> /a/b (listed above") != std::string::npos);
    CHECK(c.out.find("v  (2,)") != std::string::npos);

    REQUIRE(python(kTree, dir + "/deep.h5 deep") == 0);
    const auto d = run_timed("report show --tree " + dir + "/deep.h5", 30);
    CHECK(d.code == 0);
    CHECK(d.out.find("... (deeper than 64 levels: not shown)") != std::string::npos);
}

TEST_CASE("hostile cli: data stored outside the input file is refused", "[cli][hostile]") {
    const std::string dir = temp_dir();
    REQUIRE(python(kAttention, dir + "/e.h5 f8 external") == 0);
    const auto r = run_timed("jacobian --input " + dir + "/e.h5 --out " + dir + "/j.h5", 60);
    CHECK(r.code == 65);
    CHECK(one_line(r.err));
    CHECK(r.err.find("dataset '/X' keeps its data in external files") != std::string::npos);
    const auto c = run_timed("cond --input " + dir + "/e.h5 --matrix X --out " + dir + "/c.h5", 60);
    CHECK(c.code == 65);
    CHECK(c.err.find("dataset 'X' keeps its data in external files") != std::string::npos);
}

TEST_CASE("hostile cli: a declared X of (1e9, 4) is refused before allocating", "[cli][hostile]") {
    // 29.8 GiB: above the default budget (half the memory) on machines below 64 GB
    if (attnspec::default_memory_limit_bytes() >= 8.0 * 4e9) {
        WARN("skipped: this machine's default budget would allow reading 29.8 GiB");
        return;
    }
    const std::string dir = temp_dir();
    REQUIRE(python(kAttention, dir + "/big.h5 f8 declared") == 0);
    const auto r = run_timed("jacobian --input " + dir + "/big.h5 --out " + dir + "/j.h5", 20);
    CHECK(r.code == 65);
    CHECK(one_line(r.err));
    CHECK(r.err.find("reading the input (1 head(s)) would need 59.6 GiB") != std::string::npos);
}

TEST_CASE("hostile cli: float32 inputs are recorded, integer inputs refused", "[cli][hostile]") {
    const std::string dir = temp_dir();
    REQUIRE(python(kAttention, dir + "/f32.h5 f4 plain") == 0);
    auto r = run_timed("jacobian --input " + dir + "/f32.h5 --out " + dir + "/j.h5", 60);
    REQUIRE(r.code == 0);
    CHECK(python(kDtype, dir + "/j.h5 jacobian float32") == 0);
    r = run_timed("cond --input " + dir + "/f32.h5 --matrix X --out " + dir + "/c.h5", 60);
    REQUIRE(r.code == 0);
    CHECK(python(kDtype, dir + "/c.h5 cond float32") == 0);
    // Q/K input of float32 for neumann: Q = K = X (5 x 4)
    REQUIRE(python("import sys, h5py\nf = h5py.File(sys.argv[1], 'r')\n"
                   "g = h5py.File(sys.argv[2], 'w')\ng['Q'] = f['X'][()]\ng['K'] = f['X'][()]\n",
                   dir + "/f32.h5 " + dir + "/qk.h5") == 0);
    r = run_timed("neumann --input " + dir + "/qk.h5 --gamma 0.5 --out " + dir + "/n.h5", 60);
    REQUIRE(r.code == 0);
    CHECK(python(kDtype, dir + "/n.h5 neumann float32") == 0);
    r = run_timed("fidelity --input " + dir + "/qk.h5 --out " + dir + "/fi.h5", 60);
    REQUIRE(r.code == 0);
    CHECK(python(kDtype, dir + "/fi.h5 fidelity float32") == 0);

    REQUIRE(python(kAttention, dir + "/i32.h5 i4 plain") == 0);
    r = run_timed("jacobian --input " + dir + "/i32.h5 --out " + dir + "/j.h5", 60);
    CHECK(r.code == 65);
    CHECK(one_line(r.err));
    CHECK(r.err.find("dataset '/X' is int32, expected float32 or float64") != std::string::npos);
}
