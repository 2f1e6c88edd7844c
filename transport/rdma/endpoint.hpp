#pragma once
/// One side of an RDMA connection: the device, the PD and, per queue pair, its CQ, buffers
/// and memory region. Everything the measurement loops touch is allocated here, before any
/// loop starts.
#include "transport/rdma/buffer.hpp"
#include "transport/rdma/comp_channel.hpp"
#include "transport/rdma/cq.hpp"
#include "transport/rdma/device.hpp"
#include "transport/rdma/device_memory.hpp"
#include "transport/rdma/endpoint_info.hpp"
#include "transport/rdma/mr.hpp"
#include "transport/rdma/pd.hpp"
#include "transport/rdma/qp.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace meshperf::transport::rdma {

/// How to open an endpoint. Both sides choose their own device, port and GID; only the
/// endpoint_info travels.
struct endpoint_options {
    std::string device;              ///< empty: the device whose port has a RoCE v2 GID for
                                     ///< local_ip (else an active InfiniBand port, else the
                                     ///< first device with this port active)
    std::uint8_t port = 1;
    std::optional<int> gid_index;    ///< empty: the RoCE v2 GID of local_ip
    std::string local_ip;            ///< local address of the peer-session socket ("10.0.0.7")
    std::uint32_t qps = 1;           ///< queue pairs (streams)
    std::uint64_t max_message_bytes = 65536;  ///< largest message of the run (buffer per QP)
    std::uint32_t tx_depth = 128;    ///< send-queue depth per QP: the largest window a point may use
    std::uint32_t rx_depth = 256;    ///< receives kept posted per QP (SEND tests)
    std::uint32_t inline_bytes = 220;  ///< inline data asked of the QPs (0: none)
    /// Null: the buffers are host memory. Else they are this device memory (GPUDirect
    /// RDMA), registered by dma-buf or nvidia-peermem (device_registration.hpp).
    std::shared_ptr<const device_memory> gpu_memory;
    /// Every QP's CQ reports to one completion channel (endpoint::events()), so a thread can
    /// sleep until a completion instead of spinning.
    bool completion_events = false;
};

/// How a QP's device memory was registered: the path, and why others were left out.
struct device_registration_info {
    core::gpu_registration_path path = core::gpu_registration_path::dmabuf;
    std::vector<std::string> notes;
};

/// Per-QP resources; used by the measurement loops (latency.hpp, bandwidth.hpp). One thread
/// at a time drives a slot.
struct qp_slot {
    completion_queue cq;          ///< send and receive completions of this QP
    host_buffer buffer;           ///< host memory: [0, length): source of outgoing data ("tx");
                                  ///< [length, 2 length): region the peer writes/reads ("rx")
    std::unique_ptr<device_allocation> device;  ///< device memory instead (same halves); null: host
    std::uint64_t length;         ///< bytes of each half
    std::optional<device_registration_info> registration;  ///< how device memory was registered
    memory_region mr;             ///< covers both halves
    queue_pair qp;
    std::vector<std::byte> reference;  ///< verify pattern of the current point (length bytes)
    std::uint32_t psn = 0;
    std::uint32_t tx_depth = 0, rx_depth = 0;
    std::uint32_t rx_posted = 0;  ///< receives outstanding on the receive queue
    std::uint64_t remote_addr = 0, remote_length = 0;
    std::uint32_t remote_rkey = 0;
    bool failed = false;          ///< a loop ended in error: the QP is unusable

    qp_slot(const device_context& ctx, const protection_domain& pd, const endpoint_options& o,
            const std::string& device, ibv_comp_channel* events = nullptr);
    /// Start of the tx half (a device address when `device` is set: not for the CPU).
    std::byte* tx() const noexcept { return device ? device->data() : buffer.data(); }
    std::byte* rx() const noexcept { return tx() + length; }
    /// True when the CPU may read and write the halves (host memory).
    bool host_memory() const noexcept { return !device; }
    /// Posts receives until rx_depth are outstanding (each takes a whole rx region).
    /// Throws rdma_error.
    void top_up_receives();
};

/// One side of a connection. Construct, send local_info() to the peer, connect() with the
/// peer's; then run points with latency.hpp / bandwidth.hpp. Destroying it releases every
/// QP, CQ, MR and PD (in that order) and closes the device. Not copyable or movable (loops
/// hold references into it); keep it in a unique_ptr.
class endpoint {
public:
    /// Opens the device, checks the port is ACTIVE and RLIMIT_MEMLOCK allows the buffers,
    /// chooses the GID, creates the PD, and per QP a CQ, buffers, MR and an RC QP in INIT.
    /// Throws rdma_error: "no RDMA device found" (ENODEV), unknown device or port, port
    /// down, GID index that does not exist, no GID for local_ip, memlock limit (with how to
    /// raise it), or the failing verbs call. Throws core::spec_error for bad options.
    explicit endpoint(const endpoint_options& options);
    ~endpoint();
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    /// This side's description, to send to the peer.
    const endpoint_info& local_info() const noexcept { return info_; }

    /// Moves every QP to RTR and RTS against the peer's description (QP i to the peer's QP
    /// i; path MTU = the smaller active MTU). Throws core::spec_error when the descriptions do
    /// not match (QP count, link layer), rdma_error naming INIT/RTR/RTS on a failed
    /// transition.
    void connect(const endpoint_info& remote);
    bool connected() const noexcept { return connected_; }

    /// A mesh of peers (collectives): each QP goes to a different peer. The description of
    /// QP i alone, to send to the peer it goes to ...
    endpoint_info qp_info(std::size_t i) const;
    /// ... and QP i moved to RTR and RTS against that peer's one-QP description. Throws as
    /// connect() does; connected() stays false.
    void connect_qp(std::size_t i, const endpoint_info& remote);

    std::size_t qp_count() const noexcept { return slots_.size(); }
    /// Per-QP resources, for the loops. i < qp_count().
    qp_slot& slot(std::size_t i) { return *slots_.at(i); }
    const qp_slot& slot(std::size_t i) const { return *slots_.at(i); }
    const endpoint_options& options() const noexcept { return options_; }
    /// Path MTU after connect() (bytes).
    std::uint32_t path_mtu() const noexcept { return path_mtu_; }
    /// "rxe0 port 1", for messages.
    std::string where() const;
    /// "dmabuf" or "peermem" when the buffers are device memory; empty for host memory.
    std::string gpu_registration() const;
    /// The completion channel of every QP's CQ (options().completion_events); null without.
    completion_channel* events() const noexcept { return events_.get(); }
    /// The protection domain, to register more memory for the QPs (memory_region).
    const protection_domain& pd() const noexcept { return *pd_; }

private:
    void connect_slot(std::size_t i, const endpoint_info& remote, const qp_endpoint& r);

    endpoint_options options_;
    std::unique_ptr<device_context> ctx_;
    std::unique_ptr<protection_domain> pd_;
    std::unique_ptr<completion_channel> events_;  // destroyed after the slots' CQs
    std::vector<std::unique_ptr<qp_slot>> slots_;
    endpoint_info info_;
    std::uint32_t path_mtu_ = 0;
    bool connected_ = false;
};

/// Access flags of every buffer: local write, remote write, remote read.
inline constexpr int buffer_access =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

}  // namespace meshperf::transport::rdma
