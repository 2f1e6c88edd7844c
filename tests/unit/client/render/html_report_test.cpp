#include "client/render/figure_text.hpp"
#include "client/render/html_report.hpp"
#include "client/render/table.hpp"
#include "client/render/svg_plot.hpp"

#include <cmath>
#include "tests/unit/xml_check.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace html_report_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

namespace {

core::run_result sample_run(const std::string& peer, double alpha_us, double gbit) {
    core::run_result r;
    r.id = "run-" + peer;
    r.state = core::run_state::completed;
    r.initiator.hostname = "node-a";
    r.peer.hostname = peer;
    r.spec.peer = peer + ":7470";
    for (std::uint64_t n = 1; n <= (1u << 20); n *= 8) {
        r.spec.sizes.push_back(n);
        core::point_result l;
        l.test = core::test_kind::latency;
        l.size_bytes = n;
        const double t = alpha_us * 1e3 + static_cast<double>(n) / (gbit / 8);
        l.lat_ns = core::summary{50, t * 0.9, t, t * 1.1, t * 1.2, t * 1.3, t * 1.5, t, t * 0.05};
        r.points.push_back(l);
        core::point_result b;
        b.test = core::test_kind::bandwidth;
        b.size_bytes = n;
        b.gbit_per_s = static_cast<double>(n) * 8 / (200 + static_cast<double>(n) / (gbit / 8));
        b.msg_per_s = b.gbit_per_s * 1e9 / 8 / static_cast<double>(n);
        core::flow_figures f;
        f.gbit_per_s = b.gbit_per_s;
        f.interval_min_gbit = b.gbit_per_s * 0.9;
        f.interval_max_gbit = b.gbit_per_s * 1.1;
        b.flows.push_back(f);
        r.points.push_back(b);
    }
    return r;
}

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

std::size_t count_of(const std::string& s, std::string_view what) {
    std::size_t n = 0;
    for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
    return n;
}

// Every <svg>…</svg> of the page, each checked as XML.
std::vector<std::string> inline_svgs(const std::string& html) {
    std::vector<std::string> out;
    for (auto p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) {
        const auto e = html.find("</svg>", p);
        if (e == std::string::npos) break;
        out.push_back(html.substr(p, e + 6 - p));
    }
    return out;
}

// HTML elements outside the SVGs open and close in order (void elements excepted).
bool html_balanced(const std::string& html, std::string& error) {
    static const std::vector<std::string> void_elements{"meta", "br", "hr", "img", "link", "input", "col", "wbr"};
    std::vector<std::string> stack;
    std::size_t i = 0;
    while ((i = html.find('<', i)) != std::string::npos) {
        if (html.compare(i, 9, "<!DOCTYPE") == 0) {
            i = html.find('>', i);
            continue;
        }
        if (html.compare(i, 4, "<svg") == 0) {  // checked as XML separately
            i = html.find("</svg>", i) + 6;
            continue;
        }
        const bool closing = html[i + 1] == '/';
        std::size_t p = i + (closing ? 2 : 1), q = p;
        while (q < html.size() && (std::isalnum(static_cast<unsigned char>(html[q])) || html[q] == '-')) ++q;
        const std::string name = html.substr(p, q - p);
        const auto end = html.find('>', q);
        if (name.empty() || end == std::string::npos) {
            error = "bad tag at " + std::to_string(i);
            return false;
        }
        if (!closing && name == "style") {  // CSS holds no tags
            i = html.find("</style>", end);
            stack.push_back("style");
            continue;
        }
        if (closing) {
            if (stack.empty() || stack.back() != name) {
                error = "unbalanced </" + name + "> at " + std::to_string(i);
                return false;
            }
            stack.pop_back();
        } else if (std::find(void_elements.begin(), void_elements.end(), name) == void_elements.end()) {
            stack.push_back(name);
        }
        i = end + 1;
    }
    if (!stack.empty()) {
        error = "unclosed <" + stack.back() + ">";
        return false;
    }
    return true;
}

}  // namespace

TEST_SUITE("html_report") {

TEST_CASE("self-contained page with tables, plots and models") {
    std::vector<core::run_result> runs{sample_run("node-b", 2, 100), sample_run("node-<c>&", 5, 40)};
    runs[1].warnings.push_back("sender CPU-bound at 1 B");
    client::report_options opt;
    opt.title = "Fabric acceptance <rack 7>";
    opt.generated_at = "2026-11-29T12:00:00Z";
    const auto html = client::render_html_report(runs, {}, opt);

    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(contains(html, "<meta charset=\"utf-8\">"));
    CHECK(contains(html, "<style>"));
    std::string err;
    CHECK_MESSAGE(html_balanced(html, err), err);

    // no external assets, no scripts
    CHECK_FALSE(contains(html, "<script"));
    CHECK_FALSE(contains(html, "<link"));
    CHECK_FALSE(contains(html, "<img"));
    CHECK_FALSE(contains(html, "@import"));
    CHECK_FALSE(contains(html, "url("));
    CHECK(count_of(html, "http://") == count_of(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    CHECK_FALSE(contains(html, "https://"));

    // escaped input
    CHECK(contains(html, "Fabric acceptance &lt;rack 7&gt;"));
    CHECK(contains(html, "node-&lt;c&gt;&amp;"));
    CHECK_FALSE(contains(html, "node-<c>"));
    CHECK(contains(html, "sender CPU-bound at 1 B"));

    // overview plus one plot per run, each well-formed XML
    const auto svgs = inline_svgs(html);
    CHECK(svgs.size() == 3);
    for (const auto& s : svgs) {
        std::string why;
        CHECK_MESSAGE(xml_well_formed(s, &why), why);
    }
    CHECK(contains(html, "id=\"overview\""));
    CHECK(contains(html, "href=\"#run-1\""));
    CHECK(contains(html, "href=\"#run-2\""));

    // models and tables
    CHECK(count_of(html, "Model t(n) = α + n/β") == 2);
    CHECK(contains(html, "2 µs"));
    CHECK(contains(html, "100 Gbit/s (12.5 GB/s)"));
    CHECK(contains(html, "n½ = α·β"));
    CHECK(count_of(html, "<h3>Latency (one-way, µs)</h3>") == 2);
    CHECK(count_of(html, "<h3>Bandwidth</h3>") == 2);
    CHECK(contains(html, "<td class=\"num\">256 KiB</td>"));
    CHECK(contains(html, "2026-11-29T12:00:00Z"));
}

TEST_CASE("a run that cannot be fitted says why; options drop plots and tables") {
    core::run_result r = sample_run("node-b", 2, 100);
    r.points.resize(2);  // one size: no model
    r.error = "peer went away";
    client::report_options opt;
    opt.plots = false;
    opt.point_tables = false;
    const auto html = client::render_html_report(std::span(&r, 1), {}, opt);
    CHECK(contains(html, "No model:"));
    CHECK(contains(html, "two or more message sizes"));
    CHECK(contains(html, "peer went away"));
    CHECK_FALSE(contains(html, "<svg"));
    CHECK_FALSE(contains(html, "<h3>Latency"));
    std::string err;
    CHECK_MESSAGE(html_balanced(html, err), err);
}

TEST_CASE("matrices: heatmaps, medians, bad links and suspects") {
    std::vector<analysis::link_sample> links;
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 5; ++j)
            if (i != j) {
                analysis::link_sample l;
                l.from = i;
                l.to = j;
                l.gbit_per_s = (i == 3 || j == 3) ? 30.0 : 95.0;
                l.lat_us = 4.0;
                links.push_back(l);
            }
    client::report_matrix m;
    m.hosts = {"h0", "h1", "h2", "h3-bad", "h4"};
    m.analysis = analysis::analyze_matrix(5, links);
    const auto html = client::render_html_report({}, std::span(&m, 1));
    std::string err;
    CHECK_MESSAGE(html_balanced(html, err), err);
    const auto svgs = inline_svgs(html);
    CHECK(svgs.size() == 2);  // bandwidth and latency heatmaps
    for (const auto& s : svgs) CHECK(xml_well_formed(s, nullptr));
    CHECK(contains(html, "Cluster matrix, 5 hosts"));
    CHECK(contains(html, "median bandwidth"));
    CHECK(contains(html, "<h3>Bad links</h3>"));
    CHECK(count_of(html, "<td>h3-bad</td>") == 8);  // every link from or to it
    CHECK(contains(html, "<span class=\"badcell\">h3-bad</span>"));
}

// Was a bug (issue 12): two runs between daemons on one host were both "vm → vm (tcp)".
TEST_CASE("runs between daemons on one host are told apart by address") {
    std::vector<core::run_result> runs{sample_run("vm", 2, 10), sample_run("vm", 2, 10)};
    runs[0].initiator.hostname = runs[1].initiator.hostname = "vm";
    runs[0].initiator.address = "127.0.0.1:7470";
    runs[0].peer.address = "127.0.0.1:7471";
    runs[1].initiator.address = "127.0.0.1:7480";
    runs[1].peer.address = "127.0.0.1:7481";
    const auto html = client::render_html_report(runs, {});
    CHECK_FALSE(contains(html, "vm → vm"));
    CHECK(count_of(html, "<h2>127.0.0.1:7470 → 127.0.0.1:7471 (tcp)</h2>") == 1);
    CHECK(count_of(html, "<h2>127.0.0.1:7480 → 127.0.0.1:7481 (tcp)</h2>") == 1);
    // The same path measured twice: the run id tells them apart.
    runs[1].initiator.address = "127.0.0.1:7470";
    runs[1].peer.address = "127.0.0.1:7471";
    runs[1].id = "run-second";
    const auto twice = client::render_html_report(runs, {});
    CHECK(contains(twice, "<h2>127.0.0.1:7470 → 127.0.0.1:7471 (tcp) · run-vm</h2>"));
    CHECK(contains(twice, "<h2>127.0.0.1:7470 → 127.0.0.1:7471 (tcp) · run-second</h2>"));
    // Different hosts keep their names.
    CHECK(client::run_label(sample_run("node-b", 2, 10)) == "node-a → node-b (tcp)");
}

// Was a bug (issue 12): 1 B at ~1e-4 Gbit/s printed as "0.00 Gbit/s".
TEST_CASE("small rates keep three significant digits, in the report and the text table") {
    CHECK(client::significant_text(0.000123456) == "0.000123");
    CHECK(client::significant_text(9.4137) == "9.41");
    CHECK(client::significant_text(94.137) == "94.1");
    CHECK(client::significant_text(941.37) == "941");
    CHECK(client::significant_text(12345.6) == "12346");
    CHECK(client::significant_text(9.9996) == "10.0");
    CHECK(client::significant_text(0) == "0");
    CHECK(client::significant_text(1e-9) == "0.00000000100");
    CHECK(client::significant_text(std::nan("")) == "-");
    core::run_result r = sample_run("node-b", 2, 100);
    for (auto& p : r.points)
        if (p.test == core::test_kind::bandwidth && p.size_bytes == 1) {
            p.gbit_per_s = 0.000123456;
            p.flows[0].gbit_per_s = p.gbit_per_s;
            p.flows[0].interval_min_gbit = 0.0000987;
            p.flows[0].interval_max_gbit = 0.000151;
        }
    const auto html = client::render_html_report(std::span(&r, 1), {});
    CHECK(contains(html, "<td class=\"num\">0.000123</td>"));
    CHECK(contains(html, "<td class=\"num\">0.0000154</td>"));  // GB/s
    CHECK(contains(html, "0.0000987 – 0.000151"));
    CHECK_FALSE(contains(html, ">0.00<"));
    CHECK_FALSE(contains(html, ">0.000<"));
    const auto table = client::render_run_table(r);
    CHECK(contains(table, "0.000123"));
    CHECK_FALSE(contains(table, "e-0"));
}

// Was a bug (issue 12): the same warning was repeated in every row of a point table.
TEST_CASE("point warnings are grouped once, with the sizes they apply to") {
    core::run_result r = sample_run("node-b", 2, 100);
    std::size_t bw_points = 0;
    for (auto& p : r.points) {
        if (p.test != core::test_kind::bandwidth) continue;
        ++bw_points;
        p.warnings.push_back(fmt::format("sender CPU-bound ({}% of a core per stream): the figure may be limited by the "
                                         "sender's CPU, not the path",
                                         95 + bw_points));
    }
    r.points[0].warnings.push_back("stopped at the byte limit: 1 GiB per direction per point");
    const auto html = client::render_html_report(std::span(&r, 1), {});
    std::string err;
    CHECK_MESSAGE(html_balanced(html, err), err);
    CHECK(count_of(html, "sender CPU-bound") == 1);
    CHECK(contains(html, "sender CPU-bound (96–" + std::to_string(95 + bw_points) + "% of a core per stream)"));
    CHECK(contains(html, "— every bandwidth point</span>"));
    CHECK(contains(html, "— latency at 1 B</span>"));
    CHECK(count_of(html, "stopped at the byte limit") == 1);
    // Each row points at its group.
    CHECK(count_of(html, "<a href=\"#run-1-w1\">W1</a>") == 1);
    CHECK(count_of(html, "<a href=\"#run-1-w2\">W2</a>") == bw_points);
    CHECK(contains(html, "id=\"run-1-w2\""));
    // Without point tables the warnings are still there, once.
    client::report_options opt;
    opt.point_tables = false;
    const auto brief = client::render_html_report(std::span(&r, 1), {}, opt);
    CHECK(count_of(brief, "sender CPU-bound") == 1);
    CHECK_FALSE(contains(brief, "href=\"#run-1-w"));
    // The text table lists the same groups, once each.
    const auto table = client::render_run_table(r);
    CHECK(count_of(table, "sender CPU-bound") == 1);
    CHECK(contains(table, "  - sender CPU-bound (96–" + std::to_string(95 + bw_points) +
                              "% of a core per stream): the figure may be limited by the sender's CPU, not the path "
                              "(every bandwidth point)\n"));
    CHECK(contains(table, "  - stopped at the byte limit: 1 GiB per direction per point (latency at 1 B)\n"));
}

// Was a bug (issue 12): a latency-only run had an empty bandwidth chart (and the reverse).
TEST_CASE("no empty chart: a latency-only run has no bandwidth panel, and the reverse") {
    core::run_result lat = sample_run("node-b", 2, 100), bw = lat;
    std::erase_if(lat.points, [](const core::point_result& p) { return p.test != core::test_kind::latency; });
    std::erase_if(bw.points, [](const core::point_result& p) { return p.test == core::test_kind::latency; });
    const auto lat_html = client::render_html_report(std::span(&lat, 1), {});
    CHECK(contains(lat_html, "One-way latency (p50"));
    CHECK_FALSE(contains(lat_html, "Bandwidth (goodput"));
    CHECK_FALSE(contains(lat_html, "no bandwidth points"));
    const auto bw_html = client::render_html_report(std::span(&bw, 1), {});
    CHECK(contains(bw_html, "Bandwidth (goodput"));
    CHECK_FALSE(contains(bw_html, "One-way latency (p50"));
    CHECK_FALSE(contains(bw_html, "no latency points"));
    // Two latency-only runs: the overview has no bandwidth panel either.
    std::vector<core::run_result> two{lat, lat};
    two[1].id = "run-other";
    const auto both = client::render_html_report(two, {});
    CHECK(inline_svgs(both).size() == 3);
    CHECK_FALSE(contains(both, "Bandwidth (goodput"));
    // A run with both keeps both.
    const auto full = sample_run("node-b", 2, 100);
    const auto full_html = client::render_html_report(std::span(&full, 1), {});
    CHECK(contains(full_html, "One-way latency (p50"));
    CHECK(contains(full_html, "Bandwidth (goodput"));
}

TEST_CASE("nothing to report is still a page") {
    const auto html = client::render_html_report({}, {});
    CHECK(contains(html, "Nothing to report"));
    std::string err;
    CHECK_MESSAGE(html_balanced(html, err), err);
}

}  // TEST_SUITE

}  // namespace html_report_test
