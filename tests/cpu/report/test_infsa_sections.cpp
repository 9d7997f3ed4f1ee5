// report/infsa_sections: the /neumann and /fidelity report sections read back equal to the result
// structs they were written from (bit for bit), and their JSON forms carry the documented keys in
// order.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/report/infsa_sections.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {

// True when every key of `keys` occurs in `s` as a JSON key, in this order.
bool keys_in_order(const std::string& s, std::initializer_list<const char*> keys) {
    std::size_t at = 0;
    for (const char* k : keys) {
        at = s.find("\"" + std::string(k) + "\":", at);
        if (at == std::string::npos) return false;
    }
    return true;
}

}  // namespace

TEST_CASE("write_neumann_section / _json: what was computed is what is stored", "[io][infsa]") {
    Eigen::MatrixXd Q, K;
    draw_family("gaussian", 14, 4, 0, 2, Q, K);
    const Affinity af = affinity(Q, K);
    NeumannAnalysisOptions opt;
    opt.orders = {1, 5};
    const Eigen::MatrixXd V = Eigen::MatrixXd::Ones(14, 2);
    const NeumannAnalysis a = analyze_neumann(af.A_hat, opt, V);
    const NeumannSource src{"generated:test", "relu", 1e-6, af.frob_plus};

    const std::string path = attnspec::test::temp_dir() + "/n.h5";
    {
        ReportWriter w(path, Provenance{"test", 1, {}});
        write_neumann_section(w.root(), a, src);
        w.commit();
    }
    const H5Reader rd(path);
    CHECK(rd.attr_string("neumann", "source") == "generated:test");
    CHECK(rd.attr_double("neumann", "frob_plus") == af.frob_plus);
    CHECK(rd.attr_double("neumann", "rho_hi") == a.centralities.left.rho_enc.hi);
    CHECK(rd.attr_double("neumann/invariants", "residual") == a.invariants.residual);
    CHECK(rd.vector("neumann/truncation/error") ==
          std::vector<double>{a.truncation[0].error, a.truncation[1].error});
    CHECK(rd.attr_double("neumann/truncation", "K_for_target") == a.K_for_target);
    CHECK(rd.matrix("neumann/centralities/katz_in") == Eigen::MatrixXd(a.centralities.katz_in));
    CHECK(rd.matrix("neumann/closure_times_V") == a.closure_times_V);

    std::ostringstream os;
    JsonWriter j(os);
    j.begin_object();
    write_neumann_json(j, a, src);
    j.end_object();
    j.finish();
    CHECK(keys_in_order(os.str(), {"source", "N", "gamma", "eps", "frobenius", "norm2", "rho",
                                   "invariants", "truncation", "holds", "target", "K_for_target",
                                   "centralities", "closure_times_V_norm"}));
}

TEST_CASE("write_fidelity_section / _json: one row per record, summaries per group",
          "[io][infsa]") {
    FidelitySpec spec;
    spec.families = {"gaussian"};
    spec.Ns = {12};
    spec.d_h = 4;
    spec.draws = 2;
    spec.matrix_free = true;
    const FidelityTable t = fidelity_table(spec);

    const std::string path = attnspec::test::temp_dir() + "/f.h5";
    {
        ReportWriter w(path, Provenance{"test", 1, {}});
        write_fidelity_section(w.root(), t, spec);
        w.commit();
    }
    const H5Reader rd(path);
    CHECK(rd.attr_string("fidelity", "mode") == "matrix-free");
    CHECK(rd.strings("fidelity/family") == std::vector<std::string>{"gaussian", "gaussian"});
    CHECK(rd.vector("fidelity/cos_left") ==
          std::vector<double>{t.records[0].f.cos_left, t.records[1].f.cos_left});
    const auto katz = rd.vector("fidelity/cos_katz_in");  // NaN in matrix-free mode
    CHECK(std::isnan(katz[0]));
    // Stored as int64 (the seed's bits; seeds >= 2^63 read back negative, as before the split).
    CHECK(rd.vector("fidelity/seed")[1] == double(std::int64_t(t.records[1].seed)));

    std::ostringstream os;
    JsonWriter j(os);
    j.begin_object();
    write_fidelity_json(j, t, spec);
    j.end_object();
    j.finish();
    CHECK(keys_in_order(
        os.str(), {"mode", "gamma", "eps", "mu", "d_h", "summary", "count", "cos_left", "median",
                   "records", "seed", "rho_hat", "perron_converged", "perron_vec_error"}));
}
