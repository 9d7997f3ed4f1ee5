// attnspec info and the BLAS kernels (issue 13): it names the core that runs and why, and the
// ATTNSPEC_BLAS_CORE / OPENBLAS_CORETYPE overrides act on the executable.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "attnspec/base/blas_cores.hpp"
#include "test_support.hpp"

using attnspec::test::run_cli;

namespace {
// Sets (or, with nullopt, removes) one environment variable for the scope's lifetime.
class EnvScope {
  public:
    EnvScope(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value)
            setenv(name, value->c_str(), 1);
        else
            unsetenv(name);
    }
    ~EnvScope() {
        if (old_)
            setenv(name_, old_->c_str(), 1);
        else
            unsetenv(name_);
    }
    EnvScope(const EnvScope&) = delete;
    EnvScope& operator=(const EnvScope&) = delete;

  private:
    const char* name_;
    std::optional<std::string> old_;
};

// `attnspec info` with the two variables as given, as key -> value of its "key: value" lines.
std::map<std::string, std::string> info_with(std::optional<std::string> attnspec_core,
                                             std::optional<std::string> openblas_core) {
    EnvScope a("ATTNSPEC_BLAS_CORE", std::move(attnspec_core));
    EnvScope o("OPENBLAS_CORETYPE", std::move(openblas_core));
    const auto r = run_cli("info");
    INFO(r.err);
    REQUIRE(r.code == 0);
    std::map<std::string, std::string> kv;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        const auto at = line.find(": ");
        if (at != std::string::npos) kv[line.substr(0, at)] = line.substr(at + 2);
    }
    return kv;
}
}  // namespace

TEST_CASE("attnspec info names the BLAS core, why, the CPU features and the overrides",
          "[blas][cli]") {
    auto kv = info_with(std::nullopt, std::nullopt);
    INFO(kv["blas"] << " | " << kv["blas_core_reason"]);
    CHECK_FALSE(kv["blas_core"].empty());
    CHECK_FALSE(kv["blas_core_reason"].empty());
    CHECK(kv["cpu"].find("OS enables") != std::string::npos);
    CHECK(kv["blas_override"].find("ATTNSPEC_BLAS_CORE=off") != std::string::npos);
    CHECK(kv["blas_override"].find("OPENBLAS_CORETYPE") != std::string::npos);
    CHECK(std::atoi(kv["blas_threads"].c_str()) >= 1);
    const auto j = run_cli("info --json");
    CHECK(j.out.find("\"blas_core\": \"" + kv["blas_core"] + "\"") != std::string::npos);
    CHECK(j.out.find("\"blas_core_reason\"") != std::string::npos);
}

TEST_CASE("ATTNSPEC_BLAS_CORE=off keeps OpenBLAS's choice, the default takes the best core",
          "[blas][cli]") {
    auto off = info_with("off", std::nullopt);
    auto dflt = info_with(std::nullopt, std::nullopt);
    if (dflt["blas_core"] == "unknown") {
        WARN("not OpenBLAS: attnspec chooses no kernels");
        return;
    }
    INFO("off: " << off["blas_core"] << " (" << off["blas_core_reason"]
                 << "), default: " << dflt["blas_core"] << " (" << dflt["blas_core_reason"] << ")");
    CHECK(off["blas_core"] == off["blas_core_openblas_alone"]);
    CHECK(off["blas_core_reason"].find("ATTNSPEC_BLAS_CORE=off") != std::string::npos);
    CHECK(dflt["blas_core_openblas_alone"] == off["blas_core"]);
    if (attnspec::should_replace_core(off["blas_core"], dflt["blas_core_best_for_cpu"])) {
        // This machine (OpenBLAS 0.3.21 on Emerald Rapids: Prescott alone, Cooperlake chosen).
        CHECK(dflt["blas_core"] == dflt["blas_core_best_for_cpu"]);
        CHECK(dflt["blas_core"] != off["blas_core"]);
        CHECK(dflt["blas_core_reason"].find("chosen by attnspec") != std::string::npos);
    } else {
        CHECK(dflt["blas_core"] == off["blas_core"]);
    }
}

TEST_CASE("ATTNSPEC_BLAS_CORE forces a core, OPENBLAS_CORETYPE wins, a bad name is a usage error",
          "[blas][cli]") {
    auto dflt = info_with(std::nullopt, std::nullopt);
    if (dflt["blas_core"] == "unknown") {
        WARN("not OpenBLAS: attnspec chooses no kernels");
        return;
    }
    auto forced = info_with("prescott", std::nullopt);
    CHECK(forced["blas_core"] == "Prescott");
    CHECK(forced["blas_core_reason"].find("ATTNSPEC_BLAS_CORE=Prescott") != std::string::npos);
    auto user = info_with("off", "Core2");
    CHECK(user["blas_core"] == "Core2");
    CHECK(user["blas_core_reason"] == "set by the user: OPENBLAS_CORETYPE=Core2");
    if (dflt["blas_core_best_for_cpu"] != "SapphireRapids") {
        // Forcing a core the CPU or this OpenBLAS build lacks is refused, not run into SIGILL.
        EnvScope sr("ATTNSPEC_BLAS_CORE", std::string("SapphireRapids"));
        const auto r = run_cli("info");
        CHECK(r.code == 64);
        CHECK(r.err.find("ATTNSPEC_BLAS_CORE = SapphireRapids") != std::string::npos);
    }
    EnvScope bad("ATTNSPEC_BLAS_CORE", std::string("Skylake"));
    const auto r = run_cli("info");
    CHECK(r.code == 64);
    CHECK(r.out.empty());
    CHECK(r.err.find("ATTNSPEC_BLAS_CORE = 'Skylake'") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
