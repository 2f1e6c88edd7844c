#pragma once
/// What the libfabric transport reads from another daemon, and writes for it: the provider
/// offer and the endpoint addresses of a sweep's `endpoint` frames (ofi_points), and a
/// collective rank's link description (ofi_links). Peers are authenticated, but what they
/// send is not trusted: bad input is a session_error naming what is wrong, nothing else
/// (tests/fuzz/ofi_wire_json_fuzz.cpp).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshperf::daemon {

/// Longest endpoint address accepted (bytes; EFA's are 32, tcp's a sockaddr).
inline constexpr std::size_t max_ofi_address_bytes = 512;

/// An endpoint address as the wire carries it: lower-case hex.
std::string ofi_address_to_hex(const std::string& address);
/// Throws session_error for anything but 2..2×max_ofi_address_bytes hex digits.
std::string ofi_address_from_hex(const nlohmann::json& v);

/// The initiator's offer: its providers (best first) and the one asked (empty: the best
/// common). Names are those of fi_info -l: letters, digits, '_', '-', ';'; at most 64 of
/// at most 64 characters. Throws session_error.
struct ofi_offer {
    std::vector<std::string> providers;
    std::string requested;
};
nlohmann::json to_json(const ofi_offer&);
ofi_offer ofi_offer_from_json(const nlohmann::json& body);

/// The `addresses` of an endpoint frame: exactly `endpoints` of them. Throws session_error.
std::vector<std::string> ofi_addresses_from_json(const nlohmann::json& body, std::size_t endpoints);

/// A collective rank's description of its endpoint to one peer: its provider, its address,
/// and the tag the peer must put on messages to it. Throws session_error.
struct ofi_link_description {
    std::string provider;
    std::string address;
    std::uint64_t tag = 0;
};
nlohmann::json to_json(const ofi_link_description&);
ofi_link_description ofi_link_description_from_json(const nlohmann::json& body);

}  // namespace meshperf::daemon
