#include "client/render/matrix_text.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

namespace matrix_triage_text_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using namespace meshperf::client;

namespace {

/// Two leaves of two hosts; link 0 bad for a suspect host, 1 for the uplink of l1, 2 on its own, 3 fine.
struct fixture {
    topology topo{"leaf", {"l0", "l1"}, {0, 0, 1, 1}};
    std::vector<std::string> names{"h0", "h1", "h2", "h3"};
    analysis::group_verdict v;
    fixture() {
        v.cause = {analysis::link_cause::host, analysis::link_cause::uplink, analysis::link_cause::none, analysis::link_cause::none};
        v.cause_host = {1, 1, 0, 0};
        analysis::uplink_verdict up;
        up.group = 1;
        up.bad = true;
        up.cross_links = 8;
        up.cross_bad = 7;
        up.in_group_links = 2;
        up.cross_median_gbit = 0.0041;
        up.in_group_median_gbit = 0.05;
        v.uplinks = {analysis::uplink_verdict{}, up};
        analysis::group_pair_summary p;
        p.from_group = 0;
        p.to_group = 1;
        p.links = 4;
        p.bad = 4;
        p.median_gbit = 0.0041;
        v.pairs = {p};
    }
};

}  // namespace

TEST_CASE("matrix text: what explains each bad link") {
    fixture f;
    CHECK(cause_note(f.v, 0, f.names, &f.topo) == " [host h1]");
    CHECK(cause_note(f.v, 1, f.names, &f.topo) == " [uplink of leaf=l1]");
    CHECK(cause_note(f.v, 2, f.names, &f.topo).empty());
    CHECK(cause_note(f.v, 9, f.names, &f.topo).empty());  // beyond the verdict: nothing said
    const std::vector<std::size_t> bad{0, 1, 2};
    CHECK(bad_links_heading(3, &f.v, bad) == "bad links: 3 (1 explained by suspect hosts, 1 by slow uplinks, 1 on their own)\n");
    CHECK(bad_links_heading(3, nullptr, bad) == "bad links: 3\n");  // a full matrix without a topology: as before
    CHECK(bad_links_heading(0, &f.v, {}) == "bad links: none\n");
}

TEST_CASE("matrix text: slow uplinks and the per group pair table") {
    fixture f;
    const auto lines = uplink_lines(f.v, f.topo);
    CHECK(lines.find("uplink of leaf=l1: 7 of 8 cross-group links bad (median 0.004 Gbit/s); in-group links 0 of 2 bad (median "
                     "0.050 Gbit/s)") != std::string::npos);
    CHECK(lines.find("leaf=l0") == std::string::npos);
    f.v.uplinks[1].bad = false;
    CHECK(uplink_lines(f.v, f.topo) == "slow uplinks: none\n");
    const auto table = group_pair_table(f.v, f.topo);
    CHECK(table.find("from leaf") != std::string::npos);
    CHECK(table.find("0.004") != std::string::npos);
}

}  // namespace matrix_triage_text_test
