// libFuzzer target: the byte image verify --mpi's ranks exchange (proofs/instance_spread.hpp,
// decode_owned_slots). The input is one rank's message, decoded into a batch of 8 slots of which
// slot 0 is this rank's own. Oracle (support/fuzz_support.hpp): decoding returns or throws
// attnspec::Error with a documented code; a corrupt length must be refused before it allocates
// (the 256 MiB budget and -rss_limit_mb catch one that is not). Then a round trip: the decoded
// slots, encoded again, decode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnspec/proofs/instance_spread.hpp"
#include "fuzz_support.hpp"

using namespace attnspec;
using attnspec::proofs::InstanceSpread;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool ready = (fuzz::init_common(), true);
    (void)ready;
    const std::string msg(reinterpret_cast<const char*>(data), size);
    std::vector<InstanceSpread::Slot> slots(8);
    slots[0].owned = true;
    bool decoded = false;
    fuzz::expect_documented("decode_owned_slots", [&] {
        proofs::decode_owned_slots(msg, slots);
        decoded = true;
    });
    if (!decoded) return 0;
    for (auto& s : slots) s.owned = !s.owned;  // now this rank sends what it received
    const std::string again = proofs::encode_owned_slots(slots);
    std::vector<InstanceSpread::Slot> back(8);
    back[0].owned = true;
    proofs::decode_owned_slots(again, back);
    for (auto& s : back) s.owned = !s.owned;
    if (proofs::encode_owned_slots(back) != again) {
        std::fprintf(stderr, "attnspec fuzz: exchange round trip changed the bytes\n");
        std::abort();
    }
    return 0;
}
