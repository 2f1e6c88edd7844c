#include "daemon/runtime/gpu_support.hpp"

#include "core/sizes.hpp"
#include "gpu/buffer.hpp"
#include "gpu/collective_device.hpp"
#include "gpu/dmabuf.hpp"
#include "gpu/inventory.hpp"
#include "gpu/inventory_json.hpp"
#include "gpu/registration_probe.hpp"
#include "gpu/staging.hpp"
#include "gpu/status.hpp"
#include "gpu/topology.hpp"
#include "transport/tcp/pattern.hpp"
#include "transport/tcp/point_side.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>

namespace meshperf::daemon {
namespace {

int device_index(const std::string& domain) { return std::stoi(domain.substr(5)); }  // validated "cuda:N"

std::size_t staging_chunk(std::size_t message) { return std::min(message, gpu::default_staging_chunk_bytes); }

/// A stream's device buffers: the message it sends from, the one it receives into.
struct cuda_stream_memory {
    gpu::device_buffer src, dst;
    void* source() const noexcept { return src.data(); }
    void* destination() const noexcept { return dst.data(); }
};

using cuda_staged_stream = transport::tcp::staged_stream_on<gpu::staging, cuda_stream_memory>;

std::unique_ptr<transport::tcp::staged_stream> make_cuda_stream(int device, transport::tcp::stream_role role,
                                                                std::size_t size, bool verify, bool busy_poll) {
    using transport::tcp::stream_role;
    cuda_stream_memory m;
    if (role == stream_role::send || role == stream_role::ping) {
        m.src = gpu::device_buffer(device, size);
        // The pattern repeats every pattern_period bytes: fill the message from one host block
        // of whole periods (about 1 MiB) instead of a host copy of the whole message.
        const std::size_t block = std::min(size, transport::tcp::pattern_period * 4096);
        const auto pattern = transport::tcp::make_pattern_buffer(block);
        for (std::size_t off = 0; off < size; off += block)
            gpu::copy_to_device(m.src, pattern.data(), std::min(block, size - off), off);
    }
    if (role != stream_role::send) m.dst = gpu::device_buffer(device, size);
    return std::make_unique<cuda_staged_stream>(std::move(m), gpu::staging(device, staging_chunk(size), gpu::default_staging_chunks),
                                                size, verify, busy_poll);
}

/// A GPU buffer as RDMA memory, exported as a dma-buf on first use. It does not own the
/// buffer, which must outlive it.
class cuda_buffer_view final : public transport::rdma::device_allocation {
public:
    /// Sets SYNC_MEMOPS on the buffer: the NIC reads and writes it through GPUDirect RDMA, so
    /// its memsets and copies must be complete when they return.
    explicit cuda_buffer_view(const gpu::device_buffer& buffer) : buffer_(buffer) {
        if (buffer_) gpu::enable_sync_memops(buffer_);
    }
    std::byte* data() const noexcept override { return static_cast<std::byte*>(buffer_.data()); }
    std::size_t size() const noexcept override { return buffer_.allocated_size(); }
    transport::rdma::dmabuf_region dmabuf() override {
        if (!exported_) exported_ = gpu::export_dmabuf(buffer_);
        return {exported_->fd.get(), exported_->offset, exported_->length, exported_->iova};
    }
    void zero(std::size_t offset, std::size_t n) override { gpu::zero_device(buffer_, offset, n); }

private:
    const gpu::device_buffer& buffer_;
    std::optional<gpu::dmabuf_export> exported_;  // closed before the memory is freed
};

/// One QP buffer in GPU memory, owned, exported as a dma-buf on first use.
class cuda_allocation final : public transport::rdma::device_allocation {
public:
    cuda_allocation(int device, std::size_t bytes) : buffer_(device, bytes), view_(buffer_) {}
    std::byte* data() const noexcept override { return view_.data(); }
    std::size_t size() const noexcept override { return view_.size(); }
    transport::rdma::dmabuf_region dmabuf() override { return view_.dmabuf(); }
    void zero(std::size_t offset, std::size_t n) override { view_.zero(offset, n); }

private:
    gpu::device_buffer buffer_;
    cuda_buffer_view view_;  // after the buffer: released before it
};

/// cuda:N as RDMA buffer memory.
class cuda_rdma_memory final : public transport::rdma::device_memory {
public:
    explicit cuda_rdma_memory(int device) : device_(device) {}
    std::string name() const override { return fmt::format("cuda:{}", device_); }
    core::gpu_registration_caps caps() const override { return gpu::registration_caps(device_, false); }
    std::unique_ptr<transport::rdma::device_allocation> allocate(std::size_t bytes) const override {
        return std::make_unique<cuda_allocation>(device_, bytes);
    }

private:
    int device_;
};

}  // namespace

nlohmann::json gpu_info() {
    const auto& st = gpu::cuda_availability();
    nlohmann::json out = {{"available", st.ok()}, {"driver_version", st.driver_version}, {"runtime_version", st.runtime_version}};
    if (!st.ok()) {
        out["reason"] = st.message;
        return out;
    }
    try {
        out["inventory"] = gpu::to_json(gpu::take_inventory());
    } catch (const std::exception& e) {
        out["reason"] = e.what();
    }
    return out;
}

void require_memory_domain(const std::string& domain, const std::string& side) {
    if (domain == "host") return;
    try {
        gpu::require_device(device_index(domain));  // the classified reason: no driver, too old, no device
    } catch (const std::system_error& e) {
        throw std::runtime_error(fmt::format("{} memory: {}", side, e.what()));  // "initiator memory: cuda:0: no NVIDIA driver: ..."
    }
}

transport::tcp::staged_stream_factory tcp_stream_memory(const std::string& domain, const core::run_spec& spec) {
    if (domain == "host") return {};
    const int device = device_index(domain);
    gpu::require_device(device);
    const bool verify = spec.verify, busy_poll = spec.busy_poll;
    return [device, verify, busy_poll](transport::tcp::stream_role role, std::size_t size, std::size_t) {
        return make_cuda_stream(device, role, size, verify, busy_poll);
    };
}

namespace {
/// A collective size's buffers on one GPU (gpu::collective_device).
class cuda_collective_memory final : public transport::mesh::device_memory {
public:
    cuda_collective_memory(int device, std::size_t send, std::size_t recv, std::size_t scratch)
        : dev_(device, send, recv, scratch), send_(dev_.buffer(gpu::collective_device::region::send)),
          recv_(dev_.buffer(gpu::collective_device::region::recv)),
          scratch_(dev_.buffer(gpu::collective_device::region::scratch)) {}
    void upload(region r, std::size_t offset, const std::byte* host, std::size_t n) override { dev_.upload(map(r), offset, host, n); }
    void download(std::byte* host, region r, std::size_t offset, std::size_t n) override { dev_.download(host, map(r), offset, n); }
    void copy(region dst, std::size_t dst_offset, region src, std::size_t src_offset, std::size_t n) override {
        dev_.copy(map(dst), dst_offset, map(src), src_offset, n);
    }
    void add(core::dtype type, region acc, std::size_t acc_offset, region in, std::size_t in_offset, std::size_t n) override {
        dev_.add(type, map(acc), acc_offset, map(in), in_offset, n);
    }
    transport::rdma::device_allocation* allocation(region r) override {
        auto& view = r == region::send ? send_ : r == region::recv ? recv_ : scratch_;
        return view.size() ? &view : nullptr;
    }
    void copy_at(std::byte* dst, const std::byte* src, std::size_t n) override { dev_.copy_at(dst, src, n); }
    void add_at(core::dtype type, std::byte* acc, const std::byte* in, std::size_t n) override { dev_.add_at(type, acc, in, n); }
    void download_at(std::byte* host, const std::byte* src, std::size_t n) override { dev_.download_at(host, src, n); }
    void upload_at(std::byte* dst, const std::byte* host, std::size_t n) override { dev_.upload_at(dst, host, n); }
    void flush_rdma_writes() override { dev_.flush_rdma_writes(); }

private:
    static gpu::collective_device::region map(region r) {
        return r == region::send ? gpu::collective_device::region::send
               : r == region::recv ? gpu::collective_device::region::recv
                                   : gpu::collective_device::region::scratch;
    }
    gpu::collective_device dev_;
    cuda_buffer_view send_, recv_, scratch_;  // the buffers as memory the NIC registers (GPUDirect)
};
}  // namespace

transport::mesh::device_memory_factory collective_memory_for(const std::string& domain) {
    if (domain == "host") return {};
    const int device = device_index(domain);
    gpu::require_device(device);
    return [device](std::size_t send, std::size_t recv, std::size_t scratch) -> std::unique_ptr<transport::mesh::device_memory> {
        return std::make_unique<cuda_collective_memory>(device, send, recv, scratch);
    };
}

std::shared_ptr<const transport::rdma::device_memory> rdma_device_memory(const std::string& domain) {
    if (domain == "host") return nullptr;
    const int device = device_index(domain);
    gpu::require_device(device);
    return std::make_shared<cuda_rdma_memory>(device);
}

std::vector<std::string> memory_notes(const std::string& domain, const std::string& side, const std::string& nic,
                                      bool staged_through_host) {
    if (domain == "host") return {};
    const int device = device_index(domain);
    std::vector<std::string> notes;
    const auto inv = gpu::take_inventory();
    const auto it = std::find_if(inv.devices.begin(), inv.devices.end(), [&](const auto& d) { return d.index == device; });
    const std::string gpu_name = it == inv.devices.end() ? domain : fmt::format("{} ({}, {})", domain, it->name, it->pci_bus_id);
    if (staged_through_host)
        notes.push_back(fmt::format("{} memory {}: TCP staged through {} pinned host chunks of up to {} (cudaMemcpyAsync, "
                                    "overlapped with the socket)",
                                    side, gpu_name, gpu::default_staging_chunks,
                                    core::format_size(gpu::default_staging_chunk_bytes)));
    if (it != inv.devices.end() && !nic.empty()) {
        const auto affinity = gpu::gpu_nic_affinity(it->pci_bus_id, domain, nic);
        if (!affinity.warning.empty()) notes.push_back(fmt::format("{}: {}", side, affinity.warning));
    }
    return notes;
}

}  // namespace meshperf::daemon
