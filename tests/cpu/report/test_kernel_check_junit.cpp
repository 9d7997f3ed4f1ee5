// check-kernel's JUnit XML (report/kernel_check_junit.hpp): counts, one testcase per tensor, a
// failure only where a tensor did not pass (its type the verdict, its text the worst elements by
// the rule for fail, by the bound for wrong), and markup in names and summaries escaped.
#include "attnspec/report/kernel_check_junit.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::has;

TEST_CASE("kernel check JUnit: one testcase per tensor, failures typed and escaped", "[report]") {
    kernels::KernelCheckResult pass, fail, wrong;
    fail.verdict = kernels::KernelVerdict::fail;
    fail.summary = "fail: error <1> & \"2\"";
    fail.worst_by_rule.push_back({{0, 3, 1}, 1.5, 1.25, 0.25, 0.5, 0.125, 0.0625});
    wrong.verdict = kernels::KernelVerdict::wrong;
    wrong.summary = "wrong: beyond\x01 the bound";
    wrong.worst_by_bound.push_back({{1, 2, 0}, 7, 5, 2, 0.5, 0.25, 0.125});
    kernels::KernelCheckRun run;
    run.op = "attention-vjp", run.verdict = kernels::KernelVerdict::wrong;
    run.summary = "wrong: dq pass, dk fail, dv wrong", run.inputs = "in's.npz";
    run.tensors = {{"dq", &pass}, {"dk", &fail}, {"dv", &wrong}};
    run.seconds = 3, run.reproducer = "r.repro.npz";
    const std::string x = kernel_check_junit(run);
    CHECK(has(x,
              "<testsuite name=\"attnspec check-kernel attention-vjp\" tests=\"3\" "
              "failures=\"2\" errors=\"0\" skipped=\"0\" time=\"3\""));
    CHECK(has(x, "name=\"dq\" time=\"1\"/>"));
    CHECK(has(x,
              "<failure type=\"fail\" message=\"fail: fail: error &lt;1&gt; &amp; "
              "&quot;2&quot;\">"));
    CHECK(has(x, "worst elements by error / allowed:\n  at (0, 3, 1): got 1.5, reference 1.25"));
    CHECK(has(x, "<failure type=\"wrong\" message=\"wrong: wrong: beyond? the bound\">"));
    CHECK(has(x, "worst elements by error / rounding bound:\n  at (1, 2, 0): got 7"));
    CHECK(has(x, "reproducer: r.repro.npz"));
    CHECK(has(x, "<property name=\"inputs\" value=\"in&apos;s.npz\"/>"));
    CHECK(xml_escape("a\tb\nc\x1f") == "a\tb\nc?");
}
