// "kappa_strict = v in [lo, hi] (method)" with the digits the enclosure supports
// (base/format.hpp): the human form of Kappa::describe every command prints. CPU only.
#pragma once
#include <string>

#include "attnspec/spectral/svd.hpp"

namespace attnspec {

std::string kappa_text(const Kappa& k);

}  // namespace attnspec
