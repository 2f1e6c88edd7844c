/// Fuzz target: what the libfabric transport reads from another daemon
/// (daemon/transports/ofi/ofi_wire.hpp): a sweep's provider offer and endpoint addresses, and
/// a collective rank's link description. Peers are authenticated, but their JSON is not
/// trusted: session_error is the only outcome allowed for bad input. What is accepted must
/// write back to the same JSON form and read back identical; addresses stay within their bound.
#include "daemon/session/frame_channel.hpp"
#include "daemon/transports/ofi/ofi_wire.hpp"
#include "tests/fuzz/fuzz_checks.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

namespace {

using namespace meshperf;

void check_offer(const nlohmann::json& j) {
    daemon::ofi_offer o;
    try {
        o = daemon::ofi_offer_from_json(j);
    } catch (const daemon::session_error&) {
        return;
    }
    if (o.providers.size() > 64) fuzz::property_failed("more than 64 providers accepted");
    const auto again = daemon::ofi_offer_from_json(nlohmann::json::parse(daemon::to_json(o).dump()));
    if (again.providers != o.providers || again.requested != o.requested)
        fuzz::property_failed("an offer does not read back identical from its JSON form");
}

void check_addresses(const nlohmann::json& j) {
    for (std::size_t n : {1u, 2u, 4u}) {
        std::vector<std::string> a;
        try {
            a = daemon::ofi_addresses_from_json(j, n);
        } catch (const daemon::session_error&) {
            continue;
        }
        if (a.size() != n) fuzz::property_failed("addresses accepted for another count of endpoints");
        for (const auto& x : a) {
            if (x.empty() || x.size() > daemon::max_ofi_address_bytes) fuzz::property_failed("an address out of its bound accepted");
            if (daemon::ofi_address_from_hex(daemon::ofi_address_to_hex(x)) != x)
                fuzz::property_failed("an address does not read back identical from its hex");
        }
    }
}

void check_link(const nlohmann::json& j) {
    daemon::ofi_link_description d;
    try {
        d = daemon::ofi_link_description_from_json(j);
    } catch (const daemon::session_error&) {
        return;
    }
    const auto again = daemon::ofi_link_description_from_json(nlohmann::json::parse(daemon::to_json(d).dump()));
    if (again.provider != d.provider || again.address != d.address || again.tag != d.tag)
        fuzz::property_failed("a link description does not read back identical from its JSON form");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto j = nlohmann::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
    if (j.is_discarded()) return 0;
    check_offer(j);
    check_addresses(j);
    check_link(j);
    return 0;
}
