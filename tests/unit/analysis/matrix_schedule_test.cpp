#include "tests/support/source_dir.hpp"
#include "core/error.hpp"
#include "analysis/matrix_schedule.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace matrix_schedule_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using namespace meshperf::analysis;

namespace {

// Walks the whole schedule for n hosts and checks every property the matrix relies on.
// Failures are counted and checked once, so that a large n does not flood the log.
void check_schedule(std::size_t n) {
    CAPTURE(n);
    const std::size_t rounds = round_count(n);
    const std::size_t expected_rounds = n < 2 ? 0 : (n % 2 == 0 ? n - 1 : n);
    REQUIRE(rounds == expected_rounds);

    std::vector<unsigned char> directed(n * n, 0);  // times from -> to was measured
    std::vector<std::size_t> last_round(n, static_cast<std::size_t>(-1));
    std::vector<std::size_t> rounds_in(n, 0);
    std::size_t bad_pairs = 0, host_twice = 0, wrong_size = 0;
    for (std::size_t r = 0; r < rounds; ++r) {
        const auto pairs = schedule_round(n, r);
        if (pairs.size() != n / 2) ++wrong_size;
        for (const host_pair& p : pairs) {
            if (p.a >= p.b || p.b >= n) {
                ++bad_pairs;
                continue;
            }
            for (std::size_t h : {p.a, p.b}) {
                if (last_round[h] == r) ++host_twice;
                else ++rounds_in[h];
                last_round[h] = r;
            }
            const auto order = measurement_order(p);
            for (const directed_link& d : order) ++directed[d.from * n + d.to];
        }
    }
    CHECK(bad_pairs == 0);
    CHECK(host_twice == 0);
    CHECK(wrong_size == 0);
    std::size_t missing_or_repeated = 0;
    for (std::size_t from = 0; from < n; ++from)
        for (std::size_t to = 0; to < n; ++to)
            if (directed[from * n + to] != (from == to ? 0 : 1)) ++missing_or_repeated;
    CHECK(missing_or_repeated == 0);
    // Every host plays in n - 1 rounds: none idle for n even, exactly one for n odd.
    std::size_t wrong_appearances = 0;
    for (std::size_t h = 0; h < n; ++h)
        if (rounds_in[h] != (n < 2 ? 0 : n - 1)) ++wrong_appearances;
    CHECK(wrong_appearances == 0);
}

std::string grouped(std::size_t v) {
    std::string digits = std::to_string(v), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string duration_text(double seconds) {
    const auto s = static_cast<std::size_t>(seconds + 0.5);
    const std::size_t h = s / 3600, m = s % 3600 / 60, sec = s % 60;
    if (h > 0) return fmt::format("{} h {} min {} s", h, m, sec);
    if (m > 0) return fmt::format("{} min {} s", m, sec);
    return fmt::format("{} s", sec);
}

// One row of the table in docs/operations.md, "Cluster matrix schedule".
std::string doc_row(const schedule_estimate& e) {
    std::string wall = fmt::format("{} s", grouped(static_cast<std::size_t>(e.wall_seconds + 0.5)));
    if (e.wall_seconds >= 60) wall += fmt::format(" ({})", duration_text(e.wall_seconds));
    return fmt::format("| {} | {} | {} | {} | {} | {} |", grouped(e.hosts), grouped(e.rounds),
                       grouped(e.pairs_per_round), grouped(e.pairs), grouped(e.measurements), wall);
}

std::string read_operations_doc() {
    const auto path = std::filesystem::path(meshperf::test::source_dir()) / "docs" /
                      "operations.md";
    std::ifstream in(path);
    REQUIRE_MESSAGE(in.good(), "cannot read " << path.string());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_SUITE("matrix_schedule") {

TEST_CASE("round and pair counts") {
    CHECK(round_count(0) == 0);
    CHECK(round_count(1) == 0);
    CHECK(round_count(2) == 1);
    CHECK(round_count(3) == 3);
    CHECK(round_count(4) == 3);
    CHECK(round_count(2048) == 2047);
    CHECK(round_count(2047) == 2047);
    CHECK(pairs_per_round(1) == 0);
    CHECK(pairs_per_round(2) == 1);
    CHECK(pairs_per_round(3) == 1);
    CHECK(pairs_per_round(2048) == 1024);
    CHECK(pairs_per_round(2047) == 1023);
}

TEST_CASE("measurement order within a pair: a to b, then b to a") {
    const auto order = measurement_order(host_pair{2, 5});
    CHECK(order[0] == directed_link{2, 5});
    CHECK(order[1] == directed_link{5, 2});
}

TEST_CASE("small schedules written out") {
    CHECK(round_robin_schedule(0).empty());
    CHECK(round_robin_schedule(1).empty());
    const auto two = round_robin_schedule(2);
    REQUIRE(two.size() == 1);
    CHECK(two[0] == std::vector<host_pair>{{0, 1}});
    const auto three = round_robin_schedule(3);
    REQUIRE(three.size() == 3);
    for (const auto& r : three) CHECK(r.size() == 1);
    const auto four = round_robin_schedule(4);
    REQUIRE(four.size() == 3);
    CHECK(four[0] == std::vector<host_pair>{{0, 3}, {1, 2}});
}

TEST_CASE("every ordered pair exactly once, no host twice in a round: n = 1..64") {
    for (std::size_t n = 1; n <= 64; ++n) check_schedule(n);
}

TEST_CASE("large clusters up to 2,048 hosts") {
    for (std::size_t n : {127u, 128u, 129u, 1000u, 1023u, 2047u, 2048u}) check_schedule(n);
}

TEST_CASE("rounds within a pair list are sorted by first host") {
    for (const auto& p : round_robin_schedule(10))
        for (std::size_t i = 1; i < p.size(); ++i) CHECK(p[i - 1].a < p[i].a);
}

TEST_CASE("round out of range is refused") {
    CHECK_THROWS_AS(schedule_round(4, 3), spec_error);
    CHECK_THROWS_AS(schedule_round(1, 0), spec_error);
    CHECK_NOTHROW(schedule_round(5, 4));
}

TEST_CASE("schedule_pairs packs a subset into disjoint rounds") {
    const std::vector<host_pair> retest{{0, 3}, {3, 0}, {1, 3}, {2, 4}, {3, 5}, {0, 1}};
    const auto rounds = schedule_pairs(retest);
    std::size_t total = 0;
    for (const auto& r : rounds) {
        std::vector<int> seen(6, 0);
        for (const host_pair& p : r) {
            CHECK(p.a < p.b);
            CHECK(++seen[p.a] == 1);
            CHECK(++seen[p.b] == 1);
        }
        total += r.size();
    }
    CHECK(total == 5);  // {3, 0} duplicates {0, 3}
    // Host 3 is in three pairs, so at least three rounds; greedy stays within 2d - 1 = 5.
    CHECK(rounds.size() >= 3);
    CHECK(rounds.size() <= 5);
    CHECK(rounds[0] == std::vector<host_pair>{{0, 3}, {2, 4}});
    CHECK(schedule_pairs({}).empty());
    const std::vector<host_pair> self{{2, 2}};
    CHECK_THROWS_AS(schedule_pairs(self), spec_error);
}

TEST_CASE("estimate arithmetic") {
    const auto e = estimate_schedule(6, 3.0);
    CHECK(e.rounds == 5);
    CHECK(e.pairs_per_round == 3);
    CHECK(e.pairs == 15);
    CHECK(e.measurements == 30);
    CHECK(e.wall_seconds == doctest::Approx(15.0));
    CHECK(e.sequential_seconds == doctest::Approx(45.0));
    CHECK(estimate_schedule(1).wall_seconds == 0);
    CHECK(estimate_schedule(0).pairs == 0);
    CHECK_THROWS_AS(estimate_schedule(4, -1), spec_error);
    CHECK_THROWS_AS(estimate_schedule(4, std::nan("")), spec_error);
}

TEST_CASE("docs/operations.md: the 2,048-host arithmetic") {
    CHECK(default_seconds_per_direction == 1.5);
    CHECK(default_seconds_per_pair == 3.0);
    const auto e = estimate_schedule(2048);
    CHECK(e.rounds == 2047);
    CHECK(e.pairs_per_round == 1024);
    CHECK(e.pairs == 2'096'128);
    CHECK(e.measurements == 4'192'256);
    CHECK(e.wall_seconds == doctest::Approx(6141.0));
    CHECK(e.sequential_seconds == doctest::Approx(6'288'384.0));
    CHECK(doc_row(e) == "| 2,048 | 2,047 | 1,024 | 2,096,128 | 4,192,256 | 6,141 s (1 h 42 min 21 s) |");

    // The table in the docs holds exactly these figures.
    const std::string doc = read_operations_doc();
    CHECK(doc.find("## Cluster matrix schedule") != std::string::npos);
    for (std::size_t n : {6u, 64u, 512u, 2047u, 2048u}) {
        const std::string row = doc_row(estimate_schedule(n));
        CAPTURE(row);
        CHECK(doc.find(row) != std::string::npos);
    }
    CHECK(doc.find("1.5 s per direction") != std::string::npos);
    CHECK(doc.find("6,288,384 s") != std::string::npos);
}

}  // TEST_SUITE

}  // namespace matrix_schedule_test
