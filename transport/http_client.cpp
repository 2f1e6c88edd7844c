#include "transport/http_client.hpp"

#include "transport/http_reader.hpp"
#include "transport/tls.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <system_error>
#include <utility>

namespace meshperf::transport {
namespace {

/// Whether the Upgrade header answered names the protocol asked for (case-insensitive).
bool upgrade_matches(const std::string& answered, const std::string& protocol) {
    return answered.size() == protocol.size() &&
           std::equal(answered.begin(), answered.end(), protocol.begin(), [](unsigned char a, unsigned char b) {
               return std::tolower(a) == std::tolower(b);
           });
}

}  // namespace

upgraded_connection http_upgrade(const endpoint_address& to, const http_request& req, const std::string& protocol,
                                 std::chrono::milliseconds timeout, http_response& refused, const tls_context* tls,
                                 const std::string& from) {
    const auto deadline = clock::now() + timeout;
    auto s = open_http_stream(to, tls, deadline, from);
    http_request up = req;
    up.headers["Connection"] = "Upgrade";
    up.headers["Upgrade"] = protocol;
    http_reader rd(*s, timeout, deadline);
    http_response r;
    try {
        send_http_request(*s, to, up, false, deadline);
        r = rd.read_head();
        if (r.status != 101) {
            rd.read_body(r, [&](std::string_view d) { r.body.append(d); return r.body.size() < (1u << 20); });
            refused = std::move(r);
            return {};
        }
    } catch (const closed_unanswered& e) {
        if (e.reset()) throw std::system_error(e.reset());  // a reset reads as one, as before the shared reader
        throw;
    } catch (const std::system_error& e) {
        if (e.code() != std::errc::timed_out) throw;
        throw answer_timeout(fmt::format("accepted the connection but did not answer the upgrade within {:.1f} s",
                                         std::chrono::duration<double>(timeout).count()));
    }
    if (!upgrade_matches(r.headers["upgrade"], protocol))
        throw http_protocol_error(fmt::format("upgraded to \"{}\" instead of \"{}\"", r.headers["upgrade"], protocol));
    return {std::move(s), rd.take_leftover()};
}

}  // namespace meshperf::transport
