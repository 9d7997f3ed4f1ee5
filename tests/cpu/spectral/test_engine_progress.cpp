// The spectral engine's progress and notices (LargeSvdOptions::progress / ::notice): stages in
// order, counts that rise to their totals, results unchanged by watching, and the auto fallback
// announced only when it happens (a planted rank-deficient operator against a full-rank one).
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attnspec/base/random.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {

struct Recorder {
    std::vector<EngineProgress> events;
    std::vector<std::string> notices;
    LargeSvdOptions attach(LargeSvdOptions o) {
        o.progress = [this](const EngineProgress& p) { events.push_back(p); };
        o.notice = [this](const std::string& m) { notices.push_back(m); };
        return o;
    }
    std::vector<std::string> stages() const {  // in order, each once
        std::vector<std::string> s;
        for (const auto& e : events)
            if (s.empty() || s.back() != e.stage) s.push_back(e.stage);
        return s;
    }
};

}  // namespace

TEST_CASE("engine progress: stages in order, done rises to a sane total", "[engine]") {
    Rng rng(11);
    const Eigen::MatrixXd A = rng.with_spectrum(60, 150, geometric_spectrum(60, 2.0, 1e4));
    DenseOperator op(A);
    LargeSvdOptions o;
    o.mode = LargeSvdMode::full;
    Recorder rec;
    const OperatorSpectrum s = operator_spectrum(op, nullptr, rec.attach(o));
    CHECK(rec.stages() ==
          std::vector<std::string>{"Cholesky", "Lanczos", "eigensolve", "refinement"});
    std::map<std::string, long> last_done;
    for (const auto& e : rec.events) {
        INFO(e.stage << " " << e.done << "/" << e.total << " " << e.unit);
        CHECK(e.done >= 0);
        CHECK(e.done <= e.total);
        CHECK(e.done >= last_done[e.stage]);  // never goes back within a stage
        CHECK(!(e.seconds_left < 0));         // an estimate, or NaN when there is none yet
        last_done[e.stage] = e.done;
    }
    // Every stage ends at its total; totals are those of the stage's unit.
    std::map<std::string, EngineProgress> end;
    for (const auto& e : rec.events) end[e.stage] = e;
    for (const auto& [stage, e] : end) {
        INFO(stage);
        CHECK(e.done == e.total);
        CHECK(e.seconds_left == 0);
    }
    CHECK(end["Cholesky"].total == 100);
    CHECK(std::string(end["Cholesky"].unit) == "%");
    // refinement counts applications of J and J^T: at least both ends' first triplets (2 + 2),
    // at most what its steps allow (power: 2 + 3 per step; PCG: 2 + (4 + 2 per iteration) each)
    CHECK(std::string(end["refinement"].unit) == "products");
    CHECK(end["refinement"].total >= 4);
    CHECK(end["refinement"].total <=
          4 + 3 * o.refine_steps + o.refine_steps * (4 + 2 * o.pcg_max_iter));
    // Lanczos counts products of both ends: more than one restart's worth (ncv = 16); at the end
    // the total is the count itself (an estimate that proved long or short is replaced).
    CHECK(end["Lanczos"].total >= 16);
    CHECK(end["Lanczos"].total <= 4000);  // Spectra's cap: 2000 restarts a side would show here
    CHECK(rec.notices.empty());           // full mode was asked for: no fallback to announce

    // Watching does not change the numbers (bit for bit).
    const OperatorSpectrum quiet = operator_spectrum(op, nullptr, o);
    CHECK(quiet.strict.value == s.strict.value);
    CHECK(quiet.min.enclosure.lo == s.min.enclosure.lo);
    CHECK(quiet.max.enclosure.hi == s.max.enclosure.hi);
}

TEST_CASE("engine notice: the auto fallback to a full eigensolve says so, with an estimate",
          "[engine]") {
    Rng rng(5);
    LargeSvdOptions o;
    o.full_upto = 10;  // auto takes the extremal path for 30 rows
    o.certify.mode =
        CertifyMode::never;  // the fallback's notice alone (a certificate adds its own)
    // Planted: rank 20 < 30 rows, so the extremal path cannot prove full rank.
    const Eigen::MatrixXd A = rng.with_spectrum(30, 70, geometric_spectrum(20, 1.0, 10.0));
    DenseOperator op(A);
    Recorder rec;
    const OperatorSpectrum f = operator_spectrum(op, nullptr, rec.attach(o));
    CHECK(f.mode == "full");
    REQUIRE(rec.notices.size() == 1);
    INFO(rec.notices[0]);
    CHECK(rec.notices[0].find("falling back") != std::string::npos);
    CHECK(rec.notices[0].find("30 x 30") != std::string::npos);
    CHECK(rec.notices[0].find("expect about") != std::string::npos);
    // The fallback runs after the extremal path (refinement) found no proof of full rank.
    CHECK(rec.stages() ==
          std::vector<std::string>{"Cholesky", "Lanczos", "refinement", "eigensolve"});
    // A full-rank operator of the same size stays on the extremal path, silently.
    const Eigen::MatrixXd B = rng.with_spectrum(30, 70, geometric_spectrum(30, 1.0, 10.0));
    DenseOperator bop(B);
    Recorder full;
    const OperatorSpectrum e = operator_spectrum(bop, nullptr, full.attach(o));
    CHECK(e.mode == "extremal");
    CHECK(full.notices.empty());
    for (const auto& ev : full.events) CHECK(ev.stage != "eigensolve");
}
