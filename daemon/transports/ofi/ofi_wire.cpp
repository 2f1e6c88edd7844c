#include "daemon/transports/ofi/ofi_wire.hpp"

#include "daemon/session/frame_channel.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace meshperf::daemon {
namespace {

bool provider_name_ok(const std::string& n) {
    return n.size() <= 64 && std::all_of(n.begin(), n.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ';';
           });
}

std::string provider_name(const nlohmann::json& v, const char* what) {
    if (!v.is_string() || !provider_name_ok(v.get_ref<const std::string&>()))
        throw session_error(fmt::format("the other side sent a {} that is not a libfabric provider name", what));
    return v.get<std::string>();
}

}  // namespace

std::string ofi_address_to_hex(const std::string& address) {
    std::string out;
    for (unsigned char c : address) out += fmt::format("{:02x}", c);
    return out;
}

std::string ofi_address_from_hex(const nlohmann::json& v) {
    const auto bad = [] {
        return session_error(fmt::format("the other side sent a libfabric address that is not 1..{} bytes of lower-case hex",
                                         max_ofi_address_bytes));
    };
    if (!v.is_string()) throw bad();
    const auto& s = v.get_ref<const std::string&>();
    if (s.empty() || s.size() % 2 || s.size() > 2 * max_ofi_address_bytes) throw bad();
    std::string out;
    for (std::size_t i = 0; i < s.size(); i += 2) {
        int value = 0;
        for (char c : {s[i], s[i + 1]}) {
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) throw bad();
            value = value * 16 + d;
        }
        out.push_back(static_cast<char>(value));
    }
    return out;
}

nlohmann::json to_json(const ofi_offer& o) { return {{"ofi_providers", o.providers}, {"ofi_provider", o.requested}}; }

ofi_offer ofi_offer_from_json(const nlohmann::json& body) {
    if (!body.is_object()) throw session_error("the other side's libfabric offer is not a JSON object");
    ofi_offer o;
    const auto list = body.find("ofi_providers");
    if (list == body.end() || !list->is_array() || list->size() > 64)
        throw session_error("the other side sent no list of at most 64 libfabric providers");
    for (const auto& v : *list) o.providers.push_back(provider_name(v, "provider in its list"));
    if (const auto it = body.find("ofi_provider"); it != body.end()) o.requested = provider_name(*it, "requested provider");
    return o;
}

std::vector<std::string> ofi_addresses_from_json(const nlohmann::json& body, std::size_t endpoints) {
    const auto it = body.is_object() ? body.find("addresses") : body.end();
    if (!body.is_object() || it == body.end() || !it->is_array() || it->size() != endpoints)
        throw session_error(fmt::format("the other side sent no libfabric address for each of the {} endpoints", endpoints));
    std::vector<std::string> out;
    for (const auto& v : *it) out.push_back(ofi_address_from_hex(v));
    return out;
}

nlohmann::json to_json(const ofi_link_description& d) {
    return {{"provider", d.provider}, {"address", ofi_address_to_hex(d.address)}, {"tag", d.tag}};
}

ofi_link_description ofi_link_description_from_json(const nlohmann::json& body) {
    if (!body.is_object()) throw session_error("the libfabric link description is not a JSON object");
    ofi_link_description d;
    d.provider = provider_name(body.value("provider", nlohmann::json()), "provider");
    d.address = ofi_address_from_hex(body.value("address", nlohmann::json()));
    const auto tag = body.find("tag");
    if (tag == body.end() || !tag->is_number_unsigned() || tag->get<std::uint64_t>() > 65535)
        throw session_error("the libfabric link description has no tag of 0..65535 for this rank's messages");
    d.tag = tag->get<std::uint64_t>();
    return d;
}

}  // namespace meshperf::daemon
