// Reads the check runs of a report (reports/SCHEMA.md) and renders them as text (`report show`);
// the Markdown page of every kind is report/kinds.hpp + report/page.hpp. Reading goes through
// report/check_records.hpp. CPU only.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/json.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/report/check_records.hpp"
#include "attnspec/report/experiment_records.hpp"

namespace attnspec {

// A report as `report show` and `report render` see it: root provenance, the check runs (read by
// report/check_records.hpp, the one reader of the check-record schema) and the other top-level
// groups.
struct ReportSummary {
    std::vector<std::pair<std::string, std::string>> provenance;
    std::vector<CheckRunSummary> checks;
    std::vector<StoredExperiment> experiments;  // runs of kind "experiment" (a table, no verdict)
    std::vector<std::string> other_groups;      // top-level groups other than /checks
    // Per run name: the `convention:<name>` attributes of its stored records (a value that
    // differs between records is "varies by record"), in name order.
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> conventions;
};

// Errors: DataError when a check run lacks an attribute the schema requires, or a regime-table
// column is missing, not numeric, or not of one value per regime (checked before reading).
ReportSummary read_report_summary(const H5Reader& r);
std::string render_checks_text(const ReportSummary& s);
// `report show` text: "report FILE", the provenance, then `body` (render_checks_text when empty).
std::string render_show_text(const std::string& file, const ReportSummary& s,
                             const std::string& body = "");
// The stored records of a check run, one line each (with "robust violation" / "fragile
// violation (...)" where the record classifies its violation, and "replays from its file only"
// where no seed draws it), then one per comparison of it.
std::string stored_record_lines(const CheckRunSummary& c);
// Whether a stored record is drawn again by its seed: not a search result (regime search/...) nor
// a dataset head (seed 0); such records replay from their stored inputs only.
bool replays_from_seed(const StoredRecord& rec);
// The heading of the record list: how many replay from a seed and how many from their file.
std::string stored_records_heading(const CheckRunSummary& c);
// `report show --tree`: the HDF5 tree with dataset shapes, two spaces per level; each object once
// (a repeated hard link, e.g. a cycle, is shown as "-> first path"), at most kMaxTreeDepth levels.
constexpr int kMaxTreeDepth = 64;
std::string render_tree(const H5Reader& r);
// `report show --json`: the "provenance" object and the "checks" array into an open object.
void json_report_summary(JsonWriter& j, const ReportSummary& s);

}  // namespace attnspec
