// The step runner's RDMA data path (transport/rdma/mesh_steps.hpp). Built only with RDMA
// (transport/CMakeLists.txt).
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
    rdma_step_runner(connections& mesh, const std::atomic<bool>& cancel, core::dtype element,
                     const std::vector<std::span<std::byte>>& buffers, device_memory* device)
        : step_runner(mesh), steps_(mesh.rdma, cancel, element, buffers, device, device_buffers(device)) {}

private:
    bool has_link(unsigned peer) const override { return steps_.has_link(peer); }
    step_status move(std::span<peer_io> ios, std::chrono::milliseconds stall_limit,
                     std::vector<step_arrival>& completed) override {
        return steps_.run(ios, stall_limit, completed);
    }

    rdma::mesh_steps steps_;
};

}  // namespace

std::unique_ptr<step_runner> make_rdma_step_runner(connections& mesh, const std::atomic<bool>& cancel, core::dtype element,
                                                   const std::vector<std::span<std::byte>>& buffers, device_memory* device) {
    return std::make_unique<rdma_step_runner>(mesh, cancel, element, buffers, device);
}

}  // namespace meshperf::transport::mesh
