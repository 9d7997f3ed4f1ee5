// attnspec report show|render FILE: summarise an attnspec HDF5 report of any kind (verify,
// jacobian, cond, neumann, fidelity, check-kernel) or render it as a page: Markdown alone, or a
// directory with report.md and the figures.
#include <cstdio>
#include <iostream>
#include <string>

#include "attnspec/base/format.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/report/figures.hpp"
#include "attnspec/report/kinds.hpp"
#include "attnspec/report/merge.hpp"
#include "attnspec/report/summary.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {
namespace {

const char* kExamples =
    "examples:\n"
    "  attnspec report show reports/out/verify-all.h5\n"
    "  attnspec report render reports/out/verify-all.h5 --out reports/out/verify-all\n";

struct ReportOptions {
    CommonOptions common;  // --json only
    std::string action, file, out;
    std::vector<std::string> more;  // merge: the shards after the first
    bool tree = false, no_figures = false;
};

void declare(po::options_description& desc, ReportOptions& o) {
    // clang-format off
    desc.add_options()
        ("action", po::value(&o.action), "show | render | merge (positional)")
        ("file", po::value(&o.file), "report file (positional)")
        ("more", po::value(&o.more)->multitoken(), "merge: more shard reports (positional)")
        ("tree", po::bool_switch(&o.tree), "show: also print the HDF5 tree")
        ("out", po::value(&o.out), "render: DIR or F.md (default stdout); merge: R.h5")
        ("no-figures", po::bool_switch(&o.no_figures), "render --out DIR: the Markdown only");
    // clang-format on
    add_common_options(desc, o.common, "", kJson);
}

// Text read from a report as printed: control characters other than line breaks and tabs
// (a regime name holding a terminal escape) shown as \xNN.
std::string without_controls(const std::string& text) { return escape_controls(text, "\n\t"); }

bool ends_with_md(const std::string& s) { return s.size() > 3 && s.substr(s.size() - 3) == ".md"; }

void render(const ReportOptions& o, const Page& page) {
    if (o.out.empty()) {
        std::cout << page_markdown(page);
    } else if (ends_with_md(o.out)) {
        write_text_file_atomically(o.out, page_markdown(page));
        log("wrote " + o.out);
    } else {
        const auto n = write_page_dir(o.file, o.out, page, !o.no_figures,
                                      [](const std::string& m) { log(m); });
        log("wrote " + o.out + "/report.md" +
            (o.no_figures ? ""
                          : " and " + std::to_string(n) + " figures in " + o.out + "/figures"));
    }
}

// `report show --tree` of a report this version does not render (unknown kind, old schema): the
// reason and the tree, exit 0 (the tree is what was asked for). False when it renders.
bool tree_of_unrenderable(const ReportOptions& o, const H5Reader& r) {
    if (o.action != "show" || !o.tree || !r.has_attr("/", "schema_version")) return false;
    try {
        (void)report_kind(r);
        return false;
    } catch (const Error& e) {
        if (e.code() != ExitCode::DataError) throw;
        std::cout << "report " << o.file << "\n  not rendered: " << e.what() << "\n\ntree:\n"
                  << render_tree(r);
        return true;
    }
}

// report merge SHARD.h5... --out R.h5 (report/merge.hpp).
int merge(const ReportOptions& o, const Invocation& inv) {
    if (o.file.empty()) fail_usage("report merge: give the shard reports: merge S0.h5 S1.h5 ...");
    if (o.out.empty()) fail_usage("report merge: --out R.h5 is required");
    std::vector<std::string> shards = {o.file};
    shards.insert(shards.end(), o.more.begin(), o.more.end());
    const MergedReport m = merge_shard_reports(shards, o.out, inv.command_line);
    if (o.common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "report merge");
        j.kv("report", m.target).kv("shards", static_cast<long>(m.shards));
        j.kv("counterexample_files", m.counterexample_files);
        j.key("checks").begin_array();
        for (const auto& c : m.checks) j.value(c);
        j.end_array().end_object();
        j.finish();
    } else {
        std::cout << merged_report_text(m);
    }
    return 0;
}

}  // namespace

int run_report(const Invocation& inv) {
    po::options_description desc("report options");
    ReportOptions o;
    declare(desc, o);
    po::positional_options_description pos;
    pos.add("action", 1).add("file", 1).add("more", -1);
    po::variables_map vm;
    if (!parse(inv, "report", "show|render FILE | merge SHARD.h5... --out R.h5 [options]",
               kExamples, desc, vm, &pos))
        return 0;
    if (o.action == "merge") return merge(o, inv);
    if (o.action != "show" && o.action != "render")
        fail_usage(
            "report: expected 'show FILE', 'render FILE' or 'merge SHARD.h5... --out R.h5' "
            "(see 'attnspec report --help')");
    if (o.file.empty()) fail_usage("report " + o.action + ": missing FILE");
    if (!o.more.empty())
        fail_usage("report " + o.action + ": one FILE, got '" + o.more[0] + "' too");
    if (o.action == "render" && !o.out.empty()) {  // before reading anything
        if (ends_with_md(o.out))
            check_output_target(o.out, {o.file});
        else
            check_page_dir_target(o.out, o.file);
    }
    H5Reader r(o.file);
    if (tree_of_unrenderable(o, r)) return 0;
    const std::string kind = report_kind(r);
    const ReportSummary s = read_report_summary(r);
    Page page = report_page(r, kind, s);
    page.provenance = s.provenance;
    if (o.action == "render") {
        render(o, page);
    } else if (o.common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "report show");
        j.kv("file", o.file).kv("kind", kind);
        json_report_summary(j, s);
        j.key("summary").begin_array();
        for (const auto& line : page.summary) j.value(line);
        j.end_array().end_object();
        j.finish();
    } else {
        std::cout << without_controls(
            render_show_text(o.file, s, kind == "verify" ? "" : page_text(page)));
        if (o.tree) std::cout << "\ntree:\n" << without_controls(render_tree(r));
    }
    return 0;
}

}  // namespace attnspec::cli
