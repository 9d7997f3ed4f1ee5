// The real-model analysis (issue 11): which (layer, head, sentence) units of a model dataset
// (io/model_input.hpp, e.g. datasets/embedded/minilm-l6.h5) a run visits, the loop over them, and
// the table columns every model experiment shares. Used by model_weights_kappa, thm_3_4_model,
// model_kappa_j, model_speca_lambda and model_infsa (proofs/*.md of the same stems). CPU only.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/io/model_input.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// One unit of the analysis: a head of a layer on one sentence (sentence -1 and n_tokens 0 for the
// weight-only analysis).
struct ModelUnit {
    int layer = 0, head = 0, sentence = -1;
    Eigen::Index n_tokens = 0;
};

// What a run visits: the selected layers (regime "<name>/L<l>" each) and, per layer, its units in
// run order: sentences shortest first (ties by index), every selected head within a sentence.
struct ModelPlan {
    DatasetSelector selector;
    DatasetInfo info;
    std::vector<std::string> regimes;
    std::vector<std::vector<ModelUnit>> units;  // per regime
};

// The plan of opt.dataset. per_sentence = false: one unit per (layer, head), no sentence (a
// sentence part of the selector is then a usage error). Errors: Usage when opt.dataset is empty
// or malformed, NoInput when the dataset is unknown, DataError when it is not in the model layout
// or an index is out of range. Reads the catalogue entry only (root attributes, /sentences).
ModelPlan model_plan(const RunOptions& opt, const std::string& check, bool per_sentence);

// Units per sentence in each layer (the selected heads): the default of the per-head analyses,
// every selected head on the shortest selected sentence.
long heads_per_sentence(const ModelPlan& plan);

// Runs `fn` on the units of `plan`: per layer its first `quick` units by default (every unit with
// --thorough), --trials N spread over the layers --regime keeps (the first N mod L one more, at
// most every unit of a layer), ending at --time-budget. Each record gets its layer's regime, seed 0
// (nothing is drawn) and the values layer, head, sentence. The units run on RunOptions::threads
// workers (RunLoop), so `fn` must be thread-safe: load heads with load_unit_head, which holds a
// lock around HDF5. Cost: the units' `fn`.
CheckRun run_model_units(const RunOptions& opt, const ModelPlan& plan, const std::string& check,
                         const std::string& claim, const std::string& headline, long quick,
                         const std::function<CheckResult(const ModelUnit&)>& fn);

// The head of a unit with the model's s: X, W_*, and b_* when with_biases (else none: the paper's
// bias-free form). A weight-only unit (sentence -1) has no X. Thread-safe (the HDF5 read holds a
// process-wide lock). Cost: reading one head (and X).
Head load_unit_head(const ModelPlan& plan, const ModelUnit& u, bool with_biases);

// An experiment record of `check` (verdict not_applicable, the note saying why) holding one
// matrix instance/<name> and its conventions.
CheckResult experiment_record(const std::string& check, const std::string& claim,
                              std::vector<std::pair<std::string, std::string>> conventions,
                              const std::string& name, Eigen::MatrixXd m);

// Applies `form` to h (drop clears its b_*) and returns the record convention and table attribute
// `bias_form`, as attention/attention.hpp's apply_bias_form words it ("with biases (b_Q, b_K,
// b_V)", "bias-free (paper form)", "bias-free (input has no biases)").
std::string set_bias_form(Head& h, BiasForm form);
// The bias_form convention of the first record ("" when there is none).
std::string records_bias_form(const std::vector<CheckResult>& results);

// The axes layer, head, sentence of a table, filled from the records' values (`with_sentence`
// false: layer, head only). Appends one row per call of `row`.
struct ModelTableRows {
    ExperimentTable& table;
    bool with_sentence;
    void begin(const std::vector<std::string>& extra_axes,
               const std::vector<std::string>& columns);  // names the axes and columns
    void row(const CheckResult& r, const std::vector<std::string>& extra,
             const std::vector<double>& values);
};

// "min 0.9, median 0.95, max 1; 3 of 4 (75.0%) >= 0.985" over the non-NaN values (no share part
// when threshold is NaN).
std::string distribution_text(std::vector<double> v, double threshold);

}  // namespace attnspec::proofs
