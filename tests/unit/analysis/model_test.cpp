#include "core/error.hpp"
#include "analysis/model.hpp"
#include "core/stats.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

namespace model_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using namespace meshperf::analysis;

namespace {

// Sizes 1 B .. 4 MiB in powers of two.
std::vector<std::uint64_t> pow2_sizes(std::uint64_t lo = 1, std::uint64_t hi = 4u << 20) {
    std::vector<std::uint64_t> v;
    for (std::uint64_t n = lo; n <= hi; n *= 2) v.push_back(n);
    return v;
}

// Latency points t = α + n/β and stream points t = α_s + n/β at every size.
std::vector<model_sample> synthetic(double alpha_s, double beta, std::optional<double> stream_alpha,
                                    const std::vector<std::uint64_t>& sizes, bool latency = true) {
    std::vector<model_sample> v;
    for (auto n : sizes) {
        if (latency) v.push_back({n, alpha_s + static_cast<double>(n) / beta, false, 1});
        if (stream_alpha) v.push_back({n, *stream_alpha + static_cast<double>(n) / beta, true, 1});
    }
    return v;
}

bool rel_close(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::fabs(b); }

// Equal JSON up to floating-point rounding of unit conversions.
bool json_close(const nlohmann::json& a, const nlohmann::json& b) {
    if (a.is_number() && b.is_number()) return rel_close(a.get<double>(), b.get<double>(), 1e-12);
    if (a.type() != b.type() || a.size() != b.size()) return false;
    if (a.is_object()) {
        for (auto it = a.begin(); it != a.end(); ++it)
            if (!b.contains(it.key()) || !json_close(it.value(), b.at(it.key()))) return false;
        return true;
    }
    if (a.is_array()) {
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!json_close(a[i], b[i])) return false;
        return true;
    }
    return a == b;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("exact recovery of alpha and beta from latency points") {
    const double alpha = 2e-6, beta = 12.5e9;  // 2 µs, 100 Gbit/s
    const auto s = synthetic(alpha, beta, std::nullopt, pow2_sizes());
    const auto m = fit_model(s);
    CHECK(rel_close(m.line.alpha_s, alpha, 1e-9));
    CHECK(rel_close(m.line.beta_bytes_per_s, beta, 1e-9));
    CHECK(m.line.alpha_us() == doctest::Approx(2.0));
    CHECK(m.line.beta_gbit_per_s() == doctest::Approx(100.0));
    CHECK(m.line.beta_gbyte_per_s() == doctest::Approx(12.5));
    CHECK(m.line.n_half_bytes() == doctest::Approx(25000.0));
    CHECK(m.line.r_squared == doctest::Approx(1.0));
    CHECK(m.line.worst_rel_residual < 1e-9);
    CHECK_FALSE(m.line.stream_alpha_s.has_value());
    CHECK(m.line.alpha_source == "latency");
    CHECK(m.line.points == s.size());
    CHECK(m.line.min_size_bytes == 1);
    CHECK(m.line.max_size_bytes == 4u << 20);
    CHECK(m.line_fits());
    CHECK_FALSE(m.piecewise.has_value());
    CHECK(m.time_s(1e6) == doctest::Approx(alpha + 1e6 / beta));
}

TEST_CASE("latency and stream points share beta, each with its own intercept") {
    const double alpha = 5e-6, stream_alpha = 0.3e-6, beta = 3e9;
    const auto m = fit_model(synthetic(alpha, beta, stream_alpha, pow2_sizes()));
    CHECK(rel_close(m.line.alpha_s, alpha, 1e-9));
    CHECK(rel_close(m.line.beta_bytes_per_s, beta, 1e-9));
    REQUIRE(m.line.stream_alpha_s.has_value());
    CHECK(rel_close(*m.line.stream_alpha_s, stream_alpha, 1e-7));
    CHECK(m.line.worst_rel_residual < 1e-9);
}

TEST_CASE("bandwidth points only: alpha comes from the streams and says so") {
    const auto m = fit_model(synthetic(0, 1e9, 1e-6, pow2_sizes(64), false));
    CHECK(m.line.alpha_source == "bandwidth");
    CHECK(rel_close(m.line.alpha_s, 1e-6, 1e-9));
    CHECK(rel_close(m.line.beta_bytes_per_s, 1e9, 1e-9));
}

TEST_CASE("noisy data: parameters within tolerance, no piecewise") {
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> noise(-0.03, 0.03);
    auto s = synthetic(3e-6, 10e9, 0.5e-6, pow2_sizes());
    for (auto& p : s) p.time_s *= 1 + noise(rng);
    const auto m = fit_model(s);
    CHECK(rel_close(m.line.alpha_s, 3e-6, 0.05));
    CHECK(rel_close(m.line.beta_bytes_per_s, 10e9, 0.03));
    CHECK(m.line.worst_rel_residual < 0.1);
    CHECK(m.line.r_squared > 0.99);
    CHECK_FALSE(m.piecewise.has_value());
}

TEST_CASE("weights: a heavily weighted point pulls the fit") {
    auto s = synthetic(2e-6, 1e9, std::nullopt, pow2_sizes(1, 1 << 20));
    s.back().time_s *= 1.5;
    auto light = fit_line(s);
    s.back().weight = 1000;
    auto heavy = fit_line(s);
    const double n = static_cast<double>(s.back().size_bytes);
    CHECK(std::fabs(heavy.time_s(n) / s.back().time_s - 1) < std::fabs(light.time_s(n) / s.back().time_s - 1));
}

TEST_CASE("two regimes: the piecewise fit finds the break") {
    // eager below 8 KiB (2 µs, 5 GB/s), rendezvous from 16 KiB (10 µs, 12 GB/s)
    std::vector<model_sample> s;
    for (auto n : pow2_sizes()) {
        const double x = static_cast<double>(n);
        const double t = n <= 8192 ? 2e-6 + x / 5e9 : 10e-6 + x / 12e9;
        s.push_back({n, t, false, 1});
    }
    const auto m = fit_model(s);
    CHECK(m.line.worst_rel_residual > 0.15);
    CHECK_FALSE(m.line_fits());
    REQUIRE(m.piecewise.has_value());
    const auto& p = *m.piecewise;
    CHECK(p.break_after_bytes == 8192);
    CHECK(p.break_before_bytes == 16384);
    CHECK(rel_close(p.below.alpha_s, 2e-6, 1e-6));
    CHECK(rel_close(p.below.beta_bytes_per_s, 5e9, 1e-6));
    CHECK(rel_close(p.above.alpha_s, 10e-6, 1e-6));
    CHECK(rel_close(p.above.beta_bytes_per_s, 12e9, 1e-6));
    CHECK(p.worst_rel_residual < 1e-6);
    CHECK(p.r_squared == doctest::Approx(1.0));
    CHECK(p.below.max_size_bytes == 8192);
    CHECK(p.above.min_size_bytes == 16384);
    // predictions use the right segment
    CHECK(m.time_s(1024) == doctest::Approx(2e-6 + 1024 / 5e9));
    CHECK(m.time_s(1 << 20) == doctest::Approx(10e-6 + (1 << 20) / 12e9));
    CHECK(describe(m).find("break between 8 KiB and 16 KiB") != std::string::npos);
}

TEST_CASE("two regimes with noise still place the break") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> noise(-0.02, 0.02);
    std::vector<model_sample> s;
    for (auto n : pow2_sizes()) {
        const double x = static_cast<double>(n);
        s.push_back({n, (n <= 65536 ? 1e-6 + x / 2e9 : 40e-6 + x / 6e9) * (1 + noise(rng)), false, 1});
        s.push_back({n, (n <= 65536 ? 0.1e-6 + x / 2e9 : 5e-6 + x / 6e9) * (1 + noise(rng)), true, 1});
    }
    const auto m = fit_model(s);
    REQUIRE(m.piecewise.has_value());
    CHECK(m.piecewise->break_after_bytes == 65536);
    CHECK(m.piecewise->break_before_bytes == 131072);
    CHECK(m.piecewise->worst_rel_residual < 0.1);
}

TEST_CASE("a flat lower regime is a segment with unbounded beta") {
    std::vector<model_sample> s;
    for (auto n : pow2_sizes(1, 1 << 20)) s.push_back({n, n <= 256 ? 5e-6 : 50e-6 + n / 1e9, false, 1});
    const auto m = fit_model(s);
    REQUIRE(m.piecewise.has_value());
    CHECK(m.piecewise->break_after_bytes == 256);
    CHECK(std::isinf(m.piecewise->below.beta_bytes_per_s));
    const auto back = model_fit_from_json(to_json(m));
    REQUIRE(back.piecewise.has_value());
    CHECK(std::isinf(back.piecewise->below.beta_bytes_per_s));
    CHECK(to_json(m).dump().find("inf") == std::string::npos);
}

TEST_CASE("degenerate input gives a clear error") {
    std::vector<model_sample> none;
    CHECK_THROWS_WITH_AS(fit_model(none), doctest::Contains("two or more message sizes"), spec_error);
    std::vector<model_sample> one_size{{4096, 5e-6, false, 1}, {4096, 1e-6, true, 1}};
    CHECK_THROWS_WITH_AS(fit_model(one_size), doctest::Contains("two or more message sizes"), spec_error);
    std::vector<model_sample> zero_time{{1, 0, false, 1}, {2, 1e-6, false, 1}};
    CHECK_THROWS_AS(fit_model(zero_time), spec_error);
    std::vector<model_sample> nan_time{{1, std::nan(""), false, 1}, {2, 1e-6, false, 1}};
    CHECK_THROWS_AS(fit_model(nan_time), spec_error);
    std::vector<model_sample> zero_size{{0, 1e-6, false, 1}, {2, 1e-6, false, 1}};
    CHECK_THROWS_AS(fit_model(zero_size), spec_error);
    // times that shrink with size leave β undetermined
    std::vector<model_sample> shrinking{{1, 5e-6, false, 1}, {1024, 4e-6, false, 1}, {4096, 3e-6, false, 1}};
    CHECK_THROWS_WITH_AS(fit_model(shrinking), doctest::Contains("do not grow"), spec_error);
    CHECK_THROWS_AS(fit_model(synthetic(1e-6, 1e9, std::nullopt, pow2_sizes()), model_options{0}), spec_error);
}

TEST_CASE("two sizes are enough for a line; three are too few for a break") {
    std::vector<model_sample> two{{1, 1e-6, false, 1}, {1000, 2e-6, false, 1}};
    const auto m = fit_model(two);
    CHECK(rel_close(m.line.alpha_s, 1e-6 - 1e-6 / 999, 1e-9));
    CHECK(rel_close(m.line.beta_bytes_per_s, 999 / 1e-6, 1e-9));
    std::vector<model_sample> bent{{1, 1e-6, false, 1}, {1000, 1.1e-6, false, 1}, {2000, 10e-6, false, 1}};
    const auto b = fit_model(bent);
    CHECK_FALSE(b.line_fits());
    CHECK_FALSE(b.piecewise.has_value());
}

TEST_CASE("samples from a run: latency p50 and size / rate, bidir skipped") {
    run_result r;
    point_result lat;
    lat.test = test_kind::latency;
    lat.size_bytes = 64;
    lat.lat_ns = summary{100, 1000, 1500, 2000, 3000, 4000, 5000, 1600, 100};
    r.points.push_back(lat);
    point_result bw;
    bw.test = test_kind::bandwidth;
    bw.size_bytes = 1 << 20;
    bw.gbit_per_s = 80;
    r.points.push_back(bw);
    point_result bidir = bw;
    bidir.test = test_kind::bidir;
    r.points.push_back(bidir);
    const auto s = model_samples(r);
    REQUIRE(s.size() == 2);
    CHECK_FALSE(s[0].stream);
    CHECK(s[0].size_bytes == 64);
    CHECK(s[0].time_s == doctest::Approx(1.5e-6));
    CHECK(s[1].stream);
    CHECK(s[1].time_s == doctest::Approx((1 << 20) * 8.0 / 80e9));
    CHECK_THROWS_AS(fit_model(r), spec_error);  // one size per kind: fit needs more
}

TEST_CASE("fit from a run_result") {
    run_result r;
    for (auto n : pow2_sizes(1, 1 << 22)) {
        point_result lat;
        lat.test = test_kind::latency;
        lat.size_bytes = n;
        const double t_ns = 4000 + n / 10.0;  // 4 µs, 10 GB/s
        lat.lat_ns = summary{10, t_ns, t_ns, t_ns, t_ns, t_ns, t_ns, t_ns, 0};
        r.points.push_back(lat);
        point_result bw;
        bw.test = test_kind::bandwidth;
        bw.size_bytes = n;
        bw.gbit_per_s = n * 8.0 / ((200 + n / 10.0) * 1e-9) / 1e9;  // 0.2 µs per message in a stream
        r.points.push_back(bw);
    }
    const auto m = fit_model(r);
    CHECK(m.line.alpha_us() == doctest::Approx(4.0));
    CHECK(m.line.beta_gbyte_per_s() == doctest::Approx(10.0));
    REQUIRE(m.line.stream_alpha_s.has_value());
    CHECK(*m.line.stream_alpha_s * 1e6 == doctest::Approx(0.2));
}

TEST_CASE("JSON round trip") {
    const auto m = fit_model(synthetic(2e-6, 12.5e9, 0.1e-6, pow2_sizes()));
    const auto j = to_json(m);
    CHECK(j.at("alpha_us").get<double>() == doctest::Approx(2.0));
    CHECK(j.at("beta_gbit_per_s").get<double>() == doctest::Approx(100.0));
    CHECK(j.at("beta_gbyte_per_s").get<double>() == doctest::Approx(12.5));
    CHECK(j.at("n_half_bytes").get<double>() == doctest::Approx(25000.0));
    CHECK(j.at("stream_alpha_us").get<double>() == doctest::Approx(0.1));
    CHECK(j.at("piecewise").is_null());
    CHECK(j.at("line_fits").get<bool>());
    const auto back = model_fit_from_json(j);
    CHECK(back.line.alpha_s == doctest::Approx(m.line.alpha_s));
    CHECK(back.line.beta_bytes_per_s == doctest::Approx(m.line.beta_bytes_per_s));
    CHECK(back.line.stream_alpha_s.value() == doctest::Approx(*m.line.stream_alpha_s));
    CHECK(back.line.points == m.line.points);
    CHECK(json_close(to_json(back), j));

    std::vector<model_sample> s;
    for (auto n : pow2_sizes()) s.push_back({n, n <= 4096 ? 1e-6 + n / 1e9 : 8e-6 + n / 4e9, false, 1});
    const auto pm = fit_model(s);
    REQUIRE(pm.piecewise);
    const auto pj = to_json(pm);
    CHECK(pj.at("piecewise").at("break_after_bytes").get<std::uint64_t>() == 4096);
    const auto pback = model_fit_from_json(pj);
    REQUIRE(pback.piecewise);
    CHECK(pback.piecewise->break_before_bytes == 8192);
    CHECK(pback.piecewise->above.beta_bytes_per_s == doctest::Approx(4e9));
    CHECK(json_close(to_json(pback), pj));

    CHECK_THROWS_AS(model_fit_from_json(nlohmann::json::object()), spec_error);
    CHECK_THROWS_AS(model_fit_from_json({{"alpha_us", "x"}, {"beta_gbit_per_s", 1}}), spec_error);
    CHECK_THROWS_AS(model_fit_from_json({{"alpha_us", 1}, {"beta_gbit_per_s", -1}}), spec_error);
}

TEST_CASE("describe names the figures with units") {
    const auto m = fit_model(synthetic(2e-6, 12.5e9, std::nullopt, pow2_sizes()));
    const auto d = describe(m);
    CHECK(d.find("α 2 µs") != std::string::npos);
    CHECK(d.find("β 100 Gbit/s (12.5 GB/s)") != std::string::npos);
    CHECK(d.find("n½") != std::string::npos);
}

}  // TEST_SUITE

TEST_SUITE("model: breaks and scatter") {

namespace {

// A latency point whose 16 blocks scatter by `block_sd` (relative) around `true_s`; its time
// is the blocks' mean and its stated precision their Student-t half-width, as a sweep reports.
model_sample point_with_blocks(std::uint64_t n, double true_s, double block_sd, std::mt19937& rng) {
    std::normal_distribution<double> z(0.0, 1.0);
    model_sample s;
    s.size_bytes = n;
    for (int b = 0; b < 16; ++b) s.block_values.push_back(true_s * std::max(0.2, 1.0 + block_sd * z(rng)));
    s.time_s = mean(s.block_values);
    s.rel_half_width = mean_ci_half_width(s.block_values) / s.time_s;
    return s;
}

}  // namespace

TEST_CASE("a flat-plus-scatter latency curve whose points state a wide precision gives no break") {
    // 20 µs + n / 1.25 GB/s, each point off by up to ±25% and its blocks scattered by 50%
    // (the scheduler moving the threads between CPUs), so each point states about ±25%: one
    // line misses some points by more than 15%, but a break would only chase the scatter.
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> off(-0.25, 0.25);
    std::vector<model_sample> s;
    for (auto n : pow2_sizes(1, 1 << 20))
        s.push_back(point_with_blocks(n, (20e-6 + static_cast<double>(n) / 1.25e9) * (1 + off(rng)), 0.5, rng));
    const auto m = fit_model(s);
    REQUIRE_FALSE(m.line_fits());  // the case the break logic is for
    CHECK_FALSE(m.piecewise.has_value());
    CHECK_FALSE(m.piecewise_rejected.empty());
    CHECK(describe(m).find("no break") != std::string::npos);
    CHECK(to_json(m).at("piecewise").is_null());
    CHECK(to_json(m).at("piecewise_rejected").is_string());
}

TEST_CASE("points that sit at one of two levels by chance give no break, even with a narrow stated precision") {
    // The sweep: each point ran wholly at 7 µs or wholly at 30 µs (threads on one CPU
    // or on two), its blocks agreeing to 0.3%. Two lines cannot follow a random pattern.
    static constexpr bool apart[] = {false, true, false, false, true, false, true, true, false, true, false, false, true, false, true, false};
    std::mt19937 rng(9);
    std::vector<model_sample> s;
    std::size_t i = 0;
    for (auto n : pow2_sizes(1, 1 << 15)) s.push_back(point_with_blocks(n, (apart[i++] ? 30e-6 : 7e-6) + static_cast<double>(n) / 5e9, 0.003, rng));
    const auto m = fit_model(s);
    REQUIRE_FALSE(m.line_fits());
    CHECK_FALSE(m.piecewise.has_value());
    CHECK(m.piecewise_rejected.find("scatter") != std::string::npos);
}

TEST_CASE("a genuine eager to rendezvous step, stable across blocks, gives its break") {
    // eager up to 8 KiB (2 µs, 5 GB/s), rendezvous from 16 KiB (10 µs, 12 GB/s); blocks scatter by 2%.
    std::mt19937 rng(13);
    std::vector<model_sample> s;
    for (auto n : pow2_sizes()) {
        const double x = static_cast<double>(n);
        s.push_back(point_with_blocks(n, n <= 8192 ? 2e-6 + x / 5e9 : 10e-6 + x / 12e9, 0.02, rng));
    }
    const auto m = fit_model(s);
    REQUIRE_FALSE(m.line_fits());
    REQUIRE(m.piecewise.has_value());
    CHECK(m.piecewise_rejected.empty());
    CHECK(m.piecewise->break_after_bytes == 8192);
    CHECK(m.piecewise->break_before_bytes == 16384);
    const auto& e = m.piecewise->evidence;
    REQUIRE(e.stable_share.has_value());
    CHECK(*e.stable_share >= 0.8);
    CHECK(e.refits == model_options{}.refits);
    REQUIRE(e.chi2_drop.has_value());
    CHECK(*e.chi2_drop > *e.chi2_critical);
    CHECK(e.explained_share > 0.9);
    const auto j = to_json(m);
    CHECK(j.at("piecewise").at("evidence").at("stable_share").get<double>() == doctest::Approx(*e.stable_share));
    const auto back = model_fit_from_json(j);
    REQUIRE(back.piecewise.has_value());
    CHECK(back.piecewise->evidence.stable_share == e.stable_share);
    CHECK(json_close(to_json(back), j));
}

TEST_CASE("the stability check: a break that the point figures show but their blocks do not support is refused") {
    // The point figures follow a clean 12% step at 8 KiB exactly, so the break explains the
    // misfit; but every point's blocks scatter by 40%, so a refit over them moves the break
    // about. No stated precision: only stability decides.
    const auto curve = [](std::uint64_t n, double step) { return (n <= 8192 ? 20e-6 : 20e-6 * step) + static_cast<double>(n) / 1.25e9; };
    const auto sweep = [&](double step, double block_sd, std::mt19937& rng) {
        std::vector<model_sample> s;
        for (auto n : pow2_sizes(1, 1 << 20)) {
            auto p = point_with_blocks(n, curve(n, step), block_sd, rng);
            p.time_s = curve(n, step);
            p.rel_half_width = 0;
            s.push_back(p);
        }
        return s;
    };
    std::mt19937 rng(21);
    const auto m = fit_model(sweep(1.6, 0.4, rng));
    REQUIRE_FALSE(m.line_fits());
    CHECK_FALSE(m.piecewise.has_value());
    CHECK(m.piecewise_rejected.find("not stable") != std::string::npos);
    // the same step with steady blocks is stable
    const auto ms = fit_model(sweep(1.6, 0.01, rng));
    REQUIRE(ms.piecewise.has_value());
    CHECK(ms.piecewise->break_after_bytes == 8192);
    CHECK(ms.piecewise->evidence.stable_share.value_or(0) >= 0.8);
    CHECK_FALSE(ms.piecewise->evidence.chi2_drop.has_value());  // no stated precision: not tested
}

TEST_CASE("the precision check: a step within the points' stated precision is not reported") {
    // The point figures follow a 60% step at 8 KiB exactly (so the break explains the misfit),
    // but each point states ±80%: the points cannot tell the step from their own scatter.
    // No blocks: only the stated precision decides (the parametric refits use it too).
    std::vector<model_sample> s;
    for (auto n : pow2_sizes(1, 1 << 20)) {
        model_sample p{n, (n <= 8192 ? 20e-6 : 32e-6) + static_cast<double>(n) / 1.25e9, false, 1};
        p.rel_half_width = 0.8;
        s.push_back(p);
    }
    auto m = fit_model(s);
    REQUIRE_FALSE(m.line_fits());
    CHECK_FALSE(m.piecewise.has_value());
    CHECK(m.piecewise_rejected.find("precision") != std::string::npos);
    // the same step stated at ±1% is reported, with the χ² figures
    for (auto& p : s) p.rel_half_width = 0.01;
    m = fit_model(s);
    REQUIRE(m.piecewise.has_value());
    CHECK(m.piecewise->break_after_bytes == 8192);
    REQUIRE(m.piecewise->evidence.chi2_drop.has_value());
    CHECK(*m.piecewise->evidence.chi2_drop > *m.piecewise->evidence.chi2_critical);
    CHECK(*m.piecewise->evidence.chi2_critical == doctest::Approx(11.345));  // 3 extra parameters
}

TEST_CASE("two points: the line is underdetermined, with no quality figure") {
    std::vector<model_sample> two{{64, 5e-6, false, 1}, {4096, 6e-6, false, 1}};
    const auto m = fit_model(two);
    CHECK(m.line.underdetermined);
    CHECK(m.line.parameters == 2);
    const auto j = to_json(m);
    CHECK(j.at("underdetermined").get<bool>());
    CHECK(j.at("r_squared").is_null());
    CHECK(j.at("worst_rel_residual").is_null());
    CHECK(describe(m).find("underdetermined") != std::string::npos);
    CHECK(describe(m).find("R²") == std::string::npos);
    const auto back = model_fit_from_json(j);
    CHECK(back.line.underdetermined);
    // three points at three sizes determine a line with one degree of freedom to spare
    std::vector<model_sample> three{{64, 5e-6, false, 1}, {4096, 6e-6, false, 1}, {65536, 20e-6, false, 1}};
    CHECK_FALSE(fit_model(three).line.underdetermined);
    CHECK(to_json(fit_model(three)).at("r_squared").is_number());
    // latency and stream points at two sizes: 4 points, 3 parameters, but still only two sizes
    std::vector<model_sample> mixed{{64, 5e-6, false, 1}, {4096, 6e-6, false, 1}, {64, 0.1e-6, true, 1}, {4096, 1.1e-6, true, 1}};
    const auto mm = fit_model(mixed);
    CHECK(mm.line.parameters == 3);
    CHECK(mm.line.underdetermined);
}

TEST_CASE("a break needs three sizes on each side: with fewer the fit says so") {
    // a sharp knee after the third of five sizes: each side would have 3 and 2 sizes
    std::vector<model_sample> s{{1, 1e-6, false, 1}, {2, 1e-6, false, 1}, {4, 1.01e-6, false, 1}, {8, 50e-6, false, 1}, {16, 52e-6, false, 1}};
    const auto m = fit_model(s);
    REQUIRE_FALSE(m.line_fits());
    CHECK_FALSE(m.piecewise.has_value());
    CHECK(m.piecewise_rejected.find("too few sizes") != std::string::npos);
}

TEST_CASE("stream points: blocks are rates, and a block in which nothing arrived is fine") {
    // the eager/rendezvous step seen by streams; every point has one empty block among 16
    std::mt19937 rng(17);
    std::normal_distribution<double> z(0.0, 0.01);
    std::vector<model_sample> s;
    for (auto n : pow2_sizes()) {
        const double x = static_cast<double>(n);
        model_sample p{n, n <= 8192 ? 0.2e-6 + x / 5e9 : 4e-6 + x / 12e9, true, 1};
        for (int b = 0; b < 16; ++b) p.block_values.push_back(b == 5 ? 0.0 : x / p.time_s * (1 + z(rng)));
        s.push_back(p);
    }
    const auto m = fit_model(s);
    REQUIRE(m.piecewise.has_value());
    CHECK(m.piecewise->break_after_bytes == 8192);
    REQUIRE(m.piecewise->evidence.stable_share.has_value());
    CHECK(*m.piecewise->evidence.stable_share >= 0.8);
}

TEST_CASE("model_samples carries each point's precision and blocks") {
    run_result r;
    point_result lat;
    lat.test = test_kind::latency;
    lat.size_bytes = 64;
    lat.lat_ns = summary{100, 1000, 1500, 2000, 3000, 4000, 5000, 1600, 100};
    lat.precision.achieved = 0.02;
    lat.precision.block_values = {3000, 3100, 2900};  // RTT ns
    r.points.push_back(lat);
    point_result bw;
    bw.test = test_kind::bandwidth;
    bw.size_bytes = 1 << 20;
    bw.gbit_per_s = 80;
    bw.precision.achieved = 0;  // a fixed-count point: no interval
    bw.precision.block_values = {80, 40};
    r.points.push_back(bw);
    const auto s = model_samples(r);
    REQUIRE(s.size() == 2);
    CHECK(s[0].rel_half_width == 0.02);
    CHECK(s[0].block_values == std::vector<double>{3000, 3100, 2900});
    CHECK(s[1].rel_half_width == 0);
    CHECK(s[1].block_values == std::vector<double>{80, 40});
}

}  // TEST_SUITE

}  // namespace model_test
