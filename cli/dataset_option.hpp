// The --dataset NAME[:layer[:head[:sentence]]] option shared by jacobian, cond, neumann and
// fidelity (io/model_input.hpp): its help text, the selector with a command's default sentence,
// the conflicts with --input and generated data, and what a report made from it records.
#pragma once
#include <string>
#include <vector>

#include "attnspec/io/model_input.hpp"
#include "cli.hpp"

namespace attnspec::cli {

// The option's one-line description; `what` (a few words) says what the command computes from
// the selected heads. The long form is on docs/cli/<command>.md.
std::string dataset_option_help(const std::string& what);

// Parses the selector (Usage on a malformed one). With `default_sentence0`, a selector of a
// model-layout dataset without a sentence part (fewer than four parts) selects sentence 0;
// "NAME:l:h:*" still selects all. (Heads-layout files have no sentence part.)
DatasetSelector dataset_selector(const std::string& text, bool default_sentence0 = false);

// Refuses --dataset together with --input (a different source) and with the options that
// describe generated data (Usage, exit 64).
void reject_with_dataset(const po::variables_map& vm, const std::string& command,
                         const std::vector<std::string>& generated);

// The bias form of InfSA on dataset heads (neumann, fidelity): biases are kept, so this is
// kBiasFormQK unless no selected head has a b_Q or b_K.
constexpr const char* kBiasFormQK = "with biases (b_Q, b_K)";
std::string qk_bias_form(const std::vector<SelectedHead>& heads);

// The labels of the selected heads, in order.
std::vector<std::string> labels_of(const std::vector<SelectedHead>& heads);

// Root attributes `dataset` (the selector) and, when not empty, `bias_form`, and the string
// dataset /dataset_heads: the label of every selected head in selection order.
void record_dataset(H5Group& root, const DatasetSelector& sel,
                    const std::vector<std::string>& labels, const std::string& bias_form);
// "dataset" and "bias_form" (when not empty) as members of an open JSON object.
void json_dataset(JsonWriter& j, const DatasetSelector& sel, const std::string& bias_form);

// Group /heads/<k> for the k-th selected head: attributes label, layer, head, sentence.
H5Group selected_head_group(H5Group& heads, const SelectedHead& h, std::size_t k);

// Q, K of every selected head (head_qk: biases kept), one block each, in selection order.
void dataset_qk(const std::vector<SelectedHead>& heads, std::vector<Eigen::MatrixXd>& Qs,
                std::vector<Eigen::MatrixXd>& Ks);

}  // namespace attnspec::cli
