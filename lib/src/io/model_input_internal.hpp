// Private helpers of the named-dataset code (lib/src/io/model_catalogue.cpp, model_input.cpp):
// the paths of the model layout (io/model_input.hpp) and the hint that ends its error messages.
#pragma once
#include <string>

namespace attnspec::model_detail {

inline const char* kModelHint = "(see reports/SCHEMA.md, model input files)";

inline std::string layer_path(int l) { return "/layers/" + std::to_string(l); }
inline std::string head_path(int l, int h) { return layer_path(l) + "/heads/" + std::to_string(h); }
inline std::string input_path(int l, int s) {
    return layer_path(l) + "/inputs/" + std::to_string(s);
}

}  // namespace attnspec::model_detail
