#pragma once
/// One check every outbound TCP connection of the process passes: connect_tcp asks it for
/// each address a name resolves to, just before connecting, so neither a rail address nor a
/// DNS answer can take a connection (and the token it carries) past it. The daemon installs
/// its allowed_peer_cidrs here at start; the CLI installs nothing (every address passes).
#include <functional>
#include <optional>
#include <string>

namespace meshperf::transport {

/// Why a connection to the IP literal `ip` is refused, or std::nullopt when it may go.
using connect_policy = std::function<std::optional<std::string>(const std::string& ip)>;

/// Installs the process's policy (an empty function: allow all). Call it once at start,
/// before any thread connects: it is read without a lock.
void set_connect_policy(connect_policy policy);

/// The installed policy's answer for `ip` (std::nullopt without a policy).
std::optional<std::string> connect_refusal(const std::string& ip);

}  // namespace meshperf::transport
