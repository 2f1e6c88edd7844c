#include "transport/rdma/endpoint.hpp"

#include "core/error.hpp"
#include "transport/rdma/error.hpp"
#include "transport/rdma/device_registration.hpp"
#include "transport/rdma/memlock.hpp"

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>
#include <random>

namespace meshperf::transport::rdma {

namespace {

std::string describe_gids(const std::vector<gid_entry>& table) {
    std::string out;
    for (const auto& e : table) {
        if (!out.empty()) out += ", ";
        out += fmt::format("{}: {} {}", e.index, to_string(e.type), format_gid(e.gid));
    }
    return out.empty() ? "none" : out;
}

bool port_active(const device_context& ctx, std::uint8_t port, ibv_port_attr* out = nullptr) {
    const auto attr = ctx.query();
    if (port < 1 || port > attr.phys_port_cnt) return false;
    ibv_port_attr pa{};
    if (ibv_query_port(ctx.get(), port, &pa) != 0) return false;
    if (out) *out = pa;
    return pa.state == IBV_PORT_ACTIVE;
}

// Picks the device when the options do not name one: the one that owns the session's
// address, so both daemons agree on the path without flags.
std::unique_ptr<device_context> choose_device(const endpoint_options& o) {
    if (!o.device.empty()) return std::make_unique<device_context>(open_device(o.device));
    device_list list;
    if (list.empty()) throw_errno(ENODEV, list.reason());
    if (!o.local_ip.empty() && !o.gid_index) {
        std::string seen;
        for (auto* dev : list.devices()) {
            try {
                auto ctx = std::make_unique<device_context>(dev);
                if (ctx->query().phys_port_cnt < o.port) continue;
                const auto table = read_gid_table(ctx->get(), o.port);
                if (find_gid_for_address(table, o.local_ip)) return ctx;
                seen += fmt::format("{}{} port {} [{}]", seen.empty() ? "" : "; ", ctx->name(),
                                    o.port, describe_gids(table));
            } catch (const rdma_error&) {
                continue;  // a device we cannot open or query is not the one
            }
        }
        for (auto* dev : list.devices()) {
            try {
                auto ctx = std::make_unique<device_context>(dev);
                ibv_port_attr pa{};
                if (port_active(*ctx, o.port, &pa) && pa.link_layer == IBV_LINK_LAYER_INFINIBAND)
                    return ctx;  // IPoIB: the address is not in the GID table
            } catch (const rdma_error&) {
            }
        }
        throw_errno(EADDRNOTAVAIL,
                    fmt::format("no RDMA device has a RoCE v2 GID for {} on port {} (GIDs: {}): "
                                "name the device and GID index, or use the address of the "
                                "RoCE interface",
                                o.local_ip, o.port, seen.empty() ? "none" : seen));
    }
    for (auto* dev : list.devices()) {
        try {
            auto ctx = std::make_unique<device_context>(dev);
            if (port_active(*ctx, o.port)) return ctx;
        } catch (const rdma_error&) {
        }
    }
    // None is active: open the first, so the port check below names what is wrong with it.
    return std::make_unique<device_context>(list.devices().front());
}

gid_entry choose_gid(const std::vector<gid_entry>& table, const endpoint_options& o,
                     const ibv_port_attr& pa, const std::string& where) {
    if (o.gid_index) {
        for (const auto& e : table)
            if (e.index == *o.gid_index) return e;
        throw_errno(EINVAL, fmt::format("{} has no GID at index {} (table length {}; valid: {})",
                                        where, *o.gid_index, pa.gid_tbl_len, describe_gids(table)));
    }
    if (table.empty()) throw_errno(EADDRNOTAVAIL, where + " has no GID (is the netdev up?)");
    if (pa.link_layer != IBV_LINK_LAYER_ETHERNET) return table.front();
    if (!o.local_ip.empty()) {
        if (const auto* e = find_gid_for_address(table, o.local_ip)) return *e;
        throw_errno(EADDRNOTAVAIL,
                    fmt::format("{} has no RoCE v2 GID for {} (GIDs: {}): set the GID index, or "
                                "use the address of the RoCE interface",
                                where, o.local_ip, describe_gids(table)));
    }
    for (const auto& e : table)
        if (e.type == gid_type::roce_v2 && gid_ipv4(e.gid)) return e;
    for (const auto& e : table)
        if (e.type == gid_type::roce_v2) return e;
    return table.front();
}

void check_options(const endpoint_options& o, const ibv_device_attr& a, const ibv_port_attr& pa,
                   const std::string& where) {
    auto bad = [&](const std::string& what) { throw core::spec_error(where + ": " + what); };
    if (o.qps < 1) bad("qps must be at least 1");
    if (o.qps > static_cast<std::uint32_t>(a.max_qp)) bad(fmt::format("qps {} exceeds the device's {} QPs", o.qps, a.max_qp));
    if (o.max_message_bytes < 1) bad("max_message_bytes must be at least 1");
    const std::uint64_t max_msg = std::min<std::uint64_t>(pa.max_msg_sz, 1ull << 30);
    if (o.max_message_bytes > max_msg)
        bad(fmt::format("message size {} exceeds the largest RDMA message {}", o.max_message_bytes, max_msg));
    if (o.tx_depth < 1 || o.tx_depth > static_cast<std::uint32_t>(a.max_qp_wr))
        bad(fmt::format("tx_depth {} must be in 1..{}", o.tx_depth, a.max_qp_wr));
    if (o.rx_depth < 1 || o.rx_depth > static_cast<std::uint32_t>(a.max_qp_wr))
        bad(fmt::format("rx_depth {} must be in 1..{}", o.rx_depth, a.max_qp_wr));
    if (o.tx_depth + o.rx_depth > static_cast<std::uint32_t>(a.max_cqe))
        bad(fmt::format("tx_depth + rx_depth {} exceeds the device's {} CQ entries",
                        o.tx_depth + o.rx_depth, a.max_cqe));
}

// Registers a slot's memory: host memory with ibv_reg_mr; device memory by dma-buf or
// nvidia-peermem, recording which in `info`.
memory_region register_slot_memory(const protection_domain& pd, const endpoint_options& o, const std::string& dev,
                                   const host_buffer& buffer, device_allocation* device,
                                   std::optional<device_registration_info>& info) {
    if (!device) return memory_region(pd, buffer.data(), buffer.size(), buffer_access, dev);
    auto r = register_device_memory(pd, *device, o.gpu_memory->caps(), buffer_access,
                                    fmt::format("{} with {}", dev, o.gpu_memory->name()));
    info = device_registration_info{r.path, std::move(r.notes)};
    return memory_region(r.mr);
}

}  // namespace

qp_slot::qp_slot(const device_context& ctx, const protection_domain& pd,
                 const endpoint_options& o, const std::string& dev, ibv_comp_channel* events)
    : cq(ctx, static_cast<int>(o.tx_depth + o.rx_depth), events),
      buffer(o.gpu_memory ? host_buffer() : host_buffer(2 * o.max_message_bytes)),
      device(o.gpu_memory ? o.gpu_memory->allocate(2 * o.max_message_bytes) : nullptr),
      length(o.max_message_bytes),
      mr(register_slot_memory(pd, o, dev, buffer, device.get(), registration)),
      qp(pd, cq, cq, qp_caps{o.tx_depth, o.rx_depth, o.inline_bytes}, dev),
      reference(o.max_message_bytes),
      tx_depth(o.tx_depth),
      rx_depth(o.rx_depth) {}

void qp_slot::top_up_receives() {
    constexpr std::uint32_t chunk = 32;
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(rx()), static_cast<std::uint32_t>(length), mr.lkey()};
    ibv_recv_wr wrs[chunk]{};
    while (rx_posted < rx_depth) {
        const std::uint32_t n = std::min(chunk, rx_depth - rx_posted);
        for (std::uint32_t i = 0; i < n; ++i) {
            wrs[i].wr_id = 0;
            wrs[i].sg_list = &sge;
            wrs[i].num_sge = 1;
            wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
        }
        ibv_recv_wr* bad = nullptr;
        if (int rc = ibv_post_recv(qp.get(), wrs, &bad))
            throw_errno(rc, fmt::format("QP {:#x}: ibv_post_recv", qp.qpn()));
        rx_posted += n;
    }
}

endpoint::endpoint(const endpoint_options& options) : options_(options) {
    ctx_ = choose_device(options_);
    const std::string dev = ctx_->name();
    const ibv_device_attr attr = ctx_->query();
    const ibv_port_attr pa = ctx_->query_port(options_.port);  // throws for a missing port
    const std::string at = where();
    if (pa.state != IBV_PORT_ACTIVE)
        throw_errno(ENETDOWN, fmt::format("{} is {}, not ACTIVE: check the link (ibstat, "
                                          "`ip link` of the RoCE netdev) and, on InfiniBand, "
                                          "the subnet manager",
                                          at, port_state_name(pa.state)));
    check_options(options_, attr, pa, at);
    const auto table = read_gid_table(ctx_->get(), options_.port);
    const gid_entry gid = choose_gid(table, options_, pa, at);
    if (!options_.gpu_memory) check_memlock(2ull * options_.max_message_bytes * options_.qps, at);

    pd_ = std::make_unique<protection_domain>(*ctx_);
    if (options_.completion_events) events_ = std::make_unique<completion_channel>(*ctx_);
    std::random_device rd;
    std::mt19937 rng(rd());
    for (std::uint32_t i = 0; i < options_.qps; ++i) {
        auto s = std::make_unique<qp_slot>(*ctx_, *pd_, options_, dev, events_ ? events_->get() : nullptr);
        s->psn = rng() & 0xffffff;
        s->qp.to_init(options_.port, buffer_access);
        slots_.push_back(std::move(s));
    }

    info_.device = dev;
    info_.port = options_.port;
    info_.link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
    info_.lid = pa.lid;
    info_.gid = gid.gid;
    info_.gid_index = gid.index;
    info_.mtu = mtu_bytes(pa.active_mtu);
    info_.max_rd_atomic = static_cast<std::uint32_t>(
        std::clamp(std::min(attr.max_qp_rd_atom, attr.max_qp_init_rd_atom), 1, 16));
    info_.max_inline = slots_.front()->qp.max_inline();
    for (const auto& s : slots_)
        info_.qps.push_back({s->qp.qpn(), s->psn, reinterpret_cast<std::uint64_t>(s->rx()),
                             s->mr.rkey(), s->length});
}

endpoint::~endpoint() = default;  // slots (QP, MR, buffer, CQ) before the PD, then the device

std::string endpoint::where() const {
    return fmt::format("{} port {}", ctx_ ? ctx_->name() : options_.device, options_.port);
}

std::string endpoint::gpu_registration() const {
    if (slots_.empty() || !slots_.front()->registration) return {};
    return std::string(core::to_string(slots_.front()->registration->path));
}

endpoint_info endpoint::qp_info(std::size_t i) const {
    endpoint_info one = info_;
    one.qps = {info_.qps.at(i)};
    return one;
}

void endpoint::connect(const endpoint_info& remote) {
    if (connected_) throw core::spec_error(where() + ": endpoint is already connected");
    if (remote.qps.size() != slots_.size())
        throw core::spec_error(fmt::format("{}: the peer has {} QPs, this side {}", where(),
                                           remote.qps.size(), slots_.size()));
    for (std::size_t i = 0; i < slots_.size(); ++i) connect_slot(i, remote, remote.qps[i]);
    connected_ = true;
}

void endpoint::connect_qp(std::size_t i, const endpoint_info& remote) {
    if (i >= slots_.size()) throw core::spec_error(fmt::format("{}: no QP {}", where(), i));
    if (remote.qps.size() != 1)
        throw core::spec_error(fmt::format("{}: the peer described {} QPs for one", where(), remote.qps.size()));
    connect_slot(i, remote, remote.qps.front());
}

void endpoint::connect_slot(std::size_t i, const endpoint_info& remote, const qp_endpoint& r) {
    if (remote.link_layer != info_.link_layer)
        throw core::spec_error(fmt::format("{}: link layers differ (peer {}, here {})", where(),
                                           remote.link_layer, info_.link_layer));
    const auto mtu = std::min(info_.mtu, remote.mtu);
    path_mtu_ = path_mtu_ ? std::min(path_mtu_, mtu) : mtu;
    const auto rd = static_cast<std::uint8_t>(std::max<std::uint32_t>(
        1, std::min(info_.max_rd_atomic, remote.max_rd_atomic)));
    qp_slot& s = *slots_[i];
    rtr_params p;
    p.remote_qpn = r.qpn;
    p.remote_psn = r.psn;
    p.mtu = mtu_from_bytes(mtu);
    p.global = info_.link_layer == "Ethernet" || options_.gid_index.has_value();
    p.remote_gid = remote.gid;
    p.sgid_index = info_.gid_index;
    p.remote_lid = remote.lid;
    p.port = options_.port;
    p.max_dest_rd_atomic = rd;
    s.qp.to_rtr(p);
    s.qp.to_rts(s.psn, rd);
    s.remote_addr = r.addr;
    s.remote_rkey = r.rkey;
    s.remote_length = r.length;
}

}  // namespace meshperf::transport::rdma
