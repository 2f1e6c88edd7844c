// client/support/cli_wording and the `runs` table: messages from shared layers reworded for the CLI,
// and a long error cut in the table (issue 26's rough edges).
#include "client/support/cli_wording.hpp"
#include "client/render/table.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace cli_wording_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;

TEST_CASE("cli wording: the JSON library's tag, API fields and calls, and --memory host are reworded") {
    CHECK(client::json_error_text("[json.exception.parse_error.101] parse error at line 1, column 2: syntax error") ==
          "parse error at line 1, column 2: syntax error");
    CHECK(client::json_error_text("plain") == "plain");
    CHECK(client::with_option_name("field 'copies': unknown copy 'h2x'", "copies", "--copy") == "--copy: unknown copy 'h2x'");
    CHECK(client::with_option_name("field 'sizes': empty", "copies", "--copy") == "field 'sizes': empty");
    CHECK(client::with_runs_command("h:1: no run 'r-x' on this daemon (list runs with GET /v1/runs)", "h:1") ==
          "h:1: no run 'r-x' on this daemon (list them with: meshperf runs h:1)");
    const auto local = client::for_local_command("no NVIDIA driver: ...; install the NVIDIA driver, or measure with --memory host");
    CHECK(local.find("--memory host") == std::string::npos);
    CHECK(local.find("meshperf local measures copies to, from and between GPUs, so it needs one") != std::string::npos);
}

TEST_CASE("shortened: cut at a code point, with an ellipsis") {
    CHECK(client::shortened("abc", 3) == "abc");
    CHECK(client::shortened("abcdef", 4) == "abc…");
    CHECK(client::shortened("µµµµµ", 3) == "µµ…");  // two bytes each: never half a character
    CHECK(client::shortened("abc", 0).empty());
}

TEST_CASE("runs table: a long error is cut in the table, whole in JSON (issue 26: 290 characters wide)") {
    const std::string error(250, 'e');
    const nlohmann::json list{{"runs", {{{"id", "r-1"}, {"state", "failed"}, {"peer", "b:7470"}, {"created_at", "2026-12-03T13:00:00Z"},
                                          {"points", 0}, {"error", error}}}}};
    const auto table = client::render_run_list(list);
    std::istringstream lines(table);
    std::string line;
    std::size_t widest = 0;
    while (std::getline(lines, line)) widest = std::max(widest, line.size());
    CHECK(widest < 160);
    CHECK(table.find(std::string(client::run_list_error_width - 1, 'e') + "…") != std::string::npos);
    CHECK(table.find(error) == std::string::npos);
}

}  // namespace cli_wording_test
