// attnspec check-kernel's files beyond stdout: --junit F.xml (a JUnit document that parses, one
// testcase per output tensor, a failure with the verdict and worst elements), --out R.h5 (the
// /check_kernel report, read back with h5py and shown by `report show`), and the reproducer of a
// wrong kernel (beside the report, else beside the output) that re-checks to the same verdict;
// unwritable or clashing targets fail before any work (73, 64).
#include "attnspec/io/kernel_files.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "attnspec/kernels/attention_check.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// attnspec's baseline o and lse on the inputs of `in`, at scale `scale` (0: 1/sqrt(d)), fp16.
void write_attention_output(const std::string& in, const std::string& out, double scale) {
    kernels::AttentionProblem p;
    load_attention_inputs(in, p);
    p.scale = scale, p.mask = kernels::MaskKind::causal;
    kernels::Array o, lse;
    kernels::baseline_attention(p, kernels::Format::fp16, kernels::Format::fp32, o, lse);
    write_npz(out, {{"o", o.shape, &o.values, true}, {"lse", lse.shape, &lse.values, true}});
}

// Reads argv[1] (JUnit XML), argv[2] (the report) and argv[3] (the reproducer) and prints what
// the test compares.
const char* kReadBack = R"PY(
import json, sys
import xml.etree.ElementTree as ET
import h5py, numpy as np
root = ET.parse(sys.argv[1]).getroot()
suite = root.find('testsuite')
print('suites', root.tag, len(root.findall('testsuite')), suite.get('tests'), suite.get('failures'))
for c in suite.iter('testcase'):
    f = c.find('failure')
    print('case', c.get('name'), f.get('type') if f is not None else 'pass')
    if f is not None:
        print('failure-text', 'worst elements by error / rounding bound' in f.text)
props = {p.get('name'): p.get('value') for p in suite.iter('property')}
print('props', props['dtype'], props['mask'], props['verdict'], props['reproducer'] == sys.argv[3])
print('origin', props['case'], props['seed'], props['shape'])
with h5py.File(sys.argv[2], 'r') as h:
    g = h['check_kernel']
    print('report', g.attrs['op'], g.attrs['verdict'], g.attrs['dtype'], list(g['tensors'].asstr()))
    print('report-case', g.attrs['case'], g.attrs['case_seed'], g['case_shape'][()].tolist())
    w = g['o/worst_by_bound']
    print('worst', w['index'].shape, bool((w['error'][()] > w['bound'][()]).any()))
z = np.load(sys.argv[3])
case = json.loads(z['case'].item().decode())
print('repro', sorted(k for k in z.files if k != 'case'), case['verdict'], case['mask'])
print('repro-case', case['generator'], case['seed'], case['shape'])
print('replay', case['replay'])
)PY";

}  // namespace

TEST_CASE("check-kernel --junit --out: a wrong kernel's JUnit failure, report and reproducer",
          "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", bad = dir / "bad.npz", junit = dir / "j.xml",
                      report = dir / "r.h5", repro = dir / "r.repro.npz";
    REQUIRE(run_cli("check-kernel attention --generate spike-v --seed 3 --shape 2,40,16 "
                    "--dtype fp16 --inputs " +
                    in)
                .code == 0);
    write_attention_output(in, bad, 1.0 / 16);  // scale 1/d: wrong
    const std::string check =
        "check-kernel attention --dtype fp16 --mask causal --inputs " + in + " --output " + bad;
    CliResult r = run_cli(check + " --junit " + junit + " --out " + report);
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel attention: wrong"));
    CHECK(has(r.err, "reproducer written to " + repro));
    std::string seen;
    REQUIRE(python(kReadBack, junit + " " + report + " " + repro, &seen) == 0);
    CHECK(has(seen, "suites testsuites 1 1 1"));
    CHECK(has(seen, "case o wrong"));
    CHECK(has(seen, "failure-text True"));
    CHECK(has(seen, "props fp16 causal wrong True"));
    CHECK(has(seen, "report attention wrong fp16 ['o']"));
    CHECK(has(seen, "origin spike-v 3 (2, 40, 16)"));  // the stress case --generate recorded
    CHECK(has(seen, "report-case spike-v 3 [2, 40, 16]"));
    CHECK(has(seen, "repro-case spike-v 3 [2, 40, 16]"));
    CHECK(has(seen, "worst (5, 3) True"));
    CHECK(has(seen, "repro ['k', 'lse', 'o', 'q', 'v'] wrong causal"));
    CHECK(has(seen, "replay attnspec check-kernel attention --inputs " + repro + " --output " +
                        repro +
                        " --dtype fp16 --accumulate fp32 --mask causal --scale 0.25 "
                        "--factor 2"));
    // report show recognises it
    r = run_cli("report show " + report);
    CHECK(r.code == 0);
    CHECK(has(r.out, "Verdict: wrong"));
    CHECK(has(r.out, "replay: `attnspec check-kernel attention --inputs " + repro));
    CHECK(has(r.out, "o: wrong"));
    // The replay gives the same verdict and summary; no new reproducer beside the old one.
    const CliResult first = run_cli(check + " --json");
    r = run_cli("check-kernel attention --inputs " + repro + " --output " + repro +
                " --dtype fp16 --accumulate fp32 --mask causal --scale 0.25 --factor 2 --json");
    CHECK(r.code == 1);
    const auto summary = [](const std::string& json) {
        const auto at = json.find("\"summary\"");
        return json.substr(at, json.find('\n', at) - at);
    };
    CHECK(summary(r.out) == summary(first.out));
    CHECK(has(r.out, "\"verdict\": \"wrong\""));
    CHECK(entries(dir.path).size() == 6);  // in, bad, bad.repro, j.xml, r.h5, r.repro
}

TEST_CASE("check-kernel: a pass writes no reproducer, a wrong vjp's goes beside the output",
          "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", good = dir / "good.npz";
    REQUIRE(run_cli("check-kernel attention-vjp --generate gaussian --seed 3 --shape 2,16,8 "
                    "--dtype fp16 --inputs " +
                    in)
                .code == 0);
    write_attention_output(in, good, 0);  // the baseline: passes
    CliResult r = run_cli("check-kernel attention --dtype fp16 --mask causal --inputs " + in +
                          " --output " + good + " --junit " + (dir / "j.xml"));
    CHECK(r.code == 0);
    CHECK(has(slurp(dir / "j.xml"), "tests=\"1\" failures=\"0\""));
    CHECK(has(slurp(dir / "j.xml"), "name=\"o\" time="));
    CHECK(!exists(dir / "good.repro.npz"));
    // A planted backward that returns dK = 0 (dq, dv: the inputs q and v, wrong as well)
    kernels::AttentionProblem p;
    load_attention_inputs(in, p);
    kernels::Array zero = p.k;
    for (double& x : zero.values) x = 0;
    const std::string bad = dir / "bad.npz";
    write_npz(bad, {{"dq", p.q.shape, &p.q.values, true},
                    {"dk", zero.shape, &zero.values, true},
                    {"dv", p.v.shape, &p.v.values, true}});
    const std::string check = "check-kernel attention-vjp --dtype fp16 --inputs " + in;
    r = run_cli(check + " --output " + bad + " --junit " + (dir / "j.xml"));
    CHECK(r.code == 1);
    const std::string xml = slurp(dir / "j.xml");
    CHECK(has(xml, "tests=\"3\" failures=\"3\""));
    CHECK(has(xml, "<testcase classname=\"attnspec.check-kernel.attention-vjp\" name=\"dk\""));
    CHECK(has(xml, "<failure type=\"wrong\""));
    const std::string repro = dir / "bad.repro.npz";
    REQUIRE(exists(repro));
    const std::string first = run_cli(check + " --output " + bad + " --json").out;
    r = run_cli("check-kernel attention-vjp --dtype fp16 --inputs " + repro + " --output " + repro +
                " --json");
    CHECK(r.code == 1);
    // the same figures after "files": the first run lists the reproducer it wrote, the replay
    // writes nothing
    CHECK(has(first, "\"files\": [\n    \"" + repro + "\"\n  ]"));
    CHECK(has(r.out, "\"files\": []"));
    const auto after = [](const std::string& json) {
        return json.substr(json.find(']', json.find("\"files\"")));
    };
    CHECK(after(r.out) == after(first));
    CHECK(!exists(dir / "bad.repro.repro.npz"));
}

TEST_CASE("check-kernel --junit --out: bad targets fail before any work", "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", out = dir / "out.npz";
    REQUIRE(run_cli("check-kernel attention --generate gaussian --shape 8,4 --inputs " + in).code ==
            0);
    write_attention_output(in, out, 0);
    const std::string check = "check-kernel attention --inputs " + in + " --output " + out;
    CliResult r = run_cli(check + " --junit " + (dir.path + "/no/j.xml"));
    CHECK(r.code == 73);
    CHECK(r.out.empty());
    r = run_cli(check + " --out " + (dir.path + "/no/r.h5"));
    CHECK(r.code == 73);
    r = run_cli(check + " --out " + out);
    CHECK(r.code == 64);
    r = run_cli(check + " --out ''");
    CHECK(r.code == 64);
    CHECK(has(r.err, "--out expects a path"));
    r = run_cli(check + " --out " + (dir / "r.h5") + " --junit " + (dir / "r.h5"));
    CHECK(r.code == 64);
    r = run_cli("check-kernel attention --generate gaussian --shape 8,4 --inputs " + in +
                " --junit " + (dir / "j.xml"));
    CHECK(r.code == 64);
    CHECK(entries(dir.path).size() == 2);
}

TEST_CASE("report show: a malformed check-kernel report is a data error", "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", bad = dir / "bad.npz", report = dir / "r.h5";
    REQUIRE(
        run_cli("check-kernel attention --generate gaussian --shape 2,16,8 --inputs " + in).code ==
        0);
    write_attention_output(in, bad, 1.0 / 8);
    REQUIRE(run_cli("check-kernel attention --mask causal --inputs " + in + " --output " + bad +
                    " --out " + report)
                .code == 1);
    REQUIRE(run_cli("report show " + report).code == 0);
    // argv[2]: a column one element short; argv[3]: an index that is NaN
    const char* kBreak = R"PY(
import shutil, sys
import h5py, numpy as np
for target, what in ((sys.argv[2], 'short'), (sys.argv[3], 'nan')):
    shutil.copy(sys.argv[1], target)
    with h5py.File(target, 'r+') as h:
        w = h['check_kernel/o/worst_by_bound']
        if what == 'short':
            got = w['got'][()][:-1]
            del w['got']
            w['got'] = got
        else:
            w['index'][0, 0] = np.nan
)PY";
    REQUIRE(python(kBreak, report + " " + (dir / "short.h5") + " " + (dir / "nan.h5")) == 0);
    CliResult r = run_cli("report show " + (dir / "short.h5"));
    CHECK(r.code == 65);
    CHECK(has(r.err, "worst_by_bound/got' is not 1-D of length"));
    r = run_cli("report show " + (dir / "nan.h5"));
    CHECK(r.code == 65);
    CHECK(has(r.err, "worst_by_bound/index"));
}
