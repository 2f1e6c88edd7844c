#include "transport/rdma/device.hpp"

#include "transport/rdma/error.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace meshperf::transport::rdma {

device_list::device_list() noexcept {
    errno = 0;
    int n = 0;
    list_ = ibv_get_device_list(&n);
    if (!list_) {
        const int err = errno;
        try {
            reason_ = fmt::format("no RDMA device found (ibv_get_device_list: {}{})",
                                  std::strerror(err ? err : ENODEV),
                                  err == ENOSYS ? ": the kernel has no RDMA support" : "");
        } catch (...) {
        }
        return;
    }
    count_ = n > 0 ? static_cast<std::size_t>(n) : 0;
    if (count_ == 0) {
        try {
            reason_ = "no RDMA device found (ibv_get_device_list returned none: no RDMA NIC, "
                      "or its driver or rdma-core provider is not loaded)";
        } catch (...) {
        }
    }
}

device_list::~device_list() {
    if (list_) ibv_free_device_list(list_);
}

std::string device_list::names() const {
    std::string out;
    for (auto* d : devices()) {
        if (!out.empty()) out += ", ";
        out += ibv_get_device_name(d);
    }
    return out;
}

ibv_device* device_list::find(std::string_view name) const noexcept {
    for (auto* d : devices())
        if (name == ibv_get_device_name(d)) return d;
    return nullptr;
}

device_context::device_context(ibv_device* dev) {
    errno = 0;
    ctx_ = ibv_open_device(dev);
    if (!ctx_) {
        const int err = errno ? errno : ENODEV;
        throw_errno(err, fmt::format("{}: ibv_open_device (is /dev/infiniband readable by "
                                     "this user?)",
                                     ibv_get_device_name(dev)));
    }
}

device_context::~device_context() {
    if (ctx_) ibv_close_device(ctx_);
}

std::string device_context::name() const { return ibv_get_device_name(ctx_->device); }

ibv_device_attr device_context::query() const {
    ibv_device_attr attr{};
    if (int rc = ibv_query_device(ctx_, &attr)) throw_errno(rc, name() + ": ibv_query_device");
    return attr;
}

ibv_port_attr device_context::query_port(std::uint8_t port) const {
    const auto attr = query();
    if (port < 1 || port > attr.phys_port_cnt)
        throw_errno(EINVAL, fmt::format("{} has no port {} (ports 1..{})", name(), port,
                                        attr.phys_port_cnt));
    ibv_port_attr pa{};
    if (int rc = ibv_query_port(ctx_, port, &pa))
        throw_errno(rc, fmt::format("{} port {}: ibv_query_port", name(), port));
    return pa;
}

device_context open_device(std::string_view name) {
    device_list list;
    if (list.empty()) throw_errno(ENODEV, list.reason());
    ibv_device* dev = list.find(name);
    if (!dev)
        throw_errno(EINVAL, fmt::format("RDMA device '{}' not found (devices: {})", name,
                                        list.names()));
    return device_context(dev);
}

std::uint32_t mtu_bytes(ibv_mtu m) noexcept {
    switch (m) {
        case IBV_MTU_256: return 256;
        case IBV_MTU_512: return 512;
        case IBV_MTU_1024: return 1024;
        case IBV_MTU_2048: return 2048;
        case IBV_MTU_4096: return 4096;
    }
    return 0;
}

ibv_mtu mtu_from_bytes(std::uint32_t b) noexcept {
    if (b >= 4096) return IBV_MTU_4096;
    if (b >= 2048) return IBV_MTU_2048;
    if (b >= 1024) return IBV_MTU_1024;
    if (b >= 512) return IBV_MTU_512;
    return IBV_MTU_256;
}

std::string_view port_state_name(ibv_port_state s) noexcept {
    switch (s) {
        case IBV_PORT_NOP: return "NOP";
        case IBV_PORT_DOWN: return "DOWN";
        case IBV_PORT_INIT: return "INIT";
        case IBV_PORT_ARMED: return "ARMED";
        case IBV_PORT_ACTIVE: return "ACTIVE";
        case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    }
    return "unknown";
}

std::string_view link_layer_name(std::uint8_t ll) noexcept {
    switch (ll) {
        case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
        case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
        case IBV_LINK_LAYER_UNSPECIFIED: return "InfiniBand";  // old providers: IB
    }
    return "unknown";
}

double port_rate_gbit(const ibv_port_attr& pa) noexcept {
    double lane = 0;  // Gbit/s per lane, as ibv_devinfo and the sysfs rate file count it
    switch (pa.active_speed) {
        case 1: lane = 2.5; break;     // SDR
        case 2: lane = 5.0; break;     // DDR
        case 4: lane = 10.0; break;    // QDR
        case 8: lane = 10.0; break;    // FDR10
        case 16: lane = 14.0; break;   // FDR
        case 32: lane = 25.0; break;   // EDR
        case 64: lane = 50.0; break;   // HDR
        case 128: lane = 100.0; break; // NDR
        default: lane = 0;
    }
    int lanes = 0;
    switch (pa.active_width) {
        case 1: lanes = 1; break;
        case 2: lanes = 4; break;
        case 4: lanes = 8; break;
        case 8: lanes = 12; break;
        case 16: lanes = 2; break;
        default: lanes = 0;
    }
    return lane * lanes;
}

}  // namespace meshperf::transport::rdma
