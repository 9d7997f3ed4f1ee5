// The names of the analysis report sections (reports/SCHEMA.md: /jacobian, /cond, /neumann,
// /fidelity, the spectrum records inside them and the groups of a dataset run) that a writer
// (report/jacobian_section.cpp, report/cond_section.cpp, report/spectrum_record.cpp,
// report/infsa_sections.cpp, cli/'s dataset runs) and the reader (report/kinds.cpp) both spell:
// each is spelled here once. A name only a writer spells stays beside it. Constants only; CPU only.
#pragma once

namespace attnspec::names {

// A spectrum record (report/spectrum_record.hpp) and the kappa groups of /cond.
namespace spectrum {
inline constexpr char kSigmaMax[] = "sigma_max";
inline constexpr char kSigmaMin[] = "sigma_min";
inline constexpr char kKappaPrefix[] = "kappa_";  // + the convention: kappa_strict, kappa_nz
inline constexpr char kKappaStrict[] = "kappa_strict";
inline constexpr char kKappaNz[] = "kappa_nz";
inline constexpr char kSigma[] = "sigma";
inline constexpr char kRank[] = "rank";
inline constexpr char kValue[] = "value";
inline constexpr char kEnclosureLo[] = "enclosure_lo";
inline constexpr char kEnclosureHi[] = "enclosure_hi";
inline constexpr char kRtol[] = "rtol";
inline constexpr char kSigmaMinUsed[] = "sigma_min_used";
}  // namespace spectrum

// /jacobian and its /jacobian/head_<h> groups (report/jacobian_section.hpp).
namespace jacobian {
inline constexpr char kGroup[] = "jacobian";
inline constexpr char kWrt[] = "wrt";
inline constexpr char kCorrection[] = "correction";
inline constexpr char kSource[] = "source";
inline constexpr char kVec[] = "vec";
inline constexpr char kEvaluatedAt[] = "evaluated_at";
inline constexpr char kSharedX[] = "shared_X";
inline constexpr char kStored[] = "stored";
inline constexpr char kFrobeniusLayer[] = "frobenius_layer";
inline constexpr char kHeadPrefix[] = "head_";  // + the head's index
inline constexpr char kName[] = "name";
inline constexpr char kN[] = "N";
inline constexpr char kD[] = "D";
inline constexpr char kd[] = "d";
inline constexpr char ks[] = "s";
inline constexpr char kFrobenius[] = "frobenius";
inline constexpr char kMaxAbs[] = "max_abs";
inline constexpr char kSeconds[] = "seconds";
inline constexpr char kSpectrum[] = "spectrum";
}  // namespace jacobian

// /cond (report/cond_section.hpp); its kappa groups are spectrum::kKappaPrefix + convention.
namespace cond {
inline constexpr char kGroup[] = "cond";
inline constexpr char kInput[] = "input";
inline constexpr char kDataset[] = "dataset";
inline constexpr char kMethod[] = "method";
inline constexpr char kInputDtype[] = "input_dtype";
inline constexpr char kRows[] = "rows";
inline constexpr char kCols[] = "cols";
inline constexpr char kResidual[] = "residual";
inline constexpr char kEtaU[] = "eta_U";
inline constexpr char kEtaV[] = "eta_V";
inline constexpr char kSeconds[] = "seconds";
inline constexpr char kHeadlineConvention[] = "headline_convention";
inline constexpr char kSigma[] = "sigma";
inline constexpr char kSigmaLo[] = "sigma_lo";
inline constexpr char kSigmaHi[] = "sigma_hi";
inline constexpr char kBasis[] = "basis";
}  // namespace cond

// /neumann (report/infsa_sections.hpp).
namespace neumann {
inline constexpr char kGroup[] = "neumann";
inline constexpr char kSource[] = "source";
inline constexpr char kAffinity[] = "affinity";
inline constexpr char kN[] = "N";
inline constexpr char kGamma[] = "gamma";
inline constexpr char kNorm2Hi[] = "norm2_hi";
inline constexpr char kRhoLo[] = "rho_lo";
inline constexpr char kRhoHi[] = "rho_hi";
inline constexpr char kInvariants[] = "invariants";
inline constexpr char kTruncation[] = "truncation";
inline constexpr char kK[] = "K";
inline constexpr char kBound[] = "bound";
inline constexpr char kError[] = "error";
inline constexpr char kTarget[] = "target";
inline constexpr char kKForTarget[] = "K_for_target";
inline constexpr char kCentralities[] = "centralities";
inline constexpr char kMinLeak[] = "min_leak";
inline constexpr char kProbabilistic[] = "probabilistic";
}  // namespace neumann

// /fidelity (report/infsa_sections.hpp); its metric columns are infsa/fidelity_table.hpp's
// kFidelityMetrics.
namespace fidelity {
inline constexpr char kGroup[] = "fidelity";
inline constexpr char kGamma[] = "gamma";
inline constexpr char kMode[] = "mode";
inline constexpr char kAffinity[] = "affinity";
inline constexpr char kWeights[] = "weights";
inline constexpr char kFamily[] = "family";
inline constexpr char kN[] = "N";
}  // namespace fidelity

// /check_kernel (report/kernel_check_report.hpp): the run's attributes, one subgroup per output
// tensor, its worst-element lists as subgroups of columns.
namespace kernel_check {
inline constexpr char kGroup[] = "check_kernel";
inline constexpr char kOp[] = "op";
inline constexpr char kVerdict[] = "verdict";
inline constexpr char kSummary[] = "summary";
inline constexpr char kTensors[] = "tensors";
inline constexpr char kIndex[] = "index";
inline constexpr char kWorstByBound[] = "worst_by_bound";
inline constexpr char kWorstByRule[] = "worst_by_rule";
inline constexpr char kWorstLse[] = "worst_lse";
}  // namespace kernel_check

// A dataset run (`cond|neumann --dataset`): /heads/<k>/neumann, /heads/<k>/<matrix>/cond, the
// head labels /dataset_heads and the root attributes dataset and bias_form (cli/dataset_option).
namespace dataset_run {
inline constexpr char kHeads[] = "heads";
inline constexpr char kDatasetHeads[] = "dataset_heads";
inline constexpr char kDataset[] = "dataset";
inline constexpr char kBiasForm[] = "bias_form";
}  // namespace dataset_run

}  // namespace attnspec::names
