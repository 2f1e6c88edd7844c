// What a daemon takes from its peer's session messages (daemon/session/session_protocol.hpp).
#include "daemon/session/session_protocol.hpp"

#include <doctest/doctest.h>

namespace session_protocol_test {  // one per test file: the unit tests are built in batches (unity build)

using meshperf::daemon::peer_memory_notes;
using nlohmann::json;

TEST_CASE("peer_memory_notes: strings only, at most 8 of at most 500 characters") {
    CHECK(peer_memory_notes(json::object()).empty());
    CHECK(peer_memory_notes(json{{"memory_notes", "not an array"}}).empty());
    const auto notes = peer_memory_notes(json{{"memory_notes", {"peer memory cuda:0: staged", 7, nullptr, std::string(900, 'x')}}});
    REQUIRE(notes.size() == 2);
    CHECK(notes[0] == "peer memory cuda:0: staged");
    CHECK(notes[1].size() == 500);
    CHECK(peer_memory_notes(json{{"memory_notes", json(std::vector<std::string>(20, "n"))}}).size() == 8);
}

}  // namespace session_protocol_test
