// `report render FILE --out DIR`: the page directory DIR/report.md + DIR/figures/, the figures made
// by the figures script (scripts/render_figures.py; contract in reports/SCHEMA.md, "Rendered
// report directory"), the whole directory written atomically. CPU only.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attnspec/report/page.hpp"

namespace attnspec {

// The interpreter and script the figures are made with: $ATTNSPEC_PYTHON or /usr/bin/python3;
// $ATTNSPEC_FIGURES_SCRIPT, else $ATTNSPEC_RENDER_SCRIPT (the older name), else the copy installed
// beside the running executable (<exe>/../share/attnspec/render_figures.py), else the source
// tree's scripts/render_figures.py (ATTNSPEC_SOURCE_DIR, set where this file is compiled).
std::string figures_python();
std::string figures_script();
// $ATTNSPEC_RENDER_TIMEOUT seconds (default 600): the figures script is killed (its process
// group) past it and the render exits 70. Usage (64) when it is not a positive number.
double figures_timeout_seconds();

// figures.tsv: header `id<TAB>section<TAB>svg<TAB>png<TAB>caption`, one row per figure, paths
// relative to the figures directory `dir` (each must exist there; no "..", no absolute path).
// Errors: Internal (70) naming the line: the script broke its contract.
std::vector<PageFigure> read_figures_manifest(const std::string& dir);

// Checks a page directory target before any work: Usage (64) when it is the input file;
// CantCreate (73) when it exists and is not a directory, or is a non-empty directory without a
// report.md (never replace a directory that is not a rendered page), or its parent directory does
// not exist.
void check_page_dir_target(const std::string& dir, const std::string& input);

// Where write_page_dir says which command makes the figures (the CLI: a log line on stderr).
using PageLog = std::function<void(const std::string&)>;

// Removes temps of killed renders of DIR (`.<name>.tmp.<pid>.*` whose process is gone), then
// builds DIR under a temp name beside it: with `figures`, runs the script on `report` into
// figures/ (its command line to `note` first; the script's output and progress go to stderr) and
// reads the manifest; then report.md (page_markdown of `page` with the figures); then swaps it in
// for DIR (an existing DIR is replaced only now). On any failure the temp is removed and DIR is
// untouched. Errors: the script's 65 (malformed/old report) as DataError, 69 (matplotlib or h5py
// missing) as NoDevice, a missing script as NoInput (66), any other failure as Internal (70);
// CantCreate / IoError. Returns the number of figures.
std::size_t write_page_dir(const std::string& report, const std::string& dir, const Page& page,
                           bool figures, const PageLog& note = {});

}  // namespace attnspec
