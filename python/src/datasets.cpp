// The named datasets (io/model_input.hpp): the catalogue `attnspec dataset list` prints and the
// heads `--dataset NAME[:layer[:head[:sentence]]]` selects, loaded by the same functions.
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>
#include <vector>

#include "attnspec/io/checkpoint_import.hpp"
#include "attnspec/io/model_input.hpp"
#include "bindings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace attnspec::python {
namespace {

nb::dict info_dict(const DatasetInfo& e) {
    nb::dict d;
    d["name"] = e.name, d["path"] = e.path, d["layout"] = e.layout, d["model"] = e.model;
    d["origin"] = e.origin, d["licence"] = e.licence, d["description"] = e.description;
    d["regenerate"] = e.regenerate, d["layers"] = e.layers, d["heads"] = e.heads;
    d["sentences"] = e.sentences, d["D"] = static_cast<long>(e.D), d["d"] = static_cast<long>(e.d);
    d["s"] = e.s, d["dtype"] = e.dtype, d["has_inputs"] = e.has_inputs;
    d["validation"] = e.validation, d["size_bytes"] = e.size_bytes, d["problem"] = e.problem;
    nb::list text, tokens;
    for (const std::string& t : e.sentence_text) text.append(t);
    for (const Eigen::Index n : e.n_tokens) tokens.append(static_cast<long>(n));
    d["sentence_text"] = text, d["n_tokens"] = tokens;
    return d;
}

nb::list list_all() {
    nb::list l;
    for (const DatasetInfo& e : list_datasets()) l.append(info_dict(e));
    return l;
}

// Every (layer, head, sentence) the selector names, as (layer, head, sentence, label, Head).
nb::list load_heads(const std::string& selector, bool need_inputs) {
    const DatasetSelector sel = DatasetSelector::parse(selector);
    std::vector<SelectedHead> heads = load_selected_heads(sel, need_inputs);
    nb::list l;
    for (SelectedHead& h : heads)
        l.append(nb::make_tuple(h.layer, h.head, h.sentence, h.label,
                                nb::cast(std::move(h.head_input), nb::rv_policy::move)));
    return l;
}

// `attnspec import CHECKPOINT --out OUT [--inputs IN] --heads H [--scale S] --name NAME`: the
// model input file a checkpoint (safetensors or npz) and its hidden states make.
nb::dict import_file(const std::string& checkpoint, const std::string& out,
                     const std::string& inputs, int heads, std::optional<double> scale,
                     const std::string& name, const std::string& command) {
    ImportOptions o;
    o.checkpoint = checkpoint, o.out = out, o.inputs = inputs, o.heads = heads;
    o.scale = scale, o.name = name, o.command_line = command;
    ImportSummary sum;
    {
        nb::gil_scoped_release unlocked;
        sum = import_checkpoint(o);
    }
    nb::dict d;
    d["format"] = sum.format, d["family"] = sum.family, d["sha256"] = sum.sha256;
    d["s"] = sum.s, d["layers"] = sum.map.layers.size(), d["heads"] = sum.map.heads;
    d["D"] = sum.map.D, d["d"] = sum.map.d, d["bytes"] = sum.bytes;
    return d;
}

}  // namespace

void bind_datasets(nb::module_& m) {
    m.def("dataset_directory", &dataset_directory,
          "Where named datasets live: $ATTNSPEC_DATASETS, else the source tree's "
          "datasets/embedded (compiled in).");
    m.def("list_datasets", &list_all,
          "The catalogue of dataset_directory(), one dict per *.h5 (problem set when a file "
          "could not be catalogued).");
    m.def(
        "find_dataset", [](const std::string& name) { return info_dict(find_dataset(name)); },
        "name"_a, "The catalogue entry of one dataset (NoInput listing the known names).");
    m.def("import_checkpoint", &import_file, "checkpoint"_a, "out"_a, "inputs"_a, "heads"_a,
          "scale"_a.none(), "name"_a, "command"_a,
          "`attnspec import`: a checkpoint (+ hidden states) as a model input file.");
    m.def("load_heads", &load_heads, "selector"_a, "need_inputs"_a = true,
          "The heads NAME[:layer[:head[:sentence]]] selects, with their inputs X (need_inputs) "
          "or weights only (X empty).");
}

}  // namespace attnspec::python
