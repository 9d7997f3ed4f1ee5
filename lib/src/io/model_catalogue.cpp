// Named datasets: the selector and the catalogue (io/model_input.hpp); the loader is in
// model_input.cpp.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/io/model_input.hpp"
#include "model_input_internal.hpp"

#ifndef ATTNSPEC_DEFAULT_DATASETS
#define ATTNSPEC_DEFAULT_DATASETS "datasets/embedded"
#endif

namespace attnspec {

namespace fs = std::filesystem;
using namespace model_detail;

namespace {

bool all_digits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::optional<int> parse_part(const std::string& text, const std::string& part, const char* what) {
    if (part == "*") return std::nullopt;
    if (!all_digits(part) || part.size() > 6)
        fail_usage("--dataset '" + text + "': " + what + " must be a non-negative integer or '*'" +
                   (part.empty() ? " (it is empty)" : " (got '" + part + "')"));
    return std::stoi(part);
}

std::string part_text(const std::optional<int>& p) { return p ? std::to_string(*p) : "*"; }

// The number of children of `group`, which must be named 0, 1, ..., n-1 (no leading zeros).
int indexed_count(const H5Reader& r, const std::string& group) {
    if (!r.is_group(group)) fail_data(r.path() + ": no group " + group + " " + kModelHint);
    const std::vector<std::string> names = r.children(group);
    for (const std::string& n : names)
        if (!all_digits(n) || n.size() > 6 || (n.size() > 1 && n[0] == '0') ||
            std::stoul(n) >= names.size())
            fail_data(r.path() + ": " + group + " holds '" + n +
                      "'; its members must be named 0, " + "1, ..., " +
                      std::to_string(static_cast<long>(names.size()) - 1) + " " + kModelHint);
    return static_cast<int>(names.size());
}

std::string attr_or_empty(const H5Reader& r, const std::string& name) {
    return r.has_attr("/", name) ? r.attr_as_text("/", name) : std::string();
}

std::string join_types(std::string a, const std::string& b) {
    if (b.empty() || a == b) return a;
    return a < b ? a + "," + b : b + "," + a;
}

void read_sentences(const H5Reader& r, DatasetInfo& info) {
    if (!r.exists("/sentences/n_tokens")) {
        if (info.has_inputs) info.sentences = indexed_count(r, "/layers/0/inputs");
        return;
    }
    if (r.shape("/sentences/n_tokens").size() != 1)
        fail_data(info.path + ": /sentences/n_tokens must be one-dimensional (S,)");
    for (double n : r.vector("/sentences/n_tokens")) {
        if (!(n >= 1) || n != std::floor(n) || n > 1e9)
            fail_data(info.path + ": /sentences/n_tokens holds " + value_text(n) +
                      ", not a token count");
        info.n_tokens.push_back(static_cast<Eigen::Index>(n));
    }
    info.sentences = static_cast<int>(info.n_tokens.size());
    if (!r.exists("/sentences/text")) return;
    info.sentence_text = r.strings("/sentences/text");
    if (info.sentence_text.size() != info.n_tokens.size())
        fail_data(info.path + ": /sentences/text holds " +
                  std::to_string(info.sentence_text.size()) + " sentences, /sentences/n_tokens " +
                  std::to_string(info.n_tokens.size()));
}

void model_info(const H5Reader& r, DatasetInfo& info) {
    const std::string kind = attr_or_empty(r, "kind");
    if (kind != "attnspec-input")
        fail_data(info.path + ": root attribute kind is '" + kind +
                  "', expected 'attnspec-input' " + kModelHint);
    info.layers = indexed_count(r, "/layers");
    if (info.layers == 0) fail_data(info.path + ": /layers holds no layer " + kModelHint);
    info.heads = indexed_count(r, "/layers/0/heads");
    if (info.heads == 0) fail_data(info.path + ": /layers/0/heads holds no head " + kModelHint);
    const std::vector<hsize_t> shape = r.shape(head_path(0, 0) + "/W_Q");
    if (shape.size() != 2)
        fail_data(info.path + ": " + head_path(0, 0) + "/W_Q must be two-dimensional (D, d)");
    info.D = static_cast<Eigen::Index>(shape[0]);
    info.d = static_cast<Eigen::Index>(shape[1]);
    if (!r.has_attr("/", "s"))
        fail_data(info.path + ": no root attribute s (the logit scale) " + kModelHint);
    info.s = r.attr_double("/", "s");
    if (!(info.s > 0) || !std::isfinite(info.s))
        fail_data(info.path + ": root attribute s = " + value_text(info.s) + " must be positive");
    info.model = attr_or_empty(r, "model");
    info.origin = attr_or_empty(r, "origin");
    info.licence = attr_or_empty(r, "licence");
    info.regenerate = attr_or_empty(r, "regenerate");
    info.validation = attr_or_empty(r, "validation");
    info.has_inputs = r.exists("/layers/0/inputs");
    read_sentences(r, info);
    info.dtype = r.dtype(head_path(0, 0) + "/W_Q");
    if (info.has_inputs && info.sentences > 0 && r.exists(input_path(0, 0)))
        info.dtype = join_types(info.dtype, r.dtype(input_path(0, 0)));
}

void heads_info(const H5Reader& r, DatasetInfo& info) {
    const bool grouped = r.exists("/heads");
    const std::vector<std::string> names =
        grouped ? r.children("/heads") : std::vector<std::string>{""};
    if (names.empty()) fail_data(info.path + ": group /heads holds no head");
    const std::string w = grouped ? "/heads/" + names[0] + "/W_Q" : "/W_Q";
    const std::vector<hsize_t> shape = r.shape(w);
    if (shape.size() != 2) fail_data(info.path + ": " + w + " must be two-dimensional (D, d)");
    info.layers = 1;
    info.sentences = 1;
    info.heads = static_cast<int>(names.size());
    info.D = static_cast<Eigen::Index>(shape[0]);
    info.d = static_cast<Eigen::Index>(shape[1]);
    info.s = r.has_attr("/", "s") ? r.attr_double("/", "s") : 1.0;
    info.dtype = r.dtype(w);
    info.has_inputs = true;
}

std::vector<fs::path> dataset_files() {
    const std::string dir = dataset_directory();
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw Error(ExitCode::NoInput, "dataset directory '" + dir +
                                           "' is not a directory (set ATTNSPEC_DATASETS to a "
                                           "directory of .h5 files)");
    if (!fs::is_directory(dir, ec))
        throw Error(ExitCode::NoInput, "dataset directory '" + dir +
                                           "' does not exist (set ATTNSPEC_DATASETS to a " +
                                           "directory of .h5 files)");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".h5" && e.is_regular_file(ec)) files.push_back(e.path());
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.stem() < b.stem(); });
    return files;
}

}  // namespace

DatasetSelector DatasetSelector::parse(const std::string& text) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
        parts.push_back(text.substr(start, colon - start));
    parts.push_back(text.substr(start));
    if (parts.size() > 4)
        fail_usage("--dataset '" + text + "': at most NAME:layer:head:sentence (" +
                   std::to_string(parts.size()) + " parts given)");
    if (parts[0].empty())
        fail_usage("--dataset '" + text +
                   "': the dataset name is empty (see attnspec dataset list)");
    DatasetSelector sel;
    sel.name = parts[0];
    if (parts.size() > 1) sel.layer = parse_part(text, parts[1], "layer");
    if (parts.size() > 2) sel.head = parse_part(text, parts[2], "head");
    if (parts.size() > 3) sel.sentence = parse_part(text, parts[3], "sentence");
    return sel;
}

std::string DatasetSelector::describe() const {
    const std::optional<int> parts[] = {layer, head, sentence};
    int last = -1;
    for (int k = 0; k < 3; ++k)
        if (parts[k]) last = k;
    std::string out = name;
    for (int k = 0; k <= last; ++k) out += ":" + part_text(parts[k]);
    return out;
}

std::string dataset_directory() {
    const char* env = std::getenv("ATTNSPEC_DATASETS");
    return env != nullptr && *env != '\0' ? std::string(env)
                                          : std::string(ATTNSPEC_DEFAULT_DATASETS);
}

DatasetInfo read_dataset_info(const std::string& path) {
    DatasetInfo info;
    info.path = path;
    info.name = fs::path(path).stem().string();
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    info.size_bytes = ec ? 0.0 : static_cast<double>(size);
    const H5Reader r(path);
    info.layout = attr_or_empty(r, "layout");
    if (info.layout.empty()) info.layout = r.exists("/layers") ? "model" : "heads";
    if (info.layout == "model")
        model_info(r, info);
    else if (info.layout == "heads")
        heads_info(r, info);
    else
        fail_data(path + ": root attribute layout is '" + info.layout +
                  "', expected 'model' or 'heads' " + kModelHint);
    info.description = attr_or_empty(r, "description");
    return info;
}

std::vector<DatasetInfo> list_datasets() {
    std::vector<DatasetInfo> out;
    for (const fs::path& p : dataset_files()) {
        if (p.stem().string().find(':') != std::string::npos) {  // --dataset splits on ':'
            DatasetInfo info;
            info.name = p.stem().string();
            info.path = p.string();
            info.problem =
                "the name holds ':', which --dataset reads as NAME:layer:head:sentence;"
                " rename the file to select it";
            out.push_back(info);
            continue;
        }
        try {
            out.push_back(read_dataset_info(p.string()));
        } catch (const Error& e) {
            DatasetInfo info;
            info.name = p.stem().string();
            info.path = p.string();
            info.problem = e.what();
            out.push_back(info);
        }
    }
    return out;
}

DatasetInfo find_dataset(const std::string& name) {
    std::string known;
    for (const fs::path& p : dataset_files()) {
        if (p.stem().string() == name) return read_dataset_info(p.string());
        if (p.stem().string().find(':') == std::string::npos)  // unselectable (list says why)
            known += (known.empty() ? "" : ", ") + p.stem().string();
    }
    throw Error(ExitCode::NoInput, "unknown dataset '" + escape_controls(name) + "' in " +
                                       dataset_directory() +
                                       " (known: " + (known.empty() ? "none" : known) +
                                       "; see attnspec dataset list)");
}

}  // namespace attnspec
