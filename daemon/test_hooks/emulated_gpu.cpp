#include "daemon/test_hooks/emulated_gpu.hpp"

#include "core/collective/reduce_ops.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <system_error>

namespace meshperf::daemon {
namespace {

/// One allocation of the emulated device: host memory, page-aligned as cudaMalloc's are.
class emulated_allocation final : public transport::rdma::device_allocation {
public:
    explicit emulated_allocation(std::size_t bytes)
        : bytes_(bytes), data_(static_cast<std::byte*>(std::aligned_alloc(4096, round_up(bytes)))) {
        if (!data_) throw std::system_error(ENOMEM, std::generic_category(), fmt::format("emulated GPU: {} bytes", bytes));
        std::memset(data_.get(), 0xee, round_up(bytes));  // not zero: a byte nothing wrote shows
    }
    std::byte* data() const noexcept override { return data_.get(); }
    std::size_t size() const noexcept override { return bytes_; }
    transport::rdma::dmabuf_region dmabuf() override {
        throw std::system_error(EOPNOTSUPP, std::generic_category(), "the emulated GPU exports no dma-buf");
    }
    void zero(std::size_t offset, std::size_t n) override {
        check(offset, n);
        std::memset(data_.get() + offset, 0, n);
    }
    void check(std::size_t offset, std::size_t n) const {
        if (offset > bytes_ || n > bytes_ - offset)
            throw std::invalid_argument(fmt::format("emulated GPU: {} bytes at {} past its {} bytes", n, offset, bytes_));
    }

private:
    static std::size_t round_up(std::size_t n) { return (std::max<std::size_t>(n, 1) + 4095) / 4096 * 4096; }
    struct freer {
        void operator()(std::byte* p) const noexcept { std::free(p); }
    };
    std::size_t bytes_;
    std::unique_ptr<std::byte, freer> data_;
};

class emulated_collective_memory final : public transport::mesh::device_memory {
public:
    emulated_collective_memory(std::size_t send, std::size_t recv, std::size_t scratch, emulated_gpu_counters* counters)
        : counters_(counters) {
        if (send) send_ = std::make_unique<emulated_allocation>(send);
        if (recv) recv_ = std::make_unique<emulated_allocation>(recv);
        if (scratch) scratch_ = std::make_unique<emulated_allocation>(scratch);
    }
    // As the CUDA implementation, a call of 0 bytes does nothing (the engine's buffers may be empty).
    void upload(region r, std::size_t offset, const std::byte* host, std::size_t n) override {
        if (n) std::memcpy(at(r, offset, n), host, n);
    }
    void download(std::byte* host, region r, std::size_t offset, std::size_t n) override {
        if (n) std::memcpy(host, at(r, offset, n), n);
    }
    void copy(region dst, std::size_t dst_offset, region src, std::size_t src_offset, std::size_t n) override {
        if (n) std::memmove(at(dst, dst_offset, n), at(src, src_offset, n), n);
    }
    void add(core::dtype type, region acc, std::size_t acc_offset, region in, std::size_t in_offset, std::size_t n) override {
        if (n) add_at(type, at(acc, acc_offset, n), at(in, in_offset, n), n);
    }
    transport::rdma::device_allocation* allocation(region r) override { return buffer(r).get(); }
    void copy_at(std::byte* dst, const std::byte* src, std::size_t n) override {
        if (n) std::memmove(dst, src, n);
    }
    void add_at(core::dtype type, std::byte* acc, const std::byte* in, std::size_t n) override {
        if (!n) return;
        core::reduce_sum(type, {acc, n}, {in, n});
        if (counters_) ++counters_->sums;
    }
    void download_at(std::byte* host, const std::byte* src, std::size_t n) override {
        if (n) std::memcpy(host, src, n);
    }
    void upload_at(std::byte* dst, const std::byte* host, std::size_t n) override {
        if (n) std::memcpy(dst, host, n);
    }
    void flush_rdma_writes() override {
        if (counters_) ++counters_->flushes;
    }

private:
    std::unique_ptr<emulated_allocation>& buffer(region r) { return r == region::send ? send_ : r == region::recv ? recv_ : scratch_; }
    std::byte* at(region r, std::size_t offset, std::size_t n) {
        auto& b = buffer(r);
        if (!b) throw std::invalid_argument(fmt::format("emulated GPU: {} bytes at {} of an empty buffer", n, offset));
        b->check(offset, n);
        return b->data() + offset;
    }
    std::unique_ptr<emulated_allocation> send_, recv_, scratch_;
    emulated_gpu_counters* counters_;
};

class emulated_rdma_memory_kind final : public transport::rdma::device_memory {
public:
    explicit emulated_rdma_memory_kind(std::string domain) : domain_(std::move(domain)) {}
    std::string name() const override { return fmt::format("{} (emulated in host memory)", domain_); }
    core::gpu_registration_caps caps() const override {
        core::gpu_registration_caps c;
        c.peermem_loaded = true;  // ibv_reg_mr on the "device" pointer: the peermem path
        c.gpudirect_rdma = true;
        return c;
    }
    std::unique_ptr<transport::rdma::device_allocation> allocate(std::size_t bytes) const override {
        return std::make_unique<emulated_allocation>(bytes);
    }

private:
    std::string domain_;
};

}  // namespace

std::unique_ptr<transport::mesh::device_memory> make_emulated_collective_memory(std::size_t send, std::size_t recv, std::size_t scratch,
                                                                          emulated_gpu_counters* counters) {
    return std::make_unique<emulated_collective_memory>(send, recv, scratch, counters);
}

transport::mesh::device_memory_factory emulated_collective_memory_factory() {
    return [](std::size_t send, std::size_t recv, std::size_t scratch) { return make_emulated_collective_memory(send, recv, scratch); };
}

std::shared_ptr<const transport::rdma::device_memory> emulated_rdma_memory(const std::string& domain) {
    return std::make_shared<emulated_rdma_memory_kind>(domain);
}

}  // namespace meshperf::daemon
