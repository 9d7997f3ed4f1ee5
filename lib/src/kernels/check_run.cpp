// Element lists as JSON (kernels/check_run.hpp).
#include "attnspec/kernels/check_run.hpp"

#include "attnspec/base/json.hpp"

namespace attnspec::kernels {

void json_elements(JsonWriter& j, const char* key, const std::vector<ElementReport>& list) {
    j.key(key).begin_array();
    for (const ElementReport& e : list) {
        j.begin_object().key("index").begin_array();
        for (std::int64_t i : e.index) j.value(i);
        j.end_array().kv("got", e.got).kv("reference", e.reference).kv("error", e.error);
        j.kv("bound", e.bound).kv("allowed", e.allowed).kv("baseline", e.baseline).end_object();
    }
    j.end_array();
}

}  // namespace attnspec::kernels
