#pragma once
/// RAII over the verbs device list and an opened device context, and port queries.
#include <infiniband/verbs.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace meshperf::transport::rdma {

/// The RDMA devices of this node (ibv_get_device_list). Never throws: with no RDMA support
/// in the kernel (NULL with ENOSYS) or no device, devices() is empty and reason() says why.
class device_list {
public:
    device_list() noexcept;
    ~device_list();
    device_list(const device_list&) = delete;
    device_list& operator=(const device_list&) = delete;

    /// The devices; valid while this object lives.
    std::span<ibv_device* const> devices() const noexcept { return {list_, count_}; }
    bool empty() const noexcept { return count_ == 0; }
    /// Why the list is empty ("no RDMA device found (...)"); empty when it is not.
    const std::string& reason() const noexcept { return reason_; }
    /// Device names, comma separated, for messages.
    std::string names() const;
    /// The device called name, or nullptr.
    ibv_device* find(std::string_view name) const noexcept;

private:
    ibv_device** list_ = nullptr;
    std::size_t count_ = 0;
    std::string reason_;
};

/// An opened device (ibv_open_device); closed on destruction. Move-only.
class device_context {
public:
    /// Opens dev. Throws rdma_error naming the device.
    explicit device_context(ibv_device* dev);
    ~device_context();
    device_context(device_context&& o) noexcept : ctx_(o.ctx_) { o.ctx_ = nullptr; }
    device_context& operator=(device_context&&) = delete;
    device_context(const device_context&) = delete;

    ibv_context* get() const noexcept { return ctx_; }
    /// Kernel name of the device ("mlx5_0", "rxe0").
    std::string name() const;
    /// ibv_query_device. Throws rdma_error.
    ibv_device_attr query() const;
    /// ibv_query_port. Throws rdma_error "rxe0 has no port 2 (ports 1..1)" for a port the
    /// device does not have.
    ibv_port_attr query_port(std::uint8_t port) const;

private:
    ibv_context* ctx_ = nullptr;
};

/// Opens the device called name. Throws rdma_error: ENODEV "no RDMA device found" when the
/// node has none; EINVAL "RDMA device 'x' not found (devices: ...)" for an unknown name.
device_context open_device(std::string_view name);

/// Active MTU enum to bytes (IBV_MTU_1024 -> 1024); 0 for an unknown value.
std::uint32_t mtu_bytes(ibv_mtu) noexcept;
/// Bytes to the MTU enum; the largest enum not above bytes (at least IBV_MTU_256).
ibv_mtu mtu_from_bytes(std::uint32_t bytes) noexcept;
/// Port state as ibv_devinfo prints it ("ACTIVE", "DOWN", ...).
std::string_view port_state_name(ibv_port_state) noexcept;
/// "InfiniBand", "Ethernet" or "unknown".
std::string_view link_layer_name(std::uint8_t link_layer) noexcept;
/// Signalling rate of a port in Gbit/s from active_speed and active_width (0 if unknown).
double port_rate_gbit(const ibv_port_attr&) noexcept;

}  // namespace meshperf::transport::rdma
