// Name tables (base/enum_names.hpp) and errors that speak in parameters (base/errors.hpp): one
// table gives both directions, unknown names list the expected ones, and every refusal that a
// parameter controls carries that parameter's name (never a CLI flag) for the CLI to map.
#include <cmath>
#include <new>
#include <stdexcept>
#include <string>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/corrections.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"
#include "attnspec/spectral/svd.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::error_of;

namespace {

enum class Fruit { apple, pear, fig };
constexpr EnumName<Fruit> kFruit[] = {
    {Fruit::apple, "apple"}, {Fruit::pear, "pear", "Pyrus"}, {Fruit::fig, "fig"}};

}  // namespace

TEST_CASE("enum name tables: both directions, labels, and the expected names on a miss", "[base]") {
    CHECK(std::string(enum_name(Fruit::pear, kFruit)) == "pear");
    CHECK(std::string(enum_label(Fruit::pear, kFruit)) == "Pyrus");
    CHECK(std::string(enum_label(Fruit::fig, kFruit)) == "fig");  // no label: the name
    CHECK(std::string(enum_name(static_cast<Fruit>(7), kFruit)) == "?");
    for (const auto& e : kFruit) CHECK(enum_from_name(e.name, kFruit, "fruit") == e.value);
    const Error e = error_of([] { enum_from_name("kiwi", kFruit, "fruit", "fruit_kind"); });
    CHECK(std::string(e.what()) == "unknown fruit 'kiwi' (expected apple, pear or fig)");
    CHECK(e.parameter() == "fruit_kind");
    CHECK(e.code() == ExitCode::Usage);
}

TEST_CASE("library enums round-trip through their tables", "[base]") {
    for (int i = 0; i < 4; ++i) {
        const Verdict v = static_cast<Verdict>(i);
        CHECK(verdict_from_string(to_string(v)) == v);
    }
    CHECK(error_of([] { verdict_from_string("maybe"); }).code() == ExitCode::DataError);
    CHECK(std::string(to_string(Relation::le)) == "<=");
    CHECK(std::string(to_string(Relation::eq)) == "==");
    for (KappaConvention c : {KappaConvention::strict, KappaConvention::nz})
        CHECK(kappa_convention_from_string(to_string(c)) == c);
    for (LargeSvdMode m : {LargeSvdMode::full, LargeSvdMode::extremal, LargeSvdMode::auto_select})
        CHECK(large_svd_mode_from_string(to_string(m)) == m);
    // SvdMethod parses by option name and reports the backend.
    CHECK(svd_method_from_string("jacobi") == SvdMethod::jacobi);
    CHECK(std::string(to_string(SvdMethod::jacobi)) == "eigen-jacobi");
    CHECK(std::string(to_string(SvdMethod::gejsv)) == "lapack-dgejsv");
    CHECK(std::string(to_string(SvdMethod::auto_select)) == "auto");
    const Error e = error_of([] { svd_method_from_string("qr"); });
    CHECK(std::string(e.what()) ==
          "unknown SVD method 'qr' (expected auto, jacobi, bdc, gesdd or gejsv)");
    CHECK(e.parameter() == "svd_method");
    CHECK(error_of([] { large_svd_mode_from_string("some"); }).parameter() == "large_svd_mode");
    CHECK(error_of([] { kappa_convention_from_string("x"); }).parameter() == "kappa_convention");
    // Corrections: none/svd/lambda:<v> parse, describe inverts parse, errors name the parameter.
    for (const char* t : {"none", "svd", "lambda:2.5"})
        CHECK(CorrectionSpec::parse(t).describe() == t);
    CorrectionSpec given;
    given.kind = CorrectionKind::given;
    CHECK(given.describe() == "given");
    for (const char* bad : {"foo", "given", "lambda", "lambda:-1", "lambda:"}) {
        const Error c = error_of([bad] { CorrectionSpec::parse(bad); });
        CHECK(c.code() == ExitCode::Usage);
        CHECK(c.parameter() == "correction");
        CHECK(std::string(c.what()).find("--") == std::string::npos);
    }
}

TEST_CASE("errors name parameters and values, never CLI flags", "[base]") {
    const Error a = error_of([] { check_allocation(3.0 * (1 << 20), 1 << 20, "X", "max_bytes"); });
    CHECK(std::string(a.what()) == "X would need 3.0 MiB, above the limit max_bytes = 1.0 MiB");
    CHECK(a.parameter() == "max_bytes");
    CHECK(a.code() == ExitCode::DataError);
    const Error b = error_of([] { check_allocation(2048, 1024, "Y"); });
    CHECK(std::string(b.what()) == "Y would need 2.0 KiB, above the limit of 1.0 KiB");
    CHECK(b.parameter().empty());
    CHECK_NOTHROW(check_allocation(1024, 1024, "Z"));
    CHECK(error_of([] { fail_usage("m", "gamma"); }).parameter() == "gamma");
    CHECK(error_of([] { fail_data("m"); }).code() == ExitCode::DataError);
    CHECK(value_text(1.5) == "1.5");
    CHECK(value_text(1e-30) == "1e-30");
    const SvdResult s = svd(Eigen::MatrixXd::Identity(3, 3));
    const Error r = error_of([&] { kappa(s, 3, 3, KappaConvention::nz, 1.5); });
    CHECK(r.parameter() == "rtol");
    CHECK(std::string(r.what()).find("rtol = 1.5") != std::string::npos);
    CHECK(error_of([] { lambda_correction(2, 2, -1.0); }).parameter() == "lambda");
}

TEST_CASE("u and gamma_n: one definition, the textbook values", "[base]") {
    CHECK(kUnitRoundoff == std::ldexp(1.0, -53));
    CHECK(test::kU == kUnitRoundoff);
    CHECK(gamma_n(3) == 3 * kUnitRoundoff / (1 - 3 * kUnitRoundoff));
    CHECK(std::isinf(gamma_n(1 / kUnitRoundoff)));
}

TEST_CASE("summarize_exception maps exceptions to main()'s exit codes and messages", "[base]") {
    const auto of = [](auto&& thrower) {
        try {
            thrower();
        } catch (...) {
            return summarize_exception(std::current_exception());
        }
        return ExceptionSummary{};
    };
    const ExceptionSummary e = of([] { throw Error(ExitCode::DataError, "shape 3x4"); });
    CHECK(e.code == static_cast<int>(ExitCode::DataError));
    CHECK(e.message == "shape 3x4");
    const ExceptionSummary m = of([] { throw std::bad_alloc(); });
    CHECK(m.code == static_cast<int>(ExitCode::OutOfMemory));
    CHECK(m.message == "out of memory");
    const ExceptionSummary o = of([] { throw std::runtime_error("boom"); });
    CHECK(o.code == static_cast<int>(ExitCode::Internal));
    CHECK(o.message == "boom");
    CHECK(of([] { throw 42; }).code == static_cast<int>(ExitCode::Internal));
}
