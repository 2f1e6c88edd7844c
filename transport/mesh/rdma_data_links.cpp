// The RDMA links of a collective run and their step runner (rdma_data_links.hpp). Built
// only with RDMA (transport/CMakeLists.txt).
#include "transport/mesh/rdma_data_links.hpp"

#include "core/counter_sources.hpp"
#include "transport/mesh/step_runner.hpp"
#include "transport/rdma/mesh_steps.hpp"

namespace meshperf::transport::mesh {
namespace {

std::vector<rdma::device_allocation*> device_buffers(device_memory* device) {
    std::vector<rdma::device_allocation*> out;
    if (device)
        for (auto r : {device_memory::region::send, device_memory::region::recv, device_memory::region::scratch})
            out.push_back(device->allocation(r));
    return out;
}

class rdma_step_runner final : public step_runner {
public:
    rdma_step_runner(connections& mesh, std::shared_ptr<rdma::mesh_links> qps, const std::atomic<bool>& cancel,
                     core::dtype element, const std::vector<std::span<std::byte>>& buffers, device_memory* device)
        : step_runner(mesh), steps_(std::move(qps), cancel, element, buffers, device, device_buffers(device)) {}

private:
    bool has_link(unsigned peer) const override { return steps_.has_link(peer); }
    step_status move(std::span<peer_io> ios, std::chrono::milliseconds stall_limit,
                     std::vector<step_arrival>& completed) override {
        return steps_.run(ios, stall_limit, completed);
    }

    rdma::mesh_steps steps_;
};

class rdma_data_links final : public data_links {
public:
    explicit rdma_data_links(std::shared_ptr<rdma::mesh_links> qps) : qps_(std::move(qps)) {}

    std::unique_ptr<step_runner> open_step_runner(connections& mesh, const std::atomic<bool>& cancel, core::dtype element,
                                                  const std::vector<std::span<std::byte>>& buffers,
                                                  device_memory* device) override {
        return std::make_unique<rdma_step_runner>(mesh, qps_, cancel, element, buffers, device);
    }
    std::string memory_note() const override { return qps_->memory_note(); }
    void count_port(link_counter_target& target) const override {
        target.count(core::rdma_port_source_kind, qps_->ep().local_info().device, qps_->ep().local_info().port);
    }

private:
    std::shared_ptr<rdma::mesh_links> qps_;
};

}  // namespace

std::shared_ptr<data_links> make_rdma_data_links(std::shared_ptr<rdma::mesh_links> qps) {
    return std::make_shared<rdma_data_links>(std::move(qps));
}

}  // namespace meshperf::transport::mesh
