// client/support/output_format: --format declared once for every command; a format a command does
// not offer is refused by the parser, and render() dispatches to the chosen renderer.
#include "client/support/output_format.hpp"

#include <doctest/doctest.h>
#include <stdexcept>

namespace output_format_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::client;

namespace {

/// Parses `args` for a command offering `offered`; returns the chosen format.
output_format parse(std::initializer_list<output_format> offered, std::vector<std::string> args) {
    CLI::App app{"test"};
    output_format f = output_format::nagios;
    add_format_option(app, f, offered);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last to first
    app.parse(args);
    return f;
}

}  // namespace

TEST_CASE("output format: the first offered is the default; names are case-insensitive") {
    CHECK(parse({output_format::table, output_format::json}, {}) == output_format::table);
    CHECK(parse({output_format::nagios, output_format::json}, {}) == output_format::nagios);
    CHECK(parse({output_format::table, output_format::json, output_format::csv}, {"--format", "csv"}) == output_format::csv);
    CHECK(parse({output_format::table, output_format::json}, {"--format", "JSON"}) == output_format::json);
}

TEST_CASE("output format: a format the command does not offer is a parse error naming the offered ones") {
    try {
        parse({output_format::table, output_format::json}, {"--format", "csv"});
        FAIL("csv was accepted");
    } catch (const CLI::ParseError& e) {
        CHECK(std::string(e.what()).find("csv") != std::string::npos);
        CHECK(std::string(e.what()).find("json") != std::string::npos);
    }
    CLI::App app{"test"};
    output_format f{};
    auto* opt = add_format_option(app, f, {output_format::table, output_format::json, output_format::csv});
    CHECK(opt->get_description() == "table, json or csv");
}

TEST_CASE("output format: render calls the chosen renderer and refuses a missing one") {
    int calls = 0;
    renderers r;
    r.table = [&] { ++calls; return std::string("t"); };
    r.json = [&] { ++calls; return std::string("{}\n"); };
    CHECK(render(output_format::json, r) == "{}\n");
    CHECK(render(output_format::table, r) == "t");
    CHECK(calls == 2);
    CHECK_THROWS_AS(render(output_format::csv, r), std::logic_error);
}

}  // namespace output_format_test
