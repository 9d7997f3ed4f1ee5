// attnspec report show|render FILE: summarise an attnspec HDF5 report (provenance, verdicts,
// per-regime tables, tree) or render it as a paper-style Markdown page.
#include <iostream>
#include <string>

#include "attnspec/io/h5.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "report_render.hpp"

namespace attnspec::cli {
namespace {

const char* kExamples =
    "subcommands:\n"
    "  show FILE     provenance, every check's verdict and per-regime counts, and (--tree) the\n"
    "                HDF5 tree with dataset shapes\n"
    "  render FILE   a Markdown page with the paper-style tables (to --out or stdout)\n\n"
    "examples:\n"
    "  attnspec report show reports/out/verify-all.h5\n"
    "  attnspec report show reports/out/verify-all.h5 --tree\n"
    "  attnspec report render reports/out/verify-all.h5 --out reports/out/verify-all.md\n";

struct ReportOptions {
    CommonOptions common;  // --json only
    std::string action, file, out;
    bool tree = false;
};

void declare(po::options_description& desc, ReportOptions& o) {
    desc.add_options()("action", po::value(&o.action), "show | render (positional)")(
        "file", po::value(&o.file), "report file (positional)")("tree", po::bool_switch(&o.tree),
                                                                "show: also print the HDF5 tree")(
        "out", po::value(&o.out), "render: write the Markdown here (atomically) instead of stdout");
    add_common_options(desc, o.common, "", kJson);
}

}  // namespace

int run_report(const Invocation& inv) {
    po::options_description desc("report options");
    ReportOptions o;
    declare(desc, o);
    po::positional_options_description pos;
    pos.add("action", 1).add("file", 1);
    po::variables_map vm;
    if (!parse(inv, "report", "show|render FILE [options]", kExamples, desc, vm, &pos)) return 0;
    if (o.action != "show" && o.action != "render")
        fail_usage("report: expected 'show FILE' or 'render FILE' (see 'attnspec report --help')");
    if (o.file.empty()) fail_usage("report " + o.action + ": missing FILE");
    if (o.action == "render") check_output_target(o.out, {o.file});  // before reading anything
    H5Reader r(o.file);
    if (!r.has_attr("/", "schema_version"))
        throw Error(ExitCode::DataError,
                    o.file + " is HDF5 but not an attnspec report (no schema_version)");
    const ReportSummary s = read_report_summary(r);
    if (o.action == "render") {
        const std::string md = render_markdown(s);
        if (o.out.empty()) {
            std::cout << md;
        } else {
            write_text_file_atomically(o.out, md);
            log("wrote " + o.out);
        }
    } else if (o.common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "report show");
        j.kv("file", o.file);
        json_report_summary(j, s);
        j.end_object();
        j.finish();
    } else {
        std::cout << render_show_text(o.file, s);
        if (o.tree) std::cout << "\ntree:\n" << render_tree(r);
    }
    return 0;
}

}  // namespace attnspec::cli
