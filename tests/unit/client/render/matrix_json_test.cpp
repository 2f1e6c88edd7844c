// client/render/matrix_json: the matrix document written a link at a time is, byte for byte,
// the document the CLI built whole before (the verdict's JSON, each link with its run ids,
// retest and cause, the topology), and its CSV the same lines.
#include "analysis/link_store.hpp"
#include "analysis/outliers.hpp"
#include "analysis/triage_verdict.hpp"
#include "client/render/matrix_json.hpp"

#include "tests/unit/measured_link.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace matrix_json_test {  // one per test file: the unit tests are built in batches (unity build)

using meshperf::test::measured_link;

using namespace meshperf;
using analysis::link_sample;
using nlohmann::json;

namespace {

std::string id(std::size_t k) { return fmt::format("r-20261205-19{:04}-{:06x}", k % 6000 / 60 * 100 + k % 60, k); }

/// Six hosts in two groups; 0 -> 1 slow and retested, 4 -> 5 unreachable with a quoted
/// error, 3 -> 2 with counter problems, 5 -> 0 with odd run ids.
struct six_hosts {
    std::vector<std::string> names{"10.0.0.1:7470", "10.0.0.2:7470", "node,3", "node\"4", "n5", "n6"};
    analysis::link_store store{6};
    analysis::matrix_analysis a;
    client::topology topo{"leaf", {"l1", "l2"}, {0, 0, 0, 1, 1, 1}};
    analysis::group_verdict groups;
    json meta{{"schema", "meshperf.matrix/1"}, {"mode", "full"}, {"rounds", 5}, {"retest_rounds", 1}, {"wall_s", 1.5}};

    six_hosts() {
        std::size_t k = 0;
        for (std::size_t f = 0; f < 6; ++f)
            for (std::size_t t = 0; t < 6; ++t) {
                if (f == t) continue;
                auto l = measured_link(f, t, 10 + 0.01 * static_cast<double>(k), 5.5);
                std::vector<std::string> ids{id(k), id(k + 1000)};
                if (f == 0 && t == 1) l.gbit_per_s = 2.0;
                if (f == 4 && t == 5) {
                    l = link_sample{};
                    l.from = 4, l.to = 5, l.reachable = false, l.error = "connect: \"refused\", twice\nagain";
                    ids = {id(k)};
                }
                if (f == 3 && t == 2) l.counter_problems = {"tcp retransmits 3.1% (WARNING)"};
                if (f == 5 && t == 0) ids = {"odd", id(k), "third"};
                store.put(l, ids, false);
                ++k;
            }
        store.put(measured_link(0, 1, 2.5, 6.0), std::vector<std::string>{id(99)}, true);
        a = analysis::analyze_link_source(6, store.source());
        groups = analysis::judge_groups(a, topo.group_of, 2);
    }
};

/// The document as the CLI built it whole (the reference the streamed one must equal).
json whole_document(const six_hosts& m, bool with_groups) {
    json doc = m.meta;
    const auto verdict = analysis::to_json(m.a, m.names);
    for (const auto& [k, v] : verdict.items()) doc[k] = v;
    for (std::size_t i = 0; i < m.a.links.size(); ++i) {
        auto& l = doc["links"][i];
        l["run_ids"] = m.store.run_ids(i);
        l["retested"] = m.store.retested(i);
        if (const auto first = m.store.first(i))
            l["first"] = {{"reachable", first->reachable},
                          {"gbit_per_s", first->gbit_per_s ? json(*first->gbit_per_s) : json(nullptr)},
                          {"lat_us", first->lat_us ? json(*first->lat_us) : json(nullptr)},
                          {"error", first->error}};
        if (with_groups && m.a.links[i].bad && m.a.links[i].link.reachable) {
            const auto cause = m.groups.cause[i];
            l["cause"] = analysis::to_string(cause);
            if (cause == analysis::link_cause::host) l["cause_host"] = m.names[m.groups.cause_host[i]];
            if (cause == analysis::link_cause::uplink) l["cause_group"] = m.topo.group_names[m.groups.cause_host[i]];
        }
    }
    if (with_groups) {
        doc["topology"] = analysis::to_json(m.groups, m.topo.group_names);
        doc["topology"]["key"] = m.topo.key;
        doc["topology"]["groups"] = m.topo.group_names;
        doc["slow_uplinks"] = json::array();
        for (const auto& u : m.groups.uplinks)
            if (u.bad) doc["slow_uplinks"].push_back(m.topo.group_names[u.group]);
    }
    return doc;
}

std::string streamed(const client::matrix_document& d, bool csv = false) {
    std::string out;
    std::size_t pieces = 0;
    auto sink = [&](std::string_view s) { out += s, ++pieces; };
    csv ? client::write_matrix_csv(d, sink) : client::write_matrix_json(d, sink);
    CHECK(pieces >= d.a.links.size());  // a piece per link at least: never the whole document at once
    return out;
}

}  // namespace

TEST_CASE("matrix JSON written link by link is the whole document's dump, byte for byte") {
    const six_hosts m;
    REQUIRE(m.store.retested(0));
    const client::matrix_document plain{m.names, m.a, m.store, m.meta};
    CHECK(streamed(plain) == whole_document(m, false).dump(2) + "\n");
    const client::matrix_document grouped{m.names, m.a, m.store, m.meta, &m.groups, &m.topo};
    const auto text = streamed(grouped);
    CHECK(text == whole_document(m, true).dump(2) + "\n");
    const auto doc = json::parse(text);
    CHECK(doc["links"].size() == 30);
    CHECK(doc["links"][0]["retested"] == true);
    CHECK(doc["links"][0]["first"]["gbit_per_s"] == 2.0);
    CHECK(doc["links"][0]["run_ids"].size() == 3);
}

TEST_CASE("a matrix without links writes links: []") {
    const std::vector<std::string> names{"a", "b"};
    const analysis::link_store store(2);
    const auto a = analysis::analyze_link_source(2, store.source());
    const json meta{{"schema", "meshperf.matrix/1"}};
    const client::matrix_document d{names, a, store, meta};
    std::string out;
    client::write_matrix_json(d, [&](std::string_view s) { out += s; });
    json whole = meta;
    const auto verdict = analysis::to_json(a, names);
    for (const auto& [k, v] : verdict.items()) whole[k] = v;
    CHECK(out == whole.dump(2) + "\n");
}

TEST_CASE("matrix CSV: a header, then a line per link with its retest, quoted where it must be") {
    const six_hosts m;
    const client::matrix_document d{m.names, m.a, m.store, m.meta};
    const auto csv = streamed(d, true);
    CHECK(csv.rfind("from,to,reachable,gbit_per_s,lat_us,bandwidth_ratio,latency_ratio,bad,retested,reason,error\n", 0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 31);
    CHECK(csv.find("10.0.0.1:7470,10.0.0.2:7470,true,2.5,") != std::string::npos);
    CHECK(csv.find("n5,n6,false,,,,,true,false,") != std::string::npos);
    CHECK(csv.find("\"node\"\"4\",") != std::string::npos);
    CHECK(csv.find("\"connect: \"\"refused\"\", twice again\"") != std::string::npos);
}

}  // namespace matrix_json_test
