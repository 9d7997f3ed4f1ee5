// `report show` / `report render` on every kind of report the tool writes (verify, jacobian, cond,
// neumann, fidelity): each renders non-empty tables whose numbers are the file's, each table says
// its convention, the page opens with a summary; an unknown kind or an old schema exits 65.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attnspec/io/h5.hpp"
#include "test_support.hpp"

using namespace attnspec::test;

namespace {

// Cells of one Markdown table row ("| a | b \| c |" -> {"a", "b \| c"}).
std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '|' && line[i - 1] != '\\') {
            const auto a = cur.find_first_not_of(' '), b = cur.find_last_not_of(' ');
            out.push_back(a == std::string::npos ? "" : cur.substr(a, b - a + 1));
            cur.clear();
        } else {
            cur += line[i];
        }
    }
    return out;
}

// The column `name` of the first table after the heading `heading` (rows in order).
std::vector<std::string> md_column(const std::string& md, const std::string& heading,
                                   const std::string& name) {
    std::size_t pos = md.find("\n" + heading + "\n");
    REQUIRE(pos != std::string::npos);
    pos = md.find("\n|", pos);
    REQUIRE(pos != std::string::npos);
    std::vector<std::string> lines;
    while (pos != std::string::npos && pos + 1 < md.size() && md[pos + 1] == '|') {
        const auto end = md.find('\n', pos + 1);
        lines.push_back(md.substr(pos + 1, end - pos - 1));
        pos = end;
    }
    REQUIRE(lines.size() >= 3);  // header, separator, at least one row
    const auto head = cells(lines[0]);
    std::size_t c = 0;
    while (c < head.size() && head[c] != name) ++c;
    INFO("column " << name << " in " << lines[0]);
    REQUIRE(c < head.size());
    std::vector<std::string> col;
    for (std::size_t i = 2; i < lines.size(); ++i) col.push_back(cells(lines[i]).at(c));
    return col;
}

// Printed numbers equal the stored ones to the digits printed (at least three).
void same_numbers(const std::vector<std::string>& printed, const std::vector<double>& stored) {
    REQUIRE(printed.size() == stored.size());
    for (std::size_t i = 0; i < stored.size(); ++i) {
        INFO("row " << i << ": printed " << printed[i] << ", stored " << stored[i]);
        const double x = std::strtod(printed[i].c_str(), nullptr);
        CHECK(std::fabs(x - stored[i]) <= 5e-3 * std::fabs(stored[i]));
    }
}

std::string render(const std::string& file) {
    const auto r = run_cli("report render " + file + " --out " + file + ".md");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string md = slurp(file + ".md");
    CHECK(md.find("## Summary\n\n- Tested: ") != std::string::npos);
    CHECK(md.find("*Convention: ") != std::string::npos);
    CHECK(md.find("## Provenance") != std::string::npos);
    return md;
}
}  // namespace

TEST_CASE(
    "report render: neumann, cond, jacobian, fidelity and verify pages carry the file's "
    "numbers",
    "[cli][report]") {
    const std::string d = attnspec::test::temp_dir();
    const std::string heads =
        std::string(ATTNSPEC_SOURCE_DIR) + "/datasets/embedded/attention_heads.h5";
    for (const std::string& cmd :
         {"neumann --tokens 16 --dh 4 --out " + d + "/n.h5",
          "cond --input " + heads + " --dataset /heads/iid-gauss-16x32x8/W_Q --out " + d + "/c.h5",
          "jacobian --random 6,4,3 --heads 2 --svd full --out " + d + "/j.h5",
          "fidelity --tokens 16 --out " + d + "/f.h5",
          "verify thm3.8-trained thm3.5 --trials 8 -q --out " + d + "/v.h5"}) {
        const auto r = run_cli(cmd);
        INFO(cmd << ": " << r.err);
        REQUIRE((r.code == 0 || r.code == 1));
    }
    {
        const std::string md = render(d + "/n.h5");
        CHECK(md.rfind("# attnspec neumann report\n", 0) == 0);
        attnspec::H5Reader h(d + "/n.h5");
        same_numbers(md_column(md, "## Neumann kernel", "K"), h.vector("/neumann/truncation/K"));
        same_numbers(md_column(md, "## Neumann kernel", "error"),
                     h.vector("/neumann/truncation/error"));
        same_numbers(md_column(md, "## Neumann kernel", "bound"),
                     h.vector("/neumann/truncation/bound"));
    }
    {
        const std::string md = render(d + "/c.h5");
        attnspec::H5Reader h(d + "/c.h5");
        same_numbers(md_column(md, "## Condition number", "kappa"),
                     {h.attr_double("/cond/kappa_strict", "value"),
                      h.attr_double("/cond/kappa_nz", "value")});
        CHECK(md.find("| strict |") != std::string::npos);
        // the singular-value table is the second table of the section
        const std::string sv = md.substr(md.find("All 8 singular values."));
        same_numbers(md_column("\n## x\n" + sv, "## x", "sigma_i"), h.vector("/cond/sigma"));
    }
    {
        const std::string md = render(d + "/j.h5");
        attnspec::H5Reader h(d + "/j.h5");
        same_numbers(md_column(md, "## Jacobian per head", "\\|\\|J\\|\\|_F"),
                     {h.attr_double("/jacobian/head_0", "frobenius"),
                      h.attr_double("/jacobian/head_1", "frobenius")});
        CHECK(md.find("kappa(J) strict") != std::string::npos);
    }
    {
        const std::string md = render(d + "/f.h5");
        attnspec::H5Reader h(d + "/f.h5");
        const auto rec = md_column(md, "## Fidelity by family and N", "records");
        double total = 0;
        for (const auto& x : rec) total += std::stod(x);
        CHECK(total == double(h.vector("/fidelity/N").size()));
        CHECK(rec.size() == 3);  // three families at one N
    }
    {
        const std::string md = render(d + "/v.h5");
        attnspec::H5Reader h(d + "/v.h5");
        const auto names = md_column(md, "## Checks", "check");
        const auto viol = md_column(md, "## Checks", "violated");
        for (std::size_t i = 0; i < names.size(); ++i)
            CHECK(std::stod(viol[i]) == h.attr_double("/checks/" + names[i], "n_violated"));
        // the table's convention line carries the conventions the records state
        const std::string conv =
            h.attr_as_text("/checks/thm3.5/records/" + h.children("/checks/thm3.5/records").at(0),
                           "convention:kappa");
        CHECK(md.find("; kappa: " + conv) != std::string::npos);
        if (h.attr_double("/checks/thm3.8-trained", "n_violated") > 0) {
            CHECK(md.find("- Strongest violation of a reading (not a finding against a paper): "
                          "thm3.8-trained") != std::string::npos);
            CHECK(md.find("- Look first at thm3.8-trained") != std::string::npos);
        }
    }
    for (const char* f : {"n", "c", "j", "f"}) {  // show: the page as text, never a bare group
        const auto s = run_cli("report show " + d + "/" + f + ".h5");
        INFO(f << ": " << s.err);
        CHECK(s.code == 0);
        CHECK(s.out.find("(see --tree)") == std::string::npos);
        CHECK(s.out.find("convention: ") != std::string::npos);
        const auto j = run_cli("report show --json " + d + "/" + f + ".h5");
        CHECK(j.code == 0);
        CHECK(j.out.find("\"summary\": [") != std::string::npos);
    }
    std::system(("rm -rf " + d).c_str());
}

TEST_CASE("report show/render refuse an unknown kind and an old schema with 65", "[cli][report]") {
    const std::string d = attnspec::test::temp_dir();
    const std::string py =
        "import sys, h5py\n"
        "with h5py.File(sys.argv[1] + '/gpu.h5', 'w') as f:\n"
        "    f.attrs['schema_version'] = '1.0'\n"
        "    f.create_group('gpu_check').attrs['x'] = 1.0\n"
        "with h5py.File(sys.argv[1] + '/old.h5', 'w') as f:\n"
        "    f.attrs['schema_version'] = '0.9'\n"
        "    f.create_group('neumann')\n";
    REQUIRE(python(py, d) == 0);
    for (const char* action : {"show", "render"}) {
        const auto u = run_cli(std::string("report ") + action + " " + d + "/gpu.h5");
        CHECK(u.code == 65);
        CHECK(u.out.empty());
        CHECK(u.err.find("unknown kind") != std::string::npos);
        CHECK(u.err.find("/gpu_check") != std::string::npos);
        CHECK(u.err.find("verify, jacobian, cond, neumann, fidelity") != std::string::npos);
        const auto o = run_cli(std::string("report ") + action + " " + d + "/old.h5");
        CHECK(o.code == 65);
        CHECK(o.err.find("'0.9'") != std::string::npos);
        CHECK(o.err.find("reads schema 1.") != std::string::npos);
    }
    // --tree asks for the tree: shown, with the reason the page is not
    const auto t = run_cli("report show --tree " + d + "/gpu.h5");
    CHECK(t.code == 0);
    CHECK(t.out.find("not rendered: ") != std::string::npos);
    CHECK(t.out.find("gpu_check/") != std::string::npos);
    std::system(("rm -rf " + d).c_str());
}
