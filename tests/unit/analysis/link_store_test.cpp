// analysis/link_store: a matrix's links kept compact (48 bytes a link with its two run ids),
// read back as they were put; a retest replaces the figures and keeps the first ones.
#include "analysis/link_store.hpp"

#include <cmath>
#include "tests/unit/measured_link.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

namespace link_store_test {  // one per test file: the unit tests are built in batches (unity build)

using meshperf::test::measured_link;

using namespace meshperf::analysis;

TEST_CASE("link record: 48 bytes, whatever the link") {
    CHECK(sizeof(link_record) <= 48);
}

TEST_CASE("run ids of the daemon's form pack into 8 bytes and read back; others are refused") {
    for (const std::string id : {"r-20261205-191203-00a1ff", "r-19700101-000000-000000", "r-21000228-235959-ffffff"}) {
        const auto p = pack_run_id(id);
        CHECK(p != 0);
        CHECK(unpack_run_id(p) == id);
    }
    for (const std::string id : {"", "r-20261205-191203-00A1FF", "r-20260230-000000-000000", "r-2026120-191203-00a1ff0",
                                 "x-20261205-191203-00a1ff", "r-20261205-191203-00a1f", "run-1"})
        CHECK(pack_run_id(id) == 0);
}

TEST_CASE("links read back as put: figures, absent figures, errors, problems, run ids") {
    link_store s(4);
    auto a = measured_link(0, 1, 9.5, 12.25);
    s.put(a, std::vector<std::string>{"r-20261205-191203-00a1ff", "r-20261205-191204-000001"}, false);
    link_sample b;
    b.from = 2;
    b.to = 3;
    b.reachable = false;
    b.error = "Connection refused";
    s.put(b, std::vector<std::string>{}, false);
    auto c = measured_link(3, 0, 1.0, 5);
    c.lat_us.reset();
    c.counter_problems = {"tcp retransmits 5%"};
    c.rail_problems = {"rail ra1 -> rb1: moved nothing"};
    s.put(c, std::vector<std::string>{"odd-id", "r-20261205-191203-00a1ff", "third"}, false);
    REQUIRE(s.size() == 3);
    CHECK(s.reachable() == 2);
    const auto a2 = s.sample(0);
    CHECK(a2.from == 0);
    CHECK(a2.to == 1);
    CHECK(*a2.gbit_per_s == 9.5);
    CHECK(*a2.lat_us == 12.25);
    CHECK(a2.error.empty());
    CHECK(s.run_ids(0) == std::vector<std::string>{"r-20261205-191203-00a1ff", "r-20261205-191204-000001"});
    const auto b2 = s.sample(1);
    CHECK_FALSE(b2.reachable);
    CHECK(b2.error == "Connection refused");
    CHECK_FALSE(b2.gbit_per_s);
    CHECK(s.run_ids(1).empty());
    const auto c2 = s.sample(2);
    CHECK_FALSE(c2.lat_us);
    CHECK(c2.counter_problems == c.counter_problems);
    CHECK(c2.rail_problems == c.rail_problems);
    CHECK(s.run_ids(2) == std::vector<std::string>{"odd-id", "r-20261205-191203-00a1ff", "third"});
    CHECK_FALSE(s.retested(0));
    CHECK_FALSE(s.first(0));
}

TEST_CASE("a retest replaces the figures, keeps the first ones and follows their run ids; a repeat without retest is ignored") {
    link_store s(3);
    s.put(measured_link(1, 2, 2.0, 50), std::vector<std::string>{"r-20261205-191203-000001"}, false);
    s.put(measured_link(0, 1, 10, 5), std::vector<std::string>{}, false);
    s.put(measured_link(1, 2, 3.0, 40), std::vector<std::string>{"r-20261205-191203-000009"}, false);
    CHECK(*s.sample(0).gbit_per_s == 2.0);
    s.put(measured_link(1, 2, 9.0, 6), std::vector<std::string>{"r-20261205-191300-000002"}, true);
    REQUIRE(s.size() == 2);
    CHECK(s.retested(0));
    CHECK(*s.sample(0).gbit_per_s == 9.0);
    REQUIRE(s.first(0));
    CHECK(*s.first(0)->gbit_per_s == 2.0);
    CHECK(*s.first(0)->lat_us == 50);
    CHECK(s.run_ids(0) == std::vector<std::string>{"r-20261205-191203-000001", "r-20261205-191300-000002"});
    // A link first measured by a retest round is new, not retested.
    s.put(measured_link(2, 0, 10, 5), std::vector<std::string>{}, true);
    CHECK_FALSE(s.retested(2));
}

TEST_CASE("the store's source judges as the samples do") {
    link_store s(5);
    std::vector<link_sample> samples;
    for (std::size_t a = 0; a < 5; ++a)
        for (std::size_t b = 0; b < 5; ++b)
            if (a != b) {
                samples.push_back(measured_link(a, b, a == 2 ? 3.0 : 10.0, 5 + static_cast<double>(b)));
                s.put(samples.back(), std::vector<std::string>{}, false);
            }
    const auto x = analyze_matrix(5, samples);
    const auto y = analyze_link_source(5, s.source());
    REQUIRE(x.links.size() == y.links.size());
    for (std::size_t i = 0; i < x.links.size(); ++i) {
        CHECK(x.links[i].bad == y.links[i].bad);
        CHECK(x.links[i].reason == y.links[i].reason);
    }
    CHECK(x.suspects == y.suspects);
    CHECK(s.bytes() >= s.size() * sizeof(link_record));
}

}  // namespace link_store_test
