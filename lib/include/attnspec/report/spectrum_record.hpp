// Writers of an OperatorSpectrum (spectral/operator_spectrum.hpp): an HDF5 group and the members
// of an open JSON object. Layout: reports/SCHEMA.md, spectral records. CPU only.
#pragma once
#include "attnspec/base/json.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"

namespace attnspec {

void write_operator_spectrum(H5Group& g, const OperatorSpectrum& s);
void write_operator_spectrum(JsonWriter& j, const OperatorSpectrum& s);  // inside an open object

}  // namespace attnspec
