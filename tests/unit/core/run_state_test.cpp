#include "core/collective/result.hpp"
#include "core/result.hpp"
#include "core/run_state.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace run_state_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;
using nlohmann::json;

TEST_CASE("run states are spelled in JSON as before, and read back") {
    for (const auto& [s, word] : {std::pair{run_state::queued, "queued"}, std::pair{run_state::running, "running"},
                                  std::pair{run_state::completed, "completed"}, std::pair{run_state::failed, "failed"},
                                  std::pair{run_state::cancelled, "cancelled"}}) {
        CHECK(to_string(s) == word);
        CHECK(parse_run_state(word) == s);
        CHECK(recorded_state::from_text(word) == s);
        CHECK(recorded_state(s).text() == word);
    }
    CHECK_FALSE(parse_run_state("Completed").has_value());
    CHECK(recorded_state(run_state::queued).in_progress());
    CHECK(recorded_state(run_state::running).in_progress());
    CHECK_FALSE(recorded_state(run_state::cancelled).in_progress());
}

TEST_CASE("a word that names no state is kept as it was read, and names none") {
    const auto odd = recorded_state::from_text("paused?");
    CHECK(odd.text() == "paused?");
    CHECK_FALSE(odd.known().has_value());
    CHECK_FALSE(odd.empty());
    CHECK_FALSE(odd.in_progress());
    CHECK(odd != run_state::failed);
    const recorded_state none;
    CHECK(none.empty());
    CHECK(none.text().empty());
    CHECK(recorded_state::from_text("") == none);
}

TEST_CASE("a sweep's and a collective's odd state goes back out as it came in") {
    json sweep{{"schema", result_schema}, {"id", "r-1"}, {"state", "half-done"}, {"created_at", "t"}};
    const auto run = run_result_from_json(sweep);
    CHECK(run.state.text() == "half-done");
    CHECK(to_json(run)["state"] == "half-done");
    json without = sweep;
    without.erase("state");
    CHECK(to_json(run_result_from_json(without))["state"] == "");

    collective_result c;
    c.id = "r-2";
    c.state = recorded_state::from_text("odd");
    c.created_at = "t";
    c.spec.hosts = {"a:1", "b:1"};
    const auto j = to_json(c);
    CHECK(j["state"] == "odd");
    CHECK(j["schema"] == collective_result_schema);
}

TEST_CASE("both kinds write the one header: the same fields, null while empty") {
    run_result sweep;
    collective_result coll;
    for (run_header* h : {static_cast<run_header*>(&sweep), static_cast<run_header*>(&coll)}) {
        h->id = "r-3";
        h->state = run_state::failed;
        h->created_at = "c";
        h->warnings = {"w"};
    }
    const auto a = to_json(sweep);
    const auto b = to_json(coll);
    for (const char* key : {"id", "state", "created_at", "finished_at", "error", "warnings"}) CHECK(a[key] == b[key]);
    CHECK(a["finished_at"].is_null());
    CHECK(a["error"].is_null());
    CHECK(a["state"] == "failed");
}

}  // namespace run_state_test
