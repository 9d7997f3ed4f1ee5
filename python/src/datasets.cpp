// The named datasets (io/model_input.hpp): the catalogue `attnspec dataset list` prints and the
// heads `--dataset NAME[:layer[:head[:sentence]]]` selects, loaded by the same functions.
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

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
    m.def("load_heads", &load_heads, "selector"_a, "need_inputs"_a = true,
          "The heads NAME[:layer[:head[:sentence]]] selects, with their inputs X (need_inputs) "
          "or weights only (X empty).");
}

}  // namespace attnspec::python
