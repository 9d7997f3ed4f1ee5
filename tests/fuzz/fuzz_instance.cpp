// libFuzzer target: instance files and report records as replayed by `attnspec verify CHECK
// --instance F` (io/check_records: find_replay_record; proofs/registry: replay_record, which reads
// the stored inputs with stored_matrix / stored_value and re-runs one instance). Structure-aware:
// a valid instance file written by write_instance_file from a real run of a check
// (support/check_pool.hpp), or a valid report, then up to 8 hostile mutations; the check name and
// --record come from the input. Oracle as in support/fuzz_support.hpp.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "attnspec/base/memory.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/report/check_records.hpp"
#include "check_pool.hpp"
#include "h5_builder.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_common();
    // A replay does O(m n^2) work on the stored matrices: under the 256 MiB budget of the other
    // targets a legitimate W of (1000000, 4) took 87 s of CPU under ASan/UBSan at -O1 (1.7 s in a
    // release build) and libFuzzer reported it as a timeout. 16 MiB keeps every accepted input
    // well inside the 25 s limit and still exercises the refusal of larger declared sizes.
    set_memory_limit_bytes(16.0 * 1024 * 1024);
    base_instance_files();
    base_report_files();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input in(data, size);
    const auto& instances = base_instance_files();
    const auto& reports = base_report_files();
    const bool from_report = in.byte() % 4 == 0;
    const std::string& base =
        from_report ? reports[in.pick(reports.size())] : instances[in.pick(instances.size())];
    const std::string path = temp_path("instance.h5");
    std::filesystem::copy_file(base, path, std::filesystem::copy_options::overwrite_existing);
    const auto& reg = proofs::registry();
    // The check to replay: the one the file holds (read below), or another one.
    const std::size_t other = in.byte();
    const unsigned rec = in.byte() % 4;
    std::string record;
    if (rec == 1) record = "instance_0";
    if (rec == 2) record = "instance_" + std::to_string(in.byte());
    if (rec == 3) record = in.text(10);
    {
        H5File f = H5File::open_rw(path);
        if (!f.ok()) return 0;
        mutate(f.id(), in,
               {"kind",       "check",   "record",     "instance", "values", "comparisons",
                "hypotheses", "seed",    "regime",     "verdict",  "lambda", "s",
                "gamma",      "W",       "E",          "X",        "W_Q",    "A_hat",
                "checks",     "records", "instance_0", "is_worst"},
               8);
    }
    expect_documented("replay", [&] {
        H5Reader r(path);
        std::string check;
        if (other < reg.size())
            check = reg[other].name;
        else if (r.has_attr("/", "check"))
            check = r.attr_string("/", "check");
        else
            check = reg[other % reg.size()].name;
        const std::string group = find_replay_record(r, check, record);
        const proofs::CheckInfo* c = proofs::find_check(check);
        if (c && c->replay) (void)proofs::replay_record(*c, r, group);
    });
    return 0;
}
