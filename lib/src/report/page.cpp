#include "attnspec/report/page.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "attnspec/base/format.hpp"

namespace attnspec {

PageTable& PageTable::text(const std::string& name, std::vector<std::string> cells) {
    names.push_back(name), right.push_back(false), cols.push_back(std::move(cells));
    return *this;
}

PageTable& PageTable::numbers(const std::string& name, const std::vector<double>& v,
                              int max_digits) {
    names.push_back(name), right.push_back(true), cols.push_back(format_column(v, 3, max_digits));
    return *this;
}

PageTable& PageTable::enclosed(const std::string& name, const std::vector<double>& v,
                               const std::vector<double>& lo, const std::vector<double>& hi) {
    const int p = column_digits(v);
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < v.size(); ++i)
        cells.push_back(
            format_cell(v[i], std::min(p, std::max(2, supported_digits(lo[i], hi[i])))));
    names.push_back(name), right.push_back(true), cols.push_back(std::move(cells));
    return *this;
}

PageTable& PageTable::intervals(const std::string& name, const std::vector<double>& lo,
                                const std::vector<double>& hi) {
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < lo.size(); ++i) {
        const int p = enclosure_digits(lo[i], hi[i]);
        cells.push_back("[" + format_number(lo[i], p) + ", " + format_number(hi[i], p) + "]");
    }
    names.push_back(name), right.push_back(true), cols.push_back(std::move(cells));
    return *this;
}

PageTable& PageTable::durations(const std::string& name, const std::vector<double>& seconds) {
    std::vector<std::string> cells;
    cells.reserve(seconds.size());
    for (double s : seconds) cells.push_back(format_duration(s));
    names.push_back(name), right.push_back(true), cols.push_back(std::move(cells));
    return *this;
}

PageSection& PageSection::para(std::string t) {
    blocks.push_back({PageBlock::Paragraph, std::move(t), {}});
    return *this;
}
PageSection& PageSection::table(PageTable t) {
    blocks.push_back({PageBlock::Table, "", std::move(t)});
    return *this;
}
PageSection& PageSection::code(std::string t) {
    blocks.push_back({PageBlock::Code, std::move(t), {}});
    return *this;
}

namespace {
// A Markdown table cell: '|' would end the cell.
std::string cell(const std::string& t) {
    std::string out;
    for (char c : t) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

// Text inside emphasis or alt text (captions, conventions): brackets and asterisks would end the
// alt text or the emphasis.
std::string escaped(const std::string& t) {
    std::string out;
    for (char c : t)
        out += c == '[' || c == ']' || c == '*' ? std::string("\\") + c : std::string(1, c);
    return out;
}

void markdown_table(std::ostream& os, const PageTable& t) {
    if (!t.convention.empty()) os << "*Convention: " << escaped(t.convention) << ".*\n\n";
    os << "|";
    for (const auto& n : t.names) os << " " << cell(n) << " |";
    os << "\n|";
    for (bool r : t.right) os << (r ? "---:|" : "---|");
    os << "\n";
    for (std::size_t i = 0; i < t.rows(); ++i) {
        os << "|";
        for (const auto& c : t.cols) os << " " << cell(c[i]) << " |";
        os << "\n";
    }
    os << "\n";
}

void markdown_figures(std::ostream& os, const std::vector<PageFigure>& figs,
                      const std::string& section, const std::string& dir) {
    for (const auto& f : figs)
        if (f.section == section)
            os << "![" << escaped(f.caption) << "](" << dir << "/" << f.png << ")\n\n*Figure "
               << f.id << ": " << escaped(f.caption) << "* ([SVG](" << dir << "/" << f.svg
               << "))\n\n";
}

// Display width of UTF-8 text (continuation bytes do not count).
std::size_t width(const std::string& s) {
    return std::size_t(
        std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

void text_table(std::ostream& os, const PageTable& t) {
    if (!t.convention.empty()) os << "  convention: " << t.convention << "\n";
    std::vector<std::size_t> w;
    for (std::size_t c = 0; c < t.cols.size(); ++c) {
        std::size_t m = width(t.names[c]);
        for (const auto& x : t.cols[c]) m = std::max(m, width(x));
        w.push_back(m);
    }
    auto row = [&](auto get) {
        os << " ";
        for (std::size_t c = 0; c < t.cols.size(); ++c) {
            const std::string x = get(c);
            const std::string pad(w[c] - width(x), ' ');
            os << " " << (t.right[c] ? pad + x : x + pad);
        }
        os << "\n";
    };
    row([&](std::size_t c) { return t.names[c]; });
    for (std::size_t i = 0; i < t.rows(); ++i) row([&](std::size_t c) { return t.cols[c][i]; });
}
}  // namespace

std::string page_markdown(const Page& p, const std::vector<PageFigure>& figures,
                          const std::string& dir) {
    std::ostringstream os;
    os << "# attnspec " << p.kind << " report\n\n";
    for (const auto& h : p.header) os << h << "\n\n";
    os << "## Summary\n\n";
    for (const auto& s : p.summary) os << "- " << s << "\n";
    os << "\n";
    markdown_figures(os, figures, "summary", dir);
    std::set<std::string> placed{"summary"};
    for (const auto& s : p.sections) {
        os << "## " << s.title << "\n\n";
        for (const auto& b : s.blocks) {
            if (b.kind == PageBlock::Paragraph) os << b.text << "\n\n";
            if (b.kind == PageBlock::Code) os << "```\n" << b.text << "```\n\n";
            if (b.kind == PageBlock::Table) markdown_table(os, b.table);
        }
        markdown_figures(os, figures, s.id, dir);
        placed.insert(s.id);
    }
    bool other = false;
    for (const auto& f : figures) {
        if (placed.count(f.section)) continue;
        if (!other) os << "## Other figures\n\n";
        other = true;
        markdown_figures(os, {f}, f.section, dir);
    }
    os << "## Provenance\n\n| key | value |\n|---|---|\n";
    for (const auto& [k, v] : p.provenance) os << "| " << k << " | " << cell(v) << " |\n";
    return os.str();
}

std::string page_text(const Page& p) {
    std::ostringstream os;
    os << p.kind << " report\n";
    for (const auto& s : p.summary) os << "  " << s << "\n";
    for (const auto& s : p.sections) {
        os << "\n" << s.title << "\n";
        for (const auto& b : s.blocks) {
            if (b.kind == PageBlock::Paragraph) os << "  " << b.text << "\n";
            if (b.kind == PageBlock::Code) os << b.text;
            if (b.kind == PageBlock::Table) text_table(os, b.table);
        }
    }
    return os.str();
}

}  // namespace attnspec
