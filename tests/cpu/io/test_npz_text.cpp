// Text members of an .npz (io/tensor_files.hpp: write_npz's `texts`, read_npz_text): a 0-d byte
// string round trips (an empty one as ""), numpy reads it as bytes, arrays beside it still read,
// a missing member is "", a float member is refused with DataError.
#include "attnspec/base/errors.hpp"
#include "attnspec/io/kernel_files.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

TEST_CASE("npz text members: written, read back, refused where not a byte string", "[io]") {
    TempDir dir;
    const std::string path = dir / "t.npz";
    const std::vector<double> a = {1, 2, 3};
    const std::string json = "{\"generator\": \"spike-v\", \"seed\": 7}";
    write_npz(path, {{"a", {3}, &a, false}}, {{"case", json}, {"empty", ""}});
    CHECK(read_npz_text(path, "case") == json);
    CHECK(read_npz_text(path, "empty").empty());
    CHECK(read_npz_text(path, "none").empty());
    CHECK(code_of([&] { (void)read_npz_text(path, "a"); }) == ExitCode::DataError);
    const KernelArrayFile f(path);
    CHECK(f.read("a", false).values == a);
    CHECK(f.text("case") == json);
    std::string out;
    REQUIRE(python("import sys, numpy as np\nz = np.load(sys.argv[1])\n"
                   "print(z['case'].dtype.kind, z['case'].shape, z['case'].item().decode())\n",
                   path, &out) == 0);
    CHECK(has(out, "S () " + json));
}
