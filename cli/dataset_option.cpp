// The --dataset option shared by the commands that take inputs (dataset_option.hpp).
#include "dataset_option.hpp"

#include <algorithm>

#include "attnspec/report/names.hpp"

namespace attnspec::cli {

std::string dataset_option_help(const std::string& what) {
    return "named dataset NAME[:l[:h[:s]]]: " + what;
}

DatasetSelector dataset_selector(const std::string& text, bool default_sentence0) {
    DatasetSelector sel = DatasetSelector::parse(text);
    if (default_sentence0 && std::count(text.begin(), text.end(), ':') < 3 &&
        find_dataset(sel.name).layout == "model")
        sel.sentence = 0;
    return sel;
}

void reject_with_dataset(const po::variables_map& vm, const std::string& command,
                         const std::vector<std::string>& generated) {
    if (given(vm, "input"))
        fail_usage(command + ": give --dataset or --input, not both (--dataset names a " +
                   "dataset of 'attnspec dataset list', --input a file)");
    reject_given(vm, command, generated, "to --dataset (it describes generated data)");
}

std::vector<std::string> labels_of(const std::vector<SelectedHead>& heads) {
    std::vector<std::string> out;
    out.reserve(heads.size());
    for (const SelectedHead& h : heads) out.push_back(h.label);
    return out;
}

void record_dataset(H5Group& root, const DatasetSelector& sel,
                    const std::vector<std::string>& labels, const std::string& bias_form) {
    root.attr(names::dataset_run::kDataset, sel.describe());
    if (!bias_form.empty()) root.attr(names::dataset_run::kBiasForm, bias_form);
    root.write(names::dataset_run::kDatasetHeads, labels);
}

std::string qk_bias_form(const std::vector<SelectedHead>& heads) {
    for (const SelectedHead& h : heads)
        if (h.head_input.b_Q.size() + h.head_input.b_K.size() > 0) return kBiasFormQK;
    return "bias-free (input has no biases)";
}

void json_dataset(JsonWriter& j, const DatasetSelector& sel, const std::string& bias_form) {
    j.kv("dataset", sel.describe());
    if (!bias_form.empty()) j.kv("bias_form", bias_form);
}

H5Group selected_head_group(H5Group& heads, const SelectedHead& h, std::size_t k) {
    H5Group g = heads.group(std::to_string(k));
    g.attr("label", h.label);
    g.attr("layer", h.layer);
    g.attr("head", h.head);
    g.attr("sentence", h.sentence);
    return g;
}

void dataset_qk(const std::vector<SelectedHead>& heads, std::vector<Eigen::MatrixXd>& Qs,
                std::vector<Eigen::MatrixXd>& Ks) {
    Qs.resize(heads.size());
    Ks.resize(heads.size());
    for (std::size_t k = 0; k < heads.size(); ++k) head_qk(heads[k].head_input, Qs[k], Ks[k]);
}

}  // namespace attnspec::cli
