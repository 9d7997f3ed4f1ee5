// attnspec import: a user's checkpoint (safetensors or .npz) -> the model input schema.
// Parsing and mapping: io/tensor_files.hpp, io/checkpoint_import.hpp.
#include <sys/stat.h>

#include <cstdio>
#include <iostream>

#include "attnspec/io/checkpoint_import.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "memory_option.hpp"

namespace attnspec::cli {
namespace {

const char* kSynopsis =
    "CHECKPOINT --out F.h5 [--heads H] [--layers 0,3] [--inputs F.npz] [--scale S] "
    "[--name NAME] [--licence TEXT] [--json]";

const char* kHelp =
    "examples:\n"
    "  attnspec import model.safetensors --out minilm.h5          (heads from config.json)\n"
    "  attnspec import vit.safetensors --heads 12 --layers 0,11 --out vit.h5\n";

std::vector<int> parse_layers(const std::string& text) {
    std::vector<int> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        out.push_back(static_cast<int>(
            parse_count(text.substr(start, comma - start), "--layers", 0, 999999)));
        start = comma + 1;
    }
    return out;
}

std::string layer_list(const CheckpointMap& m) {
    std::string s;
    for (const ImportedLayer& l : m.layers) s += (s.empty() ? "" : ",") + std::to_string(l.source);
    return s;
}

void print_json(const ImportSummary& r, const ImportOptions& o) {
    const CheckpointMap& m = r.map;
    JsonWriter j(std::cout);
    j.begin_object();
    json_header(j, "import");
    j.kv("checkpoint", o.checkpoint).kv("format", r.format).kv("naming", m.family);
    j.kv("sha256", r.sha256).kv("out", o.out).kv("bytes", static_cast<std::int64_t>(r.bytes));
    j.key("layers").begin_array();
    for (const ImportedLayer& l : m.layers) j.value(l.source);
    j.end_array();
    j.kv("heads", m.heads).kv("heads_from", r.heads_from);
    j.kv("D", static_cast<std::int64_t>(m.D)).kv("d", static_cast<std::int64_t>(m.d));
    j.kv("biases", m.biases).kv("s", r.s).kv("tensors_mapped", m.mapped);
    j.kv("tensors_ignored", m.ignored).kv("inputs", r.inputs);
    j.key("sentences").begin_array();
    for (int s : r.sentences) j.value(s);
    j.end_array();
    j.kv("seconds", r.seconds);
    j.end_object();
    j.finish();
}

void print_text(const ImportSummary& r, const ImportOptions& o) {
    const CheckpointMap& m = r.map;
    std::printf("imported %s (%s, %s naming, sha256 %s)\n", o.checkpoint.c_str(), r.format.c_str(),
                m.family.c_str(), r.sha256.c_str());
    std::printf("  layers %s: %zu x %d heads (from %s), D = %ld, d = %ld, biases: %s, s = %.6g\n",
                layer_list(m).c_str(), m.layers.size(), m.heads, r.heads_from.c_str(),
                static_cast<long>(m.D), static_cast<long>(m.d), m.biases ? "yes" : "no", r.s);
    std::printf("  tensors: %d mapped, %d ignored (not attention projections)\n", m.mapped,
                m.ignored);
    if (r.inputs == "none")
        std::printf(
            "  hidden states: none (weights only); add them with --inputs F.npz holding "
            "layer<l>_sentence<s> (N, D) arrays, or one X for every layer\n");
    else
        std::printf("  hidden states: %s (sentences per layer: %d)\n", r.inputs.c_str(),
                    r.sentences.empty() ? 0 : r.sentences.front());
    std::printf("wrote %s (%s) in %.2f s\n", o.out.c_str(), human_bytes(double(r.bytes)).c_str(),
                r.seconds);
}

}  // namespace

int run_import(const Invocation& inv) {
    po::options_description desc("import options");
    ImportOptions o;
    std::string layers, max_memory;
    double scale = 0;
    CommonOptions common;
    desc.add_options()("checkpoint", po::value(&o.checkpoint)->required(),
                       "the checkpoint: a .safetensors file or an .npz (also positional)")(
        "out,o", po::value(&o.out)->required(), "the model file to write (atomically)")(
        "heads", count_value(&o.heads, "--heads", 1, 1000000),
        "heads per layer (default: from config.json)")(
        "layers", po::value(&layers), "source layers to import, e.g. 0,3 (default: all)")(
        "inputs", po::value(&o.inputs), "hidden states (.npz): layer<l>_sentence<s> or X")(
        "scale", real_value(&scale, "--scale", 0, 1e300, true),
        "logit scale s stored in the file (default 1/sqrt(d))")(
        "name", po::value(&o.name), "dataset name (default: the stem of --out)")(
        "licence", po::value(&o.licence), "licence text (default \"unknown (user checkpoint)\")");
    add_common_options(desc, common, "", kJson);
    add_memory_option(desc, max_memory);
    po::positional_options_description pos;
    pos.add("checkpoint", 1);
    po::variables_map vm;
    if (!parse(inv, "import", kSynopsis, kHelp, desc, vm, &pos)) return 0;
    apply_memory_option(max_memory);
    if (given(vm, "layers")) o.layers = parse_layers(layers);
    if (given(vm, "scale")) o.scale = scale;
    o.command_line = inv.command_line;
    struct stat st {};  // progress only where reading takes a while
    const bool big = ::stat(o.checkpoint.c_str(), &st) == 0 && st.st_size > (64 << 20);
    Progress bar("import", 1, big && !common.json);
    o.progress = [&bar](long done, long total) {
        bar.set_total(total);
        bar.update(done);
    };
    const ImportSummary r = import_checkpoint(o);
    bar.done();
    common.json ? print_json(r, o) : print_text(r, o);
    return 0;
}

}  // namespace attnspec::cli
