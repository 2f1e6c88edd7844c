#pragma once
/// The HTTP side of reaching a peer daemon: the upgrade request every session and data
/// stream opens with, and the reason a refusal gives.
#include "daemon/runtime/context.hpp"
#include "transport/http_client.hpp"

#include <string>

namespace meshperf::daemon {

/// A GET of `target` asking to upgrade, with the session protocol version and, when the
/// cluster has one, the bearer token.
transport::http_request upgrade_request(const daemon_context& ctx, std::string target);

/// The "error" sentence of a refusal's JSON body; empty when it has none.
std::string refusal_message(const transport::http_response& r);

}  // namespace meshperf::daemon
