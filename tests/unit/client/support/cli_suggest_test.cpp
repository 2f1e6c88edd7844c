#include "client/support/cli_suggest.hpp"
#include "client/commands/commands.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

namespace cli_suggest_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

TEST_SUITE("cli_suggest") {

TEST_CASE("edit distance counts inserts, deletes, substitutions and swaps") {
    CHECK(client::edit_distance("sweep", "sweep") == 0);
    CHECK(client::edit_distance("sweeep", "sweep") == 1);
    CHECK(client::edit_distance("swep", "sweep") == 1);
    CHECK(client::edit_distance("sewep", "sweep") == 1);  // two neighbours swapped
    CHECK(client::edit_distance("", "info") == 4);
    CHECK(client::edit_distance("plot", "plan") == 2);
}

TEST_CASE("nearest name: a typo or a unique abbreviation, nothing for a stranger") {
    const std::vector<std::string> commands{"sweep", "info", "runs", "show", "cancel", "matrix", "check",
                                            "baseline", "local", "plot", "report", "plan", "model"};
    CHECK(client::nearest_name("sweeep", commands) == "sweep");
    CHECK(client::nearest_name("chek", commands) == "check");
    CHECK(client::nearest_name("matirx", commands) == "matrix");
    CHECK(client::nearest_name("baselin", commands) == "baseline");
    CHECK(client::nearest_name("rport", commands) == "report");
    CHECK(client::nearest_name("bandwidth", commands).empty());
    CHECK(client::nearest_name("", commands).empty());
    const std::vector<std::string> options{"--duration", "--iterations", "--initiator", "--sizes"};
    CHECK(client::nearest_name("--duraton", options) == "--duration");
    CHECK(client::nearest_name("--dur", options) == "--duration");      // the only one it begins
    CHECK(client::nearest_name("--i", options).empty());                // two begin so: no guess
}

// Was a bug (issue 12): `meshperf sweeep` got CLI11's "A subcommand is required" or "The
// following arguments were not expected", without naming the command meant.
TEST_CASE("explain_unknown_name on the real command set") {
    CLI::App app;
    app.require_subcommand(1);
    client::common_options common;
    app.add_option("--token-file", common.token_file, "token");
    // Keep the runners: they own what the options write into.
    std::vector<client::command_runner> keep{client::add_sweep_command(app, common), client::add_check_command(app, common),
                                             client::add_baseline_command(app, common), client::add_plan_command(app, common)};
    auto explain = [&](std::vector<std::string> args) { return client::explain_unknown_name(app, args); };
    CHECK(explain({"sweeep", "node2"}) == "unknown command 'sweeep': did you mean 'sweep'?");
    CHECK(explain({"--token-file", "t", "chek", "node2"}) == "unknown command 'chek': did you mean 'check'?");
    CHECK(explain({"frobnicate"}) == "unknown command 'frobnicate': the commands are sweep, check, baseline, plan");
    CHECK(explain({"sweep", "node2", "--duraton", "5"}) ==
          "unknown option '--duraton' for 'meshperf sweep': did you mean '--duration'?");
    CHECK(explain({"sweep", "node2", "--sizes=64", "--itrations=5"}) ==
          "unknown option '--itrations' for 'meshperf sweep': did you mean '--iterations'?");
    CHECK(explain({"baseline", "sve", "node2"}) == "unknown 'meshperf baseline' command 'sve': did you mean 'save'?");
    CHECK(explain({"baseline", "save", "node2", "--max-tme", "1"}) ==
          "unknown option '--max-tme' for 'meshperf baseline save': did you mean '--max-time'?");
    CHECK(explain({"plan", "--totally-unknown"}).rfind("unknown option '--totally-unknown' for 'meshperf plan' (see", 0) == 0);
    // Known names, and option values that look like words, are no business of it.
    CHECK(explain({"sweep", "node2", "--duration", "0"}).empty());
    CHECK(explain({"sweep", "--initiator", "sweeep", "node2", "-o", "out.json", "--", "--not-an-option"}).empty());
    CHECK(explain({"check", "node2", "--min-gbit", "5"}).empty());
}

}  // TEST_SUITE

}  // namespace cli_suggest_test
