#include "client/render/svg_heatmap.hpp"
#include "client/render/svg_plot.hpp"
#include "core/error.hpp"

#include "tests/unit/xml_check.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace svg_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

namespace {

core::run_result synthetic_run(double alpha_us, double gbit, const char* peer, bool bidir = false) {
    core::run_result r;
    r.initiator.hostname = "node-a";
    r.peer.hostname = peer;
    for (std::uint64_t n = 1; n <= (1u << 22); n *= 4) {
        core::point_result l;
        l.test = core::test_kind::latency;
        l.size_bytes = n;
        const double t = alpha_us * 1e3 + static_cast<double>(n) / (gbit / 8);
        l.lat_ns = core::summary{100, t * 0.9, t, t * 1.1, t * 1.3, t * 1.5, t * 2, t * 1.02, t * 0.1};
        l.rtt_ns = core::summary{100, 2 * t * 0.9, 2 * t, 2 * t * 1.1, 2 * t * 1.3, 2 * t * 1.5, 4 * t, 2 * t * 1.02, t * 0.2};
        r.points.push_back(l);
        core::point_result b;
        b.test = core::test_kind::bandwidth;
        b.size_bytes = n;
        b.gbit_per_s = static_cast<double>(n) * 8 / (100 + static_cast<double>(n) / (gbit / 8));
        r.points.push_back(b);
        if (bidir) {
            auto c = b;
            c.test = core::test_kind::bidir;
            c.gbit_per_s *= 1.9;
            r.points.push_back(c);
        }
    }
    return r;
}

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

std::size_t count_of(const std::string& s, std::string_view what) {
    std::size_t n = 0;
    for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
    return n;
}

}  // namespace

TEST_SUITE("svg") {

TEST_CASE("the XML checker itself catches what it should") {
    CHECK(xml_check::check("<svg a=\"1\"><g><text>x &amp; y</text></g></svg>").ok);
    CHECK_FALSE(xml_check::check("<svg><g></svg>").ok);
    CHECK_FALSE(xml_check::check("<svg><g></g>").ok);
    CHECK_FALSE(xml_check::check("<svg a=1></svg>").ok);
    CHECK_FALSE(xml_check::check("<svg a=\"1\" a=\"2\"></svg>").ok);
    CHECK_FALSE(xml_check::check("<svg>a & b</svg>").ok);
    CHECK_FALSE(xml_check::check("<svg></svg><svg></svg>").ok);
    CHECK_FALSE(xml_check::check("<svg x=\"nan\"></svg>").numbers_finite);
}

TEST_CASE("xml_escape") {
    CHECK(client::xml_escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
    CHECK(client::xml_escape(std::string("x\x01y")) == "x y");
    CHECK(client::xml_escape("µs → α") == "µs → α");
}

TEST_CASE("sweep plot: well-formed, two panels, labelled axes, IEC ticks, legend, models") {
    std::vector<client::plot_run> runs;
    auto a = synthetic_run(2, 100, "node-b");
    runs.push_back({"", a, analysis::fit_model(a)});
    auto b = synthetic_run(8, 25, "node-c", true);
    runs.push_back({"rail 2 & <slow>", b, analysis::fit_model(b)});
    const auto svg = client::render_sweep_svg(runs);

    const auto r = xml_check::check(svg);
    INFO(r.error);
    REQUIRE(r.ok);
    CHECK(r.root == "svg");
    CHECK(r.numbers_finite);
    CHECK(r.max_coordinate < 2000);
    CHECK(contains(svg, R"(xmlns="http://www.w3.org/2000/svg")"));
    CHECK(svg.rfind("<?xml", 0) == std::string::npos);  // inlinable in HTML
    CHECK_FALSE(contains(svg, "<style"));
    CHECK_FALSE(contains(svg, " id=\""));
    CHECK(r.elements.at("title") == 1);
    CHECK(contains(svg, "One-way latency"));
    CHECK(contains(svg, "Bandwidth"));
    CHECK(contains(svg, "one-way latency (µs)"));
    CHECK(contains(svg, "bandwidth (Gbit/s)"));
    CHECK(count_of(svg, "message size (bytes") == 2);
    CHECK(contains(svg, ">1 KiB<"));
    CHECK(contains(svg, ">1 MiB<"));
    CHECK(contains(svg, "node-a → node-b (tcp)"));
    CHECK(contains(svg, "rail 2 &amp; &lt;slow&gt;"));  // escaped label
    CHECK(contains(svg, "fit: α 2 µs, β 100 Gbit/s"));
    CHECK(contains(svg, "bidirectional"));
    // measured lines: latency 2 + bandwidth 2 + bidir 1; model curves: 2 + 2
    CHECK(r.elements.at("polyline") == 9);
    CHECK(count_of(svg, "stroke-dasharray=\"8 5\"") == 4);
    // a p50..p99 band per run in the latency panel
    CHECK(count_of(svg, "fill-opacity=\"0.16\"") == 2);
    // colour-blind-safe palette: the first two Okabe–Ito colours are used
    CHECK(contains(svg, "#0072B2"));
    CHECK(contains(svg, "#E69F00"));
}

TEST_CASE("sweep plot: one run fits its own model; options drop panels and the band") {
    const auto a = synthetic_run(3, 50, "node-b");
    const auto svg = client::render_sweep_svg(a);
    REQUIRE(xml_check::check(svg).ok);
    CHECK(contains(svg, "meshperf sweep: node-a → node-b (tcp)"));
    CHECK(contains(svg, "fit: α 3 µs"));

    client::plot_options o;
    o.bandwidth = false;
    o.percentile_band = false;
    o.title = "Latency only";
    const auto lat = client::render_sweep_svg(a, o);
    REQUIRE(xml_check::check(lat).ok);
    CHECK(contains(lat, "Latency only"));
    CHECK_FALSE(contains(lat, "Bandwidth (goodput"));
    CHECK_FALSE(contains(lat, "fill-opacity=\"0.16\""));
}

TEST_CASE("sweep plot: empty, degenerate and insane input stays well-formed") {
    const auto none = client::render_sweep_svg(std::span<const client::plot_run>{});
    auto r = xml_check::check(none);
    REQUIRE(r.ok);
    CHECK(r.numbers_finite);
    CHECK(contains(none, "no latency points"));
    CHECK(contains(none, "no bandwidth points"));

    core::run_result one;
    core::point_result p;
    p.test = core::test_kind::latency;
    p.size_bytes = 64;
    p.lat_ns = core::summary{1, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 0};
    one.points.push_back(p);  // one size: no model, one point, a degenerate x range
    const auto single = client::render_sweep_svg(one);
    r = xml_check::check(single);
    REQUIRE(r.ok);
    CHECK(r.numbers_finite);
    CHECK(contains(single, "no bandwidth points"));

    core::point_result bad;
    bad.test = core::test_kind::bandwidth;
    bad.size_bytes = 4096;
    bad.gbit_per_s = std::nan("");
    one.points.push_back(bad);
    bad.gbit_per_s = -1;
    one.points.push_back(bad);
    bad.gbit_per_s = INFINITY;
    one.points.push_back(bad);
    core::point_result zero_lat = p;
    zero_lat.size_bytes = 128;
    zero_lat.lat_ns->p50 = 0;
    one.points.push_back(zero_lat);
    const auto insane = client::render_sweep_svg(one);
    r = xml_check::check(insane);
    REQUIRE(r.ok);
    CHECK(r.numbers_finite);
    CHECK(contains(insane, "4 point(s) without a positive, finite figure are not drawn."));
    std::string lower = insane;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    CHECK_FALSE(contains(lower, "nan"));
    CHECK_FALSE(contains(lower, "inf\""));
}

TEST_CASE("sweep plot: long latencies switch to ms; piecewise models mark the break") {
    core::run_result slow;
    std::vector<analysis::model_sample> samples;
    for (std::uint64_t n = 1; n <= (1u << 24); n *= 2) {
        core::point_result l;
        l.test = core::test_kind::latency;
        l.size_bytes = n;
        const double t_ns = n <= 4096 ? 5e3 + n / 1.0 : 60e3 + n / 0.5;  // 5 µs + 1 GB/s, then 60 µs + 0.5 GB/s
        l.lat_ns = core::summary{10, t_ns, t_ns, t_ns, t_ns, t_ns, t_ns, t_ns, 0};
        slow.points.push_back(l);
    }
    const auto svg = client::render_sweep_svg(slow);
    REQUIRE(xml_check::check(svg).ok);
    CHECK(contains(svg, "one-way latency (ms)"));
    CHECK(contains(svg, ">break<"));
    CHECK(contains(svg, "break 4 KiB–8 KiB"));
}

TEST_CASE("run_label names hosts, transport and memory") {
    core::run_result r;
    r.initiator.address = "10.0.0.1:7470";
    r.spec.peer = "10.0.0.2:7470";
    r.spec.transport = "rdma";
    r.spec.local_memory = "cuda:0";
    r.spec.remote_memory = "cuda:1";
    r.spec.streams = 4;
    CHECK(client::run_label(r) == "10.0.0.1:7470 → 10.0.0.2:7470 (rdma, cuda:0 → cuda:1, 4 streams)");
}

TEST_CASE("heatmap: well-formed, a cell per link, bad and unreachable links marked") {
    client::heatmap_data d;
    d.title = "Bandwidth";
    d.unit = "Gbit/s";
    d.hosts = {"a", "b", "c", "d<&>"};
    const std::size_t n = d.hosts.size();
    d.values.assign(n, std::vector<std::optional<double>>(n));
    d.bad.assign(n, std::vector<bool>(n, false));
    d.unreachable.assign(n, std::vector<bool>(n, false));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (i != j) d.values[i][j] = 100.0 + 10 * i + j;
    d.values[0][1] = 20.0;
    d.bad[0][1] = true;
    d.bad[1][0] = true;
    d.unreachable[2][3] = true;
    d.values[2][3].reset();
    d.values[3][2].reset();  // not measured
    d.suspect = {false, true, false, false};
    const auto svg = client::render_heatmap_svg(d);
    const auto r = xml_check::check(svg);
    INFO(r.error);
    REQUIRE(r.ok);
    CHECK(r.numbers_finite);
    CHECK(r.elements.at("rect") >= n * n);
    CHECK(contains(svg, "bad link (2)"));
    CHECK(contains(svg, "unreachable (1)"));
    CHECK(contains(svg, "not measured (1)"));
    CHECK(contains(svg, "suspect host (1)"));
    CHECK(contains(svg, "d&lt;&amp;&gt;"));
    CHECK(contains(svg, ">✕<"));
    CHECK(count_of(svg, R"(stroke="#D55E00")") >= 2);
    CHECK(contains(svg, ">20<"));   // value in its cell
    CHECK(contains(svg, ">Gbit/s<"));
    // lowest bandwidth is the dark end of viridis
    CHECK(contains(svg, client::viridis(0)));
    CHECK_FALSE(contains(svg, "<style"));
    CHECK_FALSE(contains(svg, " id=\""));
}

TEST_CASE("heatmap: latency reverses the scale; big matrices shrink cells and drop numbers") {
    client::heatmap_data d;
    d.unit = "µs";
    d.higher_is_better = false;
    d.hosts = {"a", "b"};
    d.values = {{std::nullopt, 2.0}, {10.0, std::nullopt}};
    const auto svg = client::render_heatmap_svg(d);
    REQUIRE(xml_check::check(svg).ok);
    // 2 µs (best) is the bright end, 10 µs the dark end
    CHECK(contains(svg, "fill=\"" + client::viridis(1) + "\""));
    CHECK(contains(svg, "fill=\"" + client::viridis(0) + "\""));

    client::heatmap_data big;
    for (int i = 0; i < 200; ++i) big.hosts.push_back("host-" + std::to_string(i));
    big.values.assign(200, std::vector<std::optional<double>>(200, 50.0));  // all equal: a degenerate scale
    const auto bsvg = client::render_heatmap_svg(big);
    const auto r = xml_check::check(bsvg);
    REQUIRE(r.ok);
    CHECK(r.numbers_finite);
    CHECK(r.elements.at("text") < 500);  // names and the scale, no numbers in 40 000 cells
}

TEST_CASE("heatmap: refuses malformed input") {
    client::heatmap_data d;
    CHECK_THROWS_AS(client::render_heatmap_svg(d), core::spec_error);
    d.hosts = {"a", "b"};
    d.values = {{1.0, 2.0}};
    CHECK_THROWS_AS(client::render_heatmap_svg(d), core::spec_error);
    d.values = {{1.0, 2.0}, {3.0}};
    CHECK_THROWS_AS(client::render_heatmap_svg(d), core::spec_error);
    d.values.clear();
    d.suspect = {true};
    CHECK_THROWS_AS(client::render_heatmap_svg(d), core::spec_error);
    d.suspect.clear();
    const auto empty = client::render_heatmap_svg(d);  // hosts but no values
    CHECK(xml_check::check(empty).ok);
    CHECK(contains(empty, "no values"));
}

TEST_CASE("heatmap from a judged matrix") {
    std::vector<analysis::link_sample> links;
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 5; ++j)
            if (i != j) {
                analysis::link_sample l;
                l.from = i;
                l.to = j;
                l.gbit_per_s = (i == 4 || j == 4) ? 10.0 : 100.0;
                l.lat_us = 5.0;
                links.push_back(l);
            }
    links[0].reachable = false;
    links[0].gbit_per_s.reset();
    links[0].lat_us.reset();
    links[0].error = "refused";
    const auto a = analysis::analyze_matrix(5, links);
    const std::vector<std::string> names{"v", "w", "x", "y", "z"};
    const auto d = client::heatmap_from_analysis(a, names, client::heatmap_metric::bandwidth);
    CHECK(d.hosts == names);
    CHECK(d.unit == "Gbit/s");
    CHECK(d.higher_is_better);
    CHECK(d.unreachable[links[0].from][links[0].to]);
    CHECK(d.values[1][4].value() == 10.0);
    CHECK(d.bad[1][4]);
    CHECK_FALSE(d.bad[1][0]);
    CHECK(d.suspect[4]);
    CHECK_FALSE(d.suspect[1]);
    const auto lat = client::heatmap_from_analysis(a, {}, client::heatmap_metric::latency);
    CHECK(lat.hosts[0] == "host 0");
    CHECK(lat.values[1][0].value() == 5.0);
    CHECK_FALSE(lat.higher_is_better);
    CHECK(xml_check::check(client::render_heatmap_svg(lat)).ok);
    CHECK_THROWS_AS(client::heatmap_from_analysis(a, std::vector<std::string>{"x"}, client::heatmap_metric::latency),
                    core::spec_error);
}

TEST_CASE("viridis endpoints") {
    CHECK(client::viridis(0) == "#440154");
    CHECK(client::viridis(1) == "#fde725");
    CHECK(client::viridis(-3) == "#440154");
    CHECK(client::viridis(std::nan("")) == "#440154");
}

TEST_CASE("heatmap: a fast link bad for its counters is outlined on both heatmaps, its reason in the tooltip") {
    std::vector<analysis::link_sample> links;
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j)
            if (i != j) {
                analysis::link_sample l;
                l.from = i;
                l.to = j;
                l.gbit_per_s = 100.0;
                l.lat_us = 5.0;
                if (i == 2 && j == 3) l.counter_problems = {"peer eth0: 2 carrier_changes (the link went down & up) at 1 MiB bandwidth"};
                links.push_back(l);
            }
    const auto a = analysis::analyze_matrix(4, links);
    const std::vector<std::string> names{"a", "b", "c", "d"};
    for (auto metric : {client::heatmap_metric::bandwidth, client::heatmap_metric::latency}) {
        const auto d = client::heatmap_from_analysis(a, names, metric);
        CHECK(d.bad[2][3]);
        CHECK_FALSE(d.bad[3][2]);
        const auto svg = client::render_heatmap_svg(d);
        CHECK(svg.find("<title>c -> d: counters: peer eth0: 2 carrier_changes (the link went down &amp; up)") != std::string::npos);
        CHECK(xml_check::check(svg).ok);
    }
}

}  // TEST_SUITE

}  // namespace svg_test
