// Renders the check runs of a report (reports/SCHEMA.md) as text (`report show`) or as a
// paper-style Markdown page (`report render`). Reading goes through io/check_records.hpp. CPU only.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/json.hpp"
#include "attnspec/io/check_records.hpp"
#include "attnspec/io/experiment_records.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec::cli {

// A report as `report show` and `report render` see it: root provenance, the check runs (read by
// io/check_records.hpp, the one reader of the check-record schema) and the other top-level groups.
struct ReportSummary {
    std::vector<std::pair<std::string, std::string>> provenance;
    std::vector<CheckRunSummary> checks;
    std::vector<StoredExperiment> experiments;  // runs of kind "experiment" (a table, no verdict)
    std::vector<std::string> other_groups;      // top-level groups other than /checks
};

// Errors: DataError when a check run lacks an attribute the schema requires.
ReportSummary read_report_summary(const H5Reader& r);
std::string render_checks_text(const ReportSummary& s);
// `report show` text: "report FILE", the provenance, then render_checks_text.
std::string render_show_text(const std::string& file, const ReportSummary& s);
// `report show --tree`: the HDF5 tree with dataset shapes, two spaces per level.
std::string render_tree(const H5Reader& r);
// `report show --json`: the "provenance" object and the "checks" array into an open object.
void json_report_summary(JsonWriter& j, const ReportSummary& s);
std::string render_markdown(const ReportSummary& s);
// temp file beside the target, fsync, rename; Error(CantCreate) when it cannot.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace attnspec::cli
