#include "transport/rdma/gid.hpp"

#include "transport/rdma/error.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <net/if.h>

namespace meshperf::transport::rdma {

std::string_view to_string(gid_type t) noexcept {
    switch (t) {
        case gid_type::ib: return "IB";
        case gid_type::roce_v1: return "RoCE v1";
        case gid_type::roce_v2: return "RoCE v2";
    }
    return "unknown";
}

std::string format_gid(const gid_bytes& g) {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, g.data(), text, sizeof text);
    return text;
}

std::optional<gid_bytes> parse_gid(std::string_view s) {
    std::string str(s);
    while (!str.empty() && (str.back() == '\n' || str.back() == ' ')) str.pop_back();
    gid_bytes g{};
    if (inet_pton(AF_INET6, str.c_str(), g.data()) != 1) return std::nullopt;
    return g;
}

std::optional<std::string> gid_ipv4(const gid_bytes& g) {
    for (int i = 0; i < 10; ++i)
        if (g[i] != 0) return std::nullopt;
    if (g[10] != 0xff || g[11] != 0xff) return std::nullopt;
    return fmt::format("{}.{}.{}.{}", g[12], g[13], g[14], g[15]);
}

std::optional<gid_bytes> gid_for_address(std::string_view ip) {
    std::string str(ip);
    gid_bytes g{};
    in_addr v4{};
    if (inet_pton(AF_INET, str.c_str(), &v4) == 1) {
        g[10] = g[11] = 0xff;
        std::memcpy(g.data() + 12, &v4, 4);
        return g;
    }
    if (inet_pton(AF_INET6, str.c_str(), g.data()) == 1) return g;
    return std::nullopt;
}

namespace {

std::string read_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// rdma-core's ibv_query_gid_table goes through the ioctl interface; old kernels lack it, so
// the sysfs attributes (present since 4.x) are the fallback.
std::vector<gid_entry> read_gid_table_sysfs(ibv_context* ctx, std::uint8_t port, int len) {
    std::vector<gid_entry> out;
    const std::string base = fmt::format("{}/ports/{}/", ctx->device->ibdev_path, port);
    for (int i = 0; i < len; ++i) {
        auto g = parse_gid(read_line(fmt::format("{}gids/{}", base, i)));
        if (!g || *g == gid_bytes{}) continue;
        gid_entry e;
        e.index = i;
        e.gid = *g;
        const std::string type = read_line(fmt::format("{}gid_attrs/types/{}", base, i));
        e.type = type == "RoCE v2" ? gid_type::roce_v2
                 : type.find("RoCE") != std::string::npos ? gid_type::roce_v1
                                                           : gid_type::ib;
        e.netdev = read_line(fmt::format("{}gid_attrs/ndevs/{}", base, i));
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace

std::vector<gid_entry> read_gid_table(ibv_context* ctx, std::uint8_t port) {
    ibv_device_attr dev{};
    if (int rc = ibv_query_device(ctx, &dev))
        throw_errno(rc, fmt::format("{}: ibv_query_device", ibv_get_device_name(ctx->device)));
    std::size_t total = 0;
    int port_len = 0;
    for (int p = 1; p <= dev.phys_port_cnt; ++p) {
        ibv_port_attr pa{};
        if (int rc = ibv_query_port(ctx, static_cast<std::uint8_t>(p), &pa))
            throw_errno(rc, fmt::format("{} port {}: ibv_query_port",
                                        ibv_get_device_name(ctx->device), p));
        total += static_cast<std::size_t>(pa.gid_tbl_len);
        if (p == port) port_len = pa.gid_tbl_len;
    }
    std::vector<ibv_gid_entry> entries(total ? total : 1);
    const ssize_t n = ibv_query_gid_table(ctx, entries.data(), entries.size(), 0);
    if (n < 0) {
        if (n == -EOPNOTSUPP || n == -ENOSYS || n == -EPROTONOSUPPORT)
            return read_gid_table_sysfs(ctx, port, port_len);
        throw_errno(static_cast<int>(-n), fmt::format("{} port {}: ibv_query_gid_table",
                                                      ibv_get_device_name(ctx->device), port));
    }
    std::vector<gid_entry> out;
    for (ssize_t i = 0; i < n; ++i) {
        const auto& src = entries[static_cast<std::size_t>(i)];
        if (src.port_num != port) continue;
        gid_entry e;
        e.index = static_cast<int>(src.gid_index);
        std::memcpy(e.gid.data(), src.gid.raw, 16);
        e.type = src.gid_type == IBV_GID_TYPE_ROCE_V2   ? gid_type::roce_v2
                 : src.gid_type == IBV_GID_TYPE_ROCE_V1 ? gid_type::roce_v1
                                                        : gid_type::ib;
        char name[IF_NAMESIZE] = {};
        if (src.ndev_ifindex && if_indextoname(src.ndev_ifindex, name)) e.netdev = name;
        out.push_back(std::move(e));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    return out;
}

const gid_entry* find_gid_for_address(const std::vector<gid_entry>& table, std::string_view ip) {
    const auto want = gid_for_address(ip);
    if (!want) return nullptr;
    for (const auto& e : table)
        if (e.type == gid_type::roce_v2 && e.gid == *want) return &e;
    return nullptr;
}

}  // namespace meshperf::transport::rdma
