#include "daemon/session/peer_upgrade.hpp"

#include "daemon/session/session_protocol.hpp"

#include <nlohmann/json.hpp>

namespace meshperf::daemon {

transport::http_request upgrade_request(const daemon_context& ctx, std::string target) {
    transport::http_request req;
    req.target = std::move(target);
    req.headers[protocol_header] = std::to_string(session_protocol_version());
    req.headers[instance_header] = ctx.instance_id;  // the peer refuses a session from itself
    if (!ctx.token.empty()) req.headers["Authorization"] = "Bearer " + ctx.token;
    return req;
}

std::string refusal_message(const transport::http_response& r) {
    const auto body = nlohmann::json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("error") && body["error"].is_string()) return body["error"].get<std::string>();
    return {};
}

}  // namespace meshperf::daemon
