#include "transport/rdma/endpoint_info.hpp"

#include "core/error.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::transport::rdma {

namespace {

[[noreturn]] void bad(const std::string& what) {
    throw core::spec_error("RDMA endpoint description from the peer: " + what);
}

const nlohmann::json& field(const nlohmann::json& j, const char* name) {
    auto it = j.find(name);
    if (it == j.end()) bad(fmt::format("missing field '{}'", name));
    return *it;
}

std::uint64_t get_uint(const nlohmann::json& j, const char* name, std::uint64_t max) {
    const auto& v = field(j, name);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        bad(fmt::format("'{}' must be a non-negative integer", name));
    const auto u = v.get<std::uint64_t>();
    if (u > max) bad(fmt::format("'{}' = {} is out of range (max {})", name, u, max));
    return u;
}

std::string get_string(const nlohmann::json& j, const char* name) {
    const auto& v = field(j, name);
    if (!v.is_string()) bad(fmt::format("'{}' must be a string", name));
    return v.get<std::string>();
}

}  // namespace

nlohmann::json to_json(const endpoint_info& e) {
    nlohmann::json qps = nlohmann::json::array();
    for (const auto& q : e.qps)
        qps.push_back({{"qpn", q.qpn}, {"psn", q.psn}, {"addr", fmt::format("{:#x}", q.addr)},
                       {"rkey", q.rkey}, {"length", q.length}});
    return {{"schema", endpoint_schema},
            {"device", e.device},
            {"port", e.port},
            {"link_layer", e.link_layer},
            {"lid", e.lid},
            {"gid", format_gid(e.gid)},
            {"gid_index", e.gid_index},
            {"mtu", e.mtu},
            {"max_rd_atomic", e.max_rd_atomic},
            {"max_inline", e.max_inline},
            {"qps", std::move(qps)}};
}

endpoint_info endpoint_info_from_json(const nlohmann::json& j) {
    if (!j.is_object()) bad("not a JSON object");
    if (get_string(j, "schema") != endpoint_schema)
        bad(fmt::format("schema '{}' is not '{}' (peer runs another meshperf version?)",
                        get_string(j, "schema"), endpoint_schema));
    endpoint_info e;
    e.device = get_string(j, "device");
    e.port = static_cast<std::uint8_t>(get_uint(j, "port", 255));
    e.link_layer = get_string(j, "link_layer");
    if (e.link_layer != "Ethernet" && e.link_layer != "InfiniBand")
        bad(fmt::format("link_layer '{}' is neither Ethernet nor InfiniBand", e.link_layer));
    e.lid = static_cast<std::uint16_t>(get_uint(j, "lid", 0xffff));
    const auto gid = parse_gid(get_string(j, "gid"));
    if (!gid) bad(fmt::format("gid '{}' is not an IPv6-form GID", get_string(j, "gid")));
    e.gid = *gid;
    e.gid_index = static_cast<int>(get_uint(j, "gid_index", 0xffff));
    e.mtu = static_cast<std::uint32_t>(get_uint(j, "mtu", 4096));
    if (e.mtu != 256 && e.mtu != 512 && e.mtu != 1024 && e.mtu != 2048 && e.mtu != 4096)
        bad(fmt::format("mtu {} is not one of 256, 512, 1024, 2048, 4096", e.mtu));
    e.max_rd_atomic = static_cast<std::uint32_t>(get_uint(j, "max_rd_atomic", 255));
    e.max_inline = static_cast<std::uint32_t>(get_uint(j, "max_inline", 1u << 20));
    const auto& qps = field(j, "qps");
    if (!qps.is_array() || qps.empty()) bad("'qps' must be a non-empty array");
    for (const auto& q : qps) {
        if (!q.is_object()) bad("each entry of 'qps' must be an object");
        qp_endpoint p;
        p.qpn = static_cast<std::uint32_t>(get_uint(q, "qpn", 0xffffff));
        p.psn = static_cast<std::uint32_t>(get_uint(q, "psn", 0xffffff));
        const std::string addr = get_string(q, "addr");
        char* end = nullptr;
        errno = 0;
        p.addr = std::strtoull(addr.c_str(), &end, 16);
        if (addr.size() < 3 || addr.compare(0, 2, "0x") != 0 || *end != '\0' || errno != 0)
            bad(fmt::format("qps addr '{}' is not a 0x-prefixed hex address", addr));
        p.rkey = static_cast<std::uint32_t>(get_uint(q, "rkey", 0xffffffffu));
        p.length = get_uint(q, "length", ~0ull);
        if (p.length == 0) bad("qps length must be positive");
        e.qps.push_back(p);
    }
    return e;
}

void to_json(nlohmann::json& j, const endpoint_info& info) { j = to_json(info); }
void from_json(const nlohmann::json& j, endpoint_info& info) { info = endpoint_info_from_json(j); }

}  // namespace meshperf::transport::rdma
