// The human form of a condition number (report/kappa_text.hpp).
#include "attnspec/report/kappa_text.hpp"

#include "attnspec/base/format.hpp"

namespace attnspec {

std::string kappa_text(const Kappa& k) {
    std::string t = std::string("kappa_") + to_string(k.convention) + " = " +
                    format_enclosure(k.value, k.enclosure.lo, k.enclosure.hi) + " (" + k.method;
    if (k.convention == KappaConvention::nz) t += ", rtol=" + format_number(k.rtol, 3);
    return t + ")";
}

}  // namespace attnspec
