// The one home of the check-record schema (reports/SCHEMA.md, "check records"): writers for a
// CheckResult, a CheckRun and a replayable instance file. CPU only.
#pragma once
#include <string>

#include "attnspec/base/check.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/io/provenance.hpp"

namespace attnspec {

// Write one check run as a group (layout in reports/SCHEMA.md).
void write_check_run(H5Group& parent, const CheckRun& run);
void write_check_result(H5Group& g, const CheckResult& r);

// A replayable instance file: root attributes kind = "attnspec-instance" and check, plus one
// record (write_check_result) in the group /record, written atomically. `attnspec verify CHECK --instance F` replays it.
void write_instance_file(const std::string& path, const CheckResult& r, const Provenance& prov);

}  // namespace attnspec
