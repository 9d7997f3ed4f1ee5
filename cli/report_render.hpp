// Reads the check-run part of a report (reports/SCHEMA.md) into plain structs and renders it as
// text or as a paper-style Markdown page.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "attnspec/io/report_writer.hpp"

namespace attnspec::cli {

struct RegimeRow {
    std::string regime;
    long counts[4] = {0, 0, 0, 0};
    double worst_ratio = 0, median_ratio = 0;
};

struct CheckSummary {
    std::string name, claim, verdict, headline, search_effort;
    long instances = 0;
    long counts[4] = {0, 0, 0, 0};
    double seconds = 0;
    std::vector<RegimeRow> regimes;
    std::vector<std::string> record_lines;  // one line per stored record comparison
};

struct ReportSummary {
    std::vector<std::pair<std::string, std::string>> provenance;
    std::vector<CheckSummary> checks;
    std::vector<std::string> other_groups;  // top-level groups other than /checks
};

ReportSummary read_report_summary(const H5Reader& r);
std::string render_checks_text(const ReportSummary& s);
std::string render_markdown(const ReportSummary& s);
// temp file beside the target, fsync, rename; Error(CantCreate) when it cannot.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace attnspec::cli
