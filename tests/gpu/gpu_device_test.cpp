// Tests of gpu/ that need a GPU. Without one the binary exits 77 (CTest's skip) and prints
// the precise reason: no NVIDIA driver, driver too old for this CUDA runtime, or no device.
// MESHPERF_REQUIRE_GPU=1 turns that skip into a failure (exit 1), for GPU machines where a
// missing GPU is a fault.
#define DOCTEST_CONFIG_IMPLEMENT
#include "core/sizes.hpp"
#include "core/collective/reduce_ops.hpp"
#include "gpu/buffer.hpp"
#include "gpu/collective_device.hpp"
#include "gpu/copy_json.hpp"
#include "gpu/copy_sweep.hpp"
#include "gpu/dmabuf.hpp"
#include "gpu/error.hpp"
#include "gpu/inventory.hpp"
#include "gpu/inventory_json.hpp"
#include "gpu/staging.hpp"
#include "gpu/status.hpp"
#include "gpu/topology.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace meshperf::gpu;

namespace {

/// Whether this machine's sysfs lists PCI devices at all (gVisor may not).
bool sysfs_lists_pci_devices() {
    std::error_code ec;
    return std::filesystem::is_directory("/sys/bus/pci/devices", ec) &&
           std::filesystem::directory_iterator("/sys/bus/pci/devices", ec) != std::filesystem::directory_iterator();
}

}  // namespace

TEST_CASE("inventory lists every device with its PCIe place") {
    const auto inv = take_inventory();
    REQUIRE(inv.status.ok());
    CHECK(inv.errors.empty());
    REQUIRE(inv.devices.size() == static_cast<std::size_t>(inv.status.device_count));
    for (const auto& d : inv.devices) {
        INFO("cuda:" << d.index << " " << d.name << " " << d.pci_bus_id);
        CHECK_FALSE(d.name.empty());
        CHECK(d.uuid.rfind("GPU-", 0) == 0);
        CHECK(d.memory_bytes > (1ull << 30));
        CHECK(normalize_bus_id(d.pci_bus_id) == d.pci_bus_id);
        // Under gVisor (the H200 kind) /sys/bus/pci/devices may be absent: the GPU's PCIe
        // place is then unknown to this machine, not wrong.
        if (sysfs_lists_pci_devices())
            CHECK(locate_pci_device(d.pci_bus_id).has_value());
        else
            MESSAGE("skipped: /sys/bus/pci/devices is absent here (a sandbox such as gVisor): no PCIe place to check");
        CHECK(d.dma_buf_supported.has_value());  // the entry point mechanism reached the driver
        CHECK(d.compute_capability_major >= 5);
    }
    const auto j = to_json(inv);
    MESSAGE(j.dump(2));
    CHECK(j["available"] == true);
    CHECK(j["devices"].size() == inv.devices.size());
}

TEST_CASE("collective device: the sum kernel matches core::reduce_sum bit for bit, every dtype") {
    using region = collective_device::region;
    for (auto type : {meshperf::core::dtype::fp32, meshperf::core::dtype::bf16, meshperf::core::dtype::fp16}) {
        INFO(meshperf::core::to_string(type));
        const std::size_t w = meshperf::core::dtype_bytes(type), n = 1000003 * w, off = 7 * w;
        std::vector<std::byte> acc(n + off), in(n), expect;
        for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = static_cast<std::byte>((i * 131 + 7) & 0x3f);  // finite values
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::byte>((i * 71 + 3) & 0x3f);
        expect = acc;
        meshperf::core::reduce_sum(type, {expect.data() + off, n}, in);
        collective_device dev(0, acc.size(), 0, in.size());
        dev.upload(region::send, 0, acc.data(), acc.size());
        dev.upload(region::scratch, 0, in.data(), in.size());
        dev.add(type, region::send, off, region::scratch, 0, n);
        std::vector<std::byte> got(acc.size());
        dev.download(got.data(), region::send, 0, got.size());
        CHECK(std::memcmp(got.data(), expect.data(), got.size()) == 0);
        dev.copy(region::scratch, 0, region::send, off, in.size());  // device to device
        std::vector<std::byte> back(in.size());
        dev.download(back.data(), region::scratch, 0, back.size());
        CHECK(std::memcmp(back.data(), expect.data() + off, back.size()) == 0);
        CHECK_THROWS_AS(dev.upload(region::recv, 0, acc.data(), 1), std::invalid_argument);  // 0-byte region
    }
}

TEST_CASE("collective device: the ops at device addresses (GPUDirect RDMA's) move and sum as the region ops do") {
    // What the RDMA runner does with a piece the NIC wrote into a device slot: flush, then copy
    // or sum it into the buffer at a device address; the barrier's flag is read back to host.
    using region = collective_device::region;
    const auto type = meshperf::core::dtype::bf16;
    const std::size_t n = 4096 * 2 + 6, off = 10;
    std::vector<std::byte> acc(n + off), piece(n), expect;
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = static_cast<std::byte>((i * 37 + 1) & 0x3f);
    for (std::size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<std::byte>((i * 13 + 5) & 0x3f);
    expect = acc;
    meshperf::core::reduce_sum(type, {expect.data() + off, n}, piece);
    collective_device dev(0, acc.size(), acc.size(), piece.size());
    auto* send = static_cast<std::byte*>(dev.buffer(region::send).data());
    auto* recv = static_cast<std::byte*>(dev.buffer(region::recv).data());
    auto* slot = static_cast<std::byte*>(dev.buffer(region::scratch).data());  // stands for a receive slot
    dev.upload_at(send, acc.data(), acc.size());
    dev.upload_at(slot, piece.data(), piece.size());
    // A no-op where the GPU orders the NIC's writes itself; where it neither orders nor can
    // flush them (a VM that does not report the flush option), flush_rdma_writes refuses with
    // ENOTSUP on purpose: that is this machine's answer, not a fault.
    try {
        dev.flush_rdma_writes();
    } catch (const std::system_error& e) {
        if (e.code() != std::errc::not_supported) throw;
        MESSAGE("flush_rdma_writes refused on this machine (ENOTSUP, as designed): " << e.what());
    }
    dev.add_at(type, send + off, slot, n);
    dev.copy_at(recv + off, slot, n);
    std::vector<std::byte> summed(acc.size()), copied(n);
    dev.download_at(summed.data(), send, summed.size());
    dev.download_at(copied.data(), recv + off, n);
    CHECK(std::memcmp(summed.data(), expect.data(), summed.size()) == 0);
    CHECK(std::memcmp(copied.data(), piece.data(), n) == 0);
    std::byte flag{0};
    dev.download_at(&flag, slot + 3, 1);  // one byte back to host, as the barrier's flag
    CHECK(flag == piece[3]);
}

TEST_CASE("buffers: allocation, page rounding, move-only ownership") {
    device_buffer a(0, 12345);
    CHECK(a);
    CHECK(a.size() == 12345);
    CHECK(a.allocated_size() % host_page_size() == 0);
    CHECK(a.allocated_size() >= 12345);
    void* p = a.data();
    device_buffer b(std::move(a));
    CHECK_FALSE(a);
    CHECK(b.data() == p);
    device_buffer c;
    c = std::move(b);
    CHECK(c.data() == p);
    pinned_buffer h(1 << 20);
    CHECK(h.data() != nullptr);
    std::memset(h.data(), 0x5a, h.size());  // host-accessible
    pinned_buffer h2(std::move(h));
    CHECK_FALSE(h);
    CHECK(h2.size() == (1u << 20));
}

TEST_CASE("buffers: impossible sizes and devices fail with a named reason") {
    CHECK_THROWS_AS(device_buffer(0, std::size_t{1} << 52), std::system_error);  // 4 PiB
    try {
        device_buffer bad(cuda_availability().device_count, 4096);
        FAIL("expected an error for a device that does not exist");
    } catch (const std::system_error& e) {
        CHECK(std::string(e.what()).find("does not exist") != std::string::npos);
    }
}

TEST_CASE("copies: h2d, d2h, d2d with verify over odd and round sizes") {
    copy_options o;
    o.sizes = {1, 7, 4096, 65537, 1u << 20, (64u << 20) + 3};
    o.verify = true;
    o.batches = 3;
    o.min_batch_seconds = 0.005;
    for (auto kind : {copy_kind::h2d, copy_kind::d2h, copy_kind::d2d}) {
        const auto r = run_copy_sweep(kind, o);
        INFO(to_json(r).dump());
        CHECK_FALSE(r.verify_failed());
        REQUIRE(r.points.size() == o.sizes.size());
        for (const auto& p : r.points) {
            CHECK(p.verified());
            CHECK_NOTHROW(check_sane(p));
        }
        // A 64 MiB copy over any PCIe or C2C link runs above 1 GB/s.
        CHECK(r.points.back().gb_per_s > 1.0);
    }
}

TEST_CASE("copies: the GPU-to-GPU matrix (several GPUs) or its waiver") {
    copy_options o;
    o.sizes = {4096, 16u << 20};
    o.verify = true;
    o.batches = 2;
    o.min_batch_seconds = 0.005;
    const auto m = run_p2p_matrix(o);
    const int n = cuda_availability().device_count;
    if (n < 2) {
        CHECK(m.waived.find("at least two GPUs") != std::string::npos);
        return;
    }
    CHECK(m.waived.empty());
    CHECK(m.pairs.size() == static_cast<std::size_t>(n * (n - 1)));
    for (const auto& r : m.pairs) CHECK_FALSE(r.verify_failed());
}

TEST_CASE("copies: cancellation returns the points measured so far") {
    std::stop_source stop;
    copy_options o;
    o.sizes = {4096, 8192, 16384};
    o.on_point = [&](const copy_point&) { stop.request_stop(); };
    o.stop = stop.get_token();
    const auto r = run_copy_sweep(copy_kind::h2d, o);
    CHECK(r.cancelled);
    CHECK(r.points.size() == 1);
}

TEST_CASE("staging: host -> device -> host through the chunks keeps every byte") {
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20, (std::size_t{5} << 20) + 17}) {
        CAPTURE(n);
        std::vector<std::byte> in(n);
        for (std::size_t i = 0; i < n; ++i) in[i] = std::byte(static_cast<unsigned char>(i * 7 + i / 4099));
        device_buffer dev(0, n);
        staging rx(0, 256u << 10, 3u);
        rx.start_receive(dev.data(), n);
        std::size_t off = 0;
        for (auto c = rx.next_receive_chunk(); !c.empty(); c = rx.next_receive_chunk()) {
            std::memcpy(c.data(), in.data() + off, c.size());
            off += c.size();
            rx.commit_receive_chunk();
        }
        rx.finish_receive();
        staging tx(0, 300u << 10, 4u);
        std::vector<std::byte> out;
        tx.start_send(dev.data(), n);
        for (auto c = tx.next_send_chunk(); !c.empty(); c = tx.next_send_chunk()) out.insert(out.end(), c.begin(), c.end());
        CHECK(out == in);
    }
}

TEST_CASE("dma-buf: export where the driver supports it, a driver error otherwise") {
    device_buffer b(0, 3u << 20);
    if (dmabuf_supported(0)) {
        const auto e = export_dmabuf(b);
        CHECK(e.fd.get() >= 0);
        CHECK(e.length == b.allocated_size());
        CHECK(e.iova == reinterpret_cast<std::uintptr_t>(b.data()));
        CHECK(e.offset == reinterpret_cast<std::uintptr_t>(b.data()) % host_page_size());
        CHECK(e.dmabuf_length % host_page_size() == 0);
        CHECK(e.offset + e.length <= e.dmabuf_length);
        MESSAGE("dma-buf export: buffer " << b.data() << ", offset " << e.offset << ", length " << e.length
                                          << ", dma-buf " << e.dmabuf_length << " B");
    } else {
        MESSAGE("cuda:0 has no dma-buf support (proprietary kernel module?)");
        try {
            (void)export_dmabuf(b);
        } catch (const std::system_error& e) {
            CHECK(e.code().category() == cu_category());
        }
    }
}

int main(int argc, char** argv) {
    const auto& s = cuda_availability();
    const char* req = std::getenv("MESHPERF_REQUIRE_GPU");
    const bool required = req && std::string(req) == "1";
    if (!s.ok()) {
        std::fprintf(stderr, "%s: %s: %s\n", required ? "FAIL" : "SKIP", std::string(to_string(s.state)).c_str(),
                     s.message.c_str());
        if (required) std::fprintf(stderr, "MESHPERF_REQUIRE_GPU=1: a GPU is required here\n");
        return required ? 1 : 77;
    }
    doctest::Context ctx;
    ctx.applyCommandLine(argc, argv);
    return ctx.run();
}
