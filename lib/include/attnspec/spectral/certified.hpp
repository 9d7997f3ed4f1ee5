// The certified sigma_min bounds, all four parts (spectral/certify/): the engine's policy (mode and
// method), the plain Rump test (§6), the deflated certificate (§7) and the double-double one (§8)
// of proofs/spectral_enclosure.md. Include the part you use; this header is for callers that use
// several. CPU only.
#pragma once
#include "attnspec/spectral/certify/deflated.hpp"
#include "attnspec/spectral/certify/double_double.hpp"
#include "attnspec/spectral/certify/plain.hpp"
#include "attnspec/spectral/certify/policy.hpp"
