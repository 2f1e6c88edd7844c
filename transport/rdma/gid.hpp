#pragma once
/// GID tables: reading them with their types, formatting, and choosing the GID that carries
/// a given IP address (RoCE v2).
#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::transport::rdma {

using gid_bytes = std::array<std::uint8_t, 16>;

enum class gid_type { ib, roce_v1, roce_v2 };

/// "IB", "RoCE v1", "RoCE v2".
std::string_view to_string(gid_type) noexcept;

/// One valid entry of a port's GID table.
struct gid_entry {
    int index = 0;
    gid_bytes gid{};
    gid_type type = gid_type::ib;
    std::string netdev;  ///< the Ethernet device behind a RoCE GID; empty for IB
};

/// IPv6 text form ("fe80::1", "::ffff:192.0.2.1").
std::string format_gid(const gid_bytes&);
/// Parses the IPv6 text form (also sysfs's "fe80:0000:..."); nullopt when malformed.
std::optional<gid_bytes> parse_gid(std::string_view);
/// The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d); nullopt otherwise.
std::optional<std::string> gid_ipv4(const gid_bytes&);
/// An IP address (IPv4, IPv6, or IPv4-mapped IPv6) as the GID that carries it in RoCE v2;
/// nullopt when ip is not an address literal.
std::optional<gid_bytes> gid_for_address(std::string_view ip);

/// The valid entries of port's GID table, in index order, with types
/// (ibv_query_gid_table; sysfs gid_attrs where that is unsupported). Throws rdma_error.
std::vector<gid_entry> read_gid_table(ibv_context* ctx, std::uint8_t port);

/// The RoCE v2 entry whose GID carries ip; nullptr when none.
const gid_entry* find_gid_for_address(const std::vector<gid_entry>& table, std::string_view ip);

}  // namespace meshperf::transport::rdma
