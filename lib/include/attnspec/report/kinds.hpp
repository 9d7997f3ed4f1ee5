// The kinds of report `report show` / `report render` read (reports/SCHEMA.md): which kind a
// file is, and one Page (report/page.hpp) per kind. CPU only.
#pragma once
#include <string>
#include <vector>

#include "attnspec/io/h5.hpp"
#include "attnspec/report/page.hpp"
#include "attnspec/report/summary.hpp"

namespace attnspec {

// The kinds this version reads, with the top-level group that marks each.
const std::vector<std::pair<std::string, std::string>>& report_kinds();  // {kind, group}

// Errors (DataError, one line naming what was found and what this version reads): no
// schema_version, a schema_version of another major version than kSchemaVersion, or no group of
// a known kind (e.g. an instance file, a gpu-check report of a later version).
std::string report_kind(const H5Reader& r);

// The page of a report of `kind` (report_kind). `s` is read_report_summary(r) (used for verify).
Page report_page(const H5Reader& r, const std::string& kind, const ReportSummary& s);

// One page per kind (report/verify_page.cpp, report/kinds.cpp). Errors: DataError naming a missing
// or malformed attribute or dataset. `file`: the report's path; the page names only its last
// component (replay hints).
Page verify_page(const ReportSummary& s, const std::string& file);
Page jacobian_page(const H5Reader& r);
// `g`: the analysis group, "/cond" or "/neumann" of a single run, or one head's group of a
// dataset run (dataset_groups).
Page cond_page(const H5Reader& r, const std::string& g = "/cond");
Page neumann_page(const H5Reader& r, const std::string& g = "/neumann");
// A dataset run (`cond|neumann --dataset`): the groups /heads/<k>/neumann and
// /heads/<k>/<matrix>/cond in head order, as {kind, group}; and their page (one section per group,
// titled with the head's label from /dataset_heads).
std::vector<std::pair<std::string, std::string>> dataset_groups(const H5Reader& r);
Page dataset_page(const H5Reader& r, const std::string& kind);
Page fidelity_page(const H5Reader& r);

}  // namespace attnspec
