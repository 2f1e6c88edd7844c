// The route table's upgrade routes (daemon/api/route_table.hpp): /v1/session and /v1/stream
// are in the table, upgrade only a GET that asks for it, and need the peer checks.
#include "daemon/api/route_table.hpp"

#include <doctest/doctest.h>

namespace route_table_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::daemon;
namespace http = boost::beast::http;

namespace {
http_request request(http::verb method, std::string_view target, std::string_view connection) {
    http_request req{method, target, 11};
    if (!connection.empty()) req.set(http::field::connection, connection);
    return req;
}
}  // namespace

TEST_CASE("the upgrade routes name their upgrade, for a GET that asks for one") {
    CHECK(requested_upgrade(request(http::verb::get, "/v1/session", "Upgrade"), "/v1/session") == route_upgrade::session);
    CHECK(requested_upgrade(request(http::verb::get, "/v1/stream?token=t&index=1", "keep-alive, upgrade"), "/v1/stream") ==
          route_upgrade::stream);
    CHECK(requested_upgrade(request(http::verb::post, "/v1/session", "Upgrade"), "/v1/session") == route_upgrade::none);
    CHECK(requested_upgrade(request(http::verb::get, "/v1/session", ""), "/v1/session") == route_upgrade::none);
    CHECK(requested_upgrade(request(http::verb::get, "/v1/runs", "Upgrade"), "/v1/runs") == route_upgrade::none);
    CHECK(requested_upgrade(request(http::verb::get, "/v1/sessions", "Upgrade"), "/v1/sessions") == route_upgrade::none);
}

TEST_CASE("the upgrade routes are never open") {
    std::string id;
    for (const char* path : {"/v1/session", "/v1/stream"}) {
        const route* r = find_route(path, id);
        REQUIRE(r != nullptr);
        CHECK(r->access == route_access::peer);
        CHECK_FALSE(route_is_open(*r, false));
        CHECK(static_cast<bool>(r->any_method));  // anything but the upgrade: 404, as for an unknown path
    }
    CHECK(find_route("/healthz", id)->upgrade == route_upgrade::none);
}

}  // namespace route_table_test
