// client/render/svg_collective: a collective run drawn per op, measured and predicted.
#include "client/render/html_report.hpp"
#include "client/render/svg_collective.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

namespace svg_collective_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using meshperf::client::render_collective_svg;
namespace client = meshperf::client;

namespace {

core::collective_point ring_point(std::uint64_t size, double seconds) {
    const std::vector<std::vector<double>> it(4, std::vector<double>{seconds, seconds * 1.1});
    const std::vector<std::vector<double>> sends(4, std::vector<double>{seconds / 2, seconds / 2});
    return core::assemble_collective_point(core::collective_op::allreduce, core::collective_algo::ring, 4, core::dtype::fp32,
                                           size, it, sends, {});
}

std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("a collective run is drawn as time and busbw panels, predictions dashed") {
    core::collective_result run;
    run.id = "r-1";
    run.spec.hosts = {"a:1", "b:1", "c:1", "d:1"};
    run.points = {ring_point(1 << 20, 0.01), ring_point(16 << 20, 0.12)};
    const std::vector<std::optional<double>> predicted{0.009, 0.11};
    const auto with = render_collective_svg(run, predicted);
    CHECK(with.find("allreduce (ring)") != std::string::npos);
    CHECK(with.find("Bus bandwidth") != std::string::npos);
    CHECK(count(with, "stroke-dasharray=\"8 5\"") == 2);  // one predicted curve per panel
    CHECK(with.find("nan") == std::string::npos);
    const auto without = render_collective_svg(run);
    CHECK(count(without, "stroke-dasharray=\"8 5\"") == 0);
    CHECK(without.find("dashed") == std::string::npos);
    core::collective_result empty;
    empty.spec.hosts = {"a:1", "b:1"};
    CHECK(render_collective_svg(empty).find("no sizes measured") != std::string::npos);
}

TEST_CASE("busbw is plotted in GB/s, as the table says, and the largest size has its tick label (issue 26)") {
    core::collective_result run;
    run.id = "r-1";
    run.spec.hosts = {"a:1", "b:1", "c:1", "d:1"};
    for (std::uint64_t n = 1 << 10; n <= (32u << 20); n *= 2) run.points.push_back(ring_point(n, 1e-5 + n * 1e-10));
    const auto svg = render_collective_svg(run);
    CHECK(svg.find("GB/s") != std::string::npos);
    CHECK(svg.find("Gbit/s") == std::string::npos);
    CHECK(svg.find(">32 MiB<") != std::string::npos);  // 1K..32M: 16 octaves labelled every 2nd from 1 KiB
    CHECK(svg.find(">16 MiB<") == std::string::npos);  // its label gives way to the last
    CHECK(svg.find(">1 KiB<") != std::string::npos);
}

TEST_CASE("meshperf report carries a collective run: ranks, plot, nccl-tests' columns and the prediction's error") {
    client::report_collective c;
    c.run.id = "r-9";
    c.run.state = core::run_state::completed;
    c.run.spec.hosts = {"a:1", "b:1", "c:1", "d:1"};
    c.run.points = {ring_point(1 << 20, 0.01)};
    c.predicted_time_s = {0.008};
    const auto html = client::render_html_report({}, {}, {}, std::span<const client::report_collective>(&c, 1));
    CHECK(html.find("Collective r-9: 4 ranks") != std::string::npos);
    CHECK(html.find("<svg") != std::string::npos);
    CHECK(html.find("<td>allreduce</td><td>ring</td><td>1 MiB</td>") != std::string::npos);
    const double error = (c.run.points[0].time_s - 0.008) / 0.008 * 100;  // time 0.0105 s: +31.2%
    CHECK(error > 30);
    CHECK(html.find(fmt::format("{:+.1f}%", error)) != std::string::npos);
    CHECK(html.find("1 collective run") != std::string::npos);
}

TEST_CASE("the report's contents list its collective sections too (issue 26)") {
    std::vector<client::report_collective> cs(2);
    for (std::size_t i = 0; i < cs.size(); ++i) {
        cs[i].run.id = fmt::format("c-{}", i + 1);
        cs[i].run.state = core::run_state::completed;
        cs[i].run.spec.hosts = {"a:1", "b:1", "c:1", "d:1"};
        cs[i].run.points = {ring_point(1 << 20, 0.01)};
    }
    const auto html = client::render_html_report({}, {}, {}, cs);
    REQUIRE(html.find("<nav>") != std::string::npos);
    CHECK(html.find("<li><a href=\"#collective-1\">Collective c-1: 4 ranks</a></li>") != std::string::npos);
    CHECK(html.find("<li><a href=\"#collective-2\">Collective c-2: 4 ranks</a></li>") != std::string::npos);
    CHECK(html.find("<section id=\"collective-2\">") != std::string::npos);
}

}  // namespace svg_collective_test
