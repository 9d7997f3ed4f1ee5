// attnspec report show|render FILE: summarise an attnspec HDF5 report (provenance, verdicts,
// per-regime tables, tree) or render it as a paper-style Markdown page.
#include <fstream>
#include <iostream>
#include <sstream>

#include "attnspec/io/report_writer.hpp"
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
    "  attnspec report show reports/out/verify.h5\n"
    "  attnspec report show reports/out/verify.h5 --tree\n"
    "  attnspec report render reports/out/verify.h5 --out reports/out/verify.md\n";

void print_tree(const H5Reader& r, const std::string& path, int depth, std::ostream& os) {
    for (const auto& name : r.children(path)) {
        const std::string child = (path == "/" ? "" : path) + "/" + name;
        os << std::string(2 * depth, ' ') << name;
        if (r.is_group(child)) {
            os << "/\n";
            print_tree(r, child, depth + 1, os);
        } else {
            auto dims = r.shape(child);
            os << "  (";
            for (size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << dims[i];
            os << (dims.size() == 1 ? ",)" : ")") << "\n";
        }
    }
}

}  // namespace

int run_report(const Invocation& inv) {
    po::options_description desc("report options");
    std::string action, file, out;
    bool tree = false, json = false;
    desc.add_options()
        ("action", po::value(&action), "show | render (positional)")
        ("file", po::value(&file), "report file (positional)")
        ("tree", po::bool_switch(&tree), "show: also print the HDF5 tree")
        ("out", po::value(&out), "render: write the Markdown here (atomically) instead of stdout")
        ("json", po::bool_switch(&json), "show: one JSON document on stdout");
    po::positional_options_description pos;
    pos.add("action", 1).add("file", 1);
    po::variables_map vm;
    if (!parse(inv, "report", "show|render FILE [options]", kExamples, desc, vm, &pos)) return 0;
    if (action != "show" && action != "render")
        fail_usage("report: expected 'show FILE' or 'render FILE' (see 'attnspec report --help')");
    if (file.empty()) fail_usage("report " + action + ": missing FILE");
    H5Reader r(file);
    if (!r.has_attr("/", "schema_version"))
        throw Error(ExitCode::DataError, file + " is HDF5 but not an attnspec report (no schema_version)");
    const ReportSummary s = read_report_summary(r);
    if (action == "render") {
        std::string md = render_markdown(s);
        if (out.empty()) {
            std::cout << md;
        } else {
            write_text_atomically(out, md);
            log("wrote " + out);
        }
        return 0;
    }
    if (json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "report show");
        j.kv("file", file);
        j.key("provenance").begin_object();
        for (const auto& [k, v] : s.provenance) j.kv(k, v);
        j.end_object();
        j.key("checks").begin_array();
        for (const auto& c : s.checks) {
            j.begin_object().kv("name", c.name).kv("verdict", c.verdict).kv("claim", c.claim);
            j.kv("instances", c.instances).kv("n_holds", c.counts[0]).kv("n_violated", c.counts[1]);
            j.kv("n_inconclusive", c.counts[2]).kv("n_not_applicable", c.counts[3]).end_object();
        }
        j.end_array();
        j.end_object();
        j.finish();
        return 0;
    }
    std::cout << "report " << file << "\n";
    for (const auto& [k, v] : s.provenance) std::cout << "  " << k << ": " << v << "\n";
    std::cout << "\n";
    std::cout << render_checks_text(s);
    if (tree) {
        std::cout << "\ntree:\n";
        print_tree(r, "/", 1, std::cout);
    }
    return 0;
}


}  // namespace attnspec::cli
