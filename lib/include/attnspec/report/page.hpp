// A rendered report page, independent of the report's kind: a title, a summary a reader can act
// on, sections (id, title, paragraphs, tables with their convention line, preformatted blocks) and
// the provenance. report/kinds.cpp builds one per report kind; this file writes it as Markdown
// (`report render`, with the figures of figures.tsv placed in their sections) or as text
// (`report show`). CPU only.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace attnspec {

// One table: a convention line said above it, columns of cells (numbers already formatted for
// reading: format_column, format_duration).
struct PageTable {
    std::string convention;  // e.g. "kappa strict (sigma_max/sigma_min), s = 1"
    std::vector<std::string> names;
    std::vector<bool> right;                     // right-aligned (numbers)
    std::vector<std::vector<std::string>> cols;  // cols[c][row]
    PageTable& text(const std::string& name, std::vector<std::string> cells);
    // A numeric column with column_digits (3 .. max_digits significant digits). The default cap,
    // 9, is what a stored double result supports across machines: scripts/check-reference.sh
    // accepts a relative 1e-9 between CPUs whose BLAS kernels round differently.
    PageTable& numbers(const std::string& name, const std::vector<double>& v, int max_digits = 9);
    // Values with enclosures [lo, hi]: the column's digits, but each cell at most what its own
    // enclosure supports (supported_digits, at least 2).
    PageTable& enclosed(const std::string& name, const std::vector<double>& v,
                        const std::vector<double>& lo, const std::vector<double>& hi);
    // Enclosures as "[lo, hi]", each with the digits at which its ends differ (enclosure_digits).
    PageTable& intervals(const std::string& name, const std::vector<double>& lo,
                         const std::vector<double>& hi);
    PageTable& durations(const std::string& name, const std::vector<double>& seconds);
    std::size_t rows() const { return cols.empty() ? 0 : cols[0].size(); }
};

// A block of a section: a paragraph (Markdown text), a table, or a preformatted block.
struct PageBlock {
    enum Kind { Paragraph, Table, Code } kind = Paragraph;
    std::string text;
    PageTable table;
};

struct PageSection {
    std::string id;  // figures.tsv `section` (e.g. "verify/thm3.4", "neumann")
    std::string title;
    std::vector<PageBlock> blocks;
    PageSection& para(std::string t);
    PageSection& table(PageTable t);
    PageSection& code(std::string t);
};

struct Page {
    std::string kind;                  // verify, jacobian, cond, neumann, fidelity
    std::vector<std::string> header;   // paragraphs before the summary
    std::vector<std::string> summary;  // bullet lines: what was tested, counts, what to look at
    std::vector<PageSection> sections;
    std::vector<std::pair<std::string, std::string>> provenance;
};

// One row of figures.tsv (paths relative to the figures directory).
struct PageFigure {
    std::string id, section, svg, png, caption;
};

// Markdown: "# attnspec <kind> report", header, "## Summary", sections, "## Provenance". Each
// figure goes after the blocks of its section (`summary`: after the summary bullets; a section
// id the page does not have: "## Other figures"), as `![caption](<dir>/png)` with a link to the
// SVG; `dir` is the figures directory relative to the page.
std::string page_markdown(const Page& p, const std::vector<PageFigure>& figures = {},
                          const std::string& dir = "figures");
// Text for `report show`: summary, sections with aligned tables (no provenance).
std::string page_text(const Page& p);

}  // namespace attnspec
