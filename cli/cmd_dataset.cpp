// attnspec dataset list|show NAME: the catalogue of named datasets (io/model_input.hpp), the
// files that --dataset NAME[:layer[:head[:sentence]]] selects from.
#include <cstdio>
#include <iostream>
#include <string>

#include "attnspec/base/format.hpp"
#include "attnspec/io/model_input.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {
namespace {

const char* kExamples =
    "examples:\n"
    "  attnspec dataset list\n"
    "  attnspec dataset show minilm-l6 --json\n";

std::string shape_text(const DatasetInfo& d) {
    return std::to_string(d.layers) + " x " + std::to_string(d.heads);
}

void json_entry(JsonWriter& j, const DatasetInfo& d, bool full) {
    j.begin_object().kv("name", d.name).kv("path", d.path);
    if (!d.problem.empty()) {
        j.kv("problem", d.problem).end_object();
        return;
    }
    j.kv("layout", d.layout).kv("layers", static_cast<std::int64_t>(d.layers));
    j.kv("heads", static_cast<std::int64_t>(d.heads)).kv("D", static_cast<std::int64_t>(d.D));
    j.kv("d", static_cast<std::int64_t>(d.d)).kv("s", d.s);
    j.kv("sentences", static_cast<std::int64_t>(d.sentences)).kv("dtype", d.dtype);
    j.kv("inputs", d.has_inputs).kv("licence", d.licence).kv("size_bytes", d.size_bytes);
    if (full) {
        j.kv("model", d.model).kv("origin", d.origin).kv("description", d.description);
        j.kv("regenerate", d.regenerate).kv("validation", d.validation);
        j.key("sentence_text").begin_array();
        for (const auto& t : d.sentence_text) j.value(t);
        j.end_array().key("n_tokens").begin_array();
        for (auto n : d.n_tokens) j.value(static_cast<std::int64_t>(n));
        j.end_array();
    }
    j.end_object();
}

void print_list(const std::vector<DatasetInfo>& all) {
    std::printf("datasets in %s\n", dataset_directory().c_str());
    std::printf("%-20s %-6s %-8s %-5s %-4s %-9s %-16s %-12s %s\n", "name", "layout", "L x H", "D",
                "d", "sentences", "dtype", "licence", "size");
    for (const DatasetInfo& d : all) {
        if (!d.problem.empty()) {
            std::printf("%-20s not usable: %s\n", d.name.c_str(), d.problem.c_str());
            continue;
        }
        std::printf("%-20s %-6s %-8s %-5ld %-4ld %-9s %-16s %-12s %s\n", d.name.c_str(),
                    d.layout.c_str(), shape_text(d).c_str(), static_cast<long>(d.D),
                    static_cast<long>(d.d),
                    d.has_inputs ? std::to_string(d.sentences).c_str() : "none", d.dtype.c_str(),
                    d.licence.empty() ? "-" : d.licence.c_str(), human_bytes(d.size_bytes).c_str());
    }
    if (all.empty()) std::printf("(none)\n");
}

void print_show(const DatasetInfo& d) {
    auto line = [](const char* k, const std::string& v) {
        std::printf("%-12s %s\n", k, v.empty() ? "-" : v.c_str());
    };
    line("name", d.name);
    line("path", d.path);
    line("layout", d.layout);
    line("model", d.model);
    line("shape", shape_text(d) + " (layers x heads), D = " + std::to_string(d.D) +
                      ", d = " + std::to_string(d.d) + ", s = " + format_number(d.s));
    line("dtype", d.dtype);
    line("size", human_bytes(d.size_bytes));
    line("licence", d.licence);
    line("origin", d.origin);
    line("description", d.description);
    line("regenerate", d.regenerate);
    line("validation", d.validation);
    if (!d.has_inputs)
        line("sentences", "none (weights only: cond works, X is not stored)");
    else if (d.sentence_text.empty())
        line("sentences", std::to_string(d.sentences));
    for (std::size_t k = 0; k < d.sentence_text.size(); ++k)
        std::printf("sentence %zu  (%ld tokens) %s\n", k, static_cast<long>(d.n_tokens[k]),
                    d.sentence_text[k].c_str());
}

}  // namespace

int run_dataset(const Invocation& inv) {
    po::options_description desc("dataset options");
    std::string action, name;
    CommonOptions common;
    desc.add_options()("action", po::value(&action), "list | show (positional)")(
        "name", po::value(&name), "show: the dataset name (positional)");
    add_common_options(desc, common, "", kJson);
    po::positional_options_description pos;
    pos.add("action", 1).add("name", 1);
    po::variables_map vm;
    if (!parse(inv, "dataset", "list | show NAME [--json]", kExamples, desc, vm, &pos)) return 0;
    if (action != "list" && action != "show")
        fail_usage("dataset: expected 'list' or 'show NAME' (see 'attnspec dataset --help')");
    if (action == "show" && name.empty()) fail_usage("dataset show: missing NAME");
    if (action == "list" && !name.empty())
        fail_usage("dataset list takes no NAME (did you mean 'dataset show " + name + "'?)");
    const std::vector<DatasetInfo> all =
        action == "list" ? list_datasets() : std::vector<DatasetInfo>{find_dataset(name)};
    if (common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "dataset " + action);
        j.kv("directory", dataset_directory()).key("datasets").begin_array();
        for (const DatasetInfo& d : all) json_entry(j, d, action == "show");
        j.end_array().end_object();
        j.finish();
    } else if (action == "list") {
        print_list(all);
    } else {
        print_show(all[0]);
    }
    return 0;
}

}  // namespace attnspec::cli
