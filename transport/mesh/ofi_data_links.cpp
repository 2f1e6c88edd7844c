// The libfabric links of a collective run and their step runner (ofi_data_links.hpp). Built
// only with libfabric (transport/CMakeLists.txt).
#include "transport/mesh/ofi_data_links.hpp"

#include "core/counter_sources.hpp"
#include "transport/mesh/step_runner.hpp"
#include "transport/ofi/mesh_steps.hpp"

namespace meshperf::transport::mesh {
namespace {

class ofi_step_runner final : public step_runner {
public:
    ofi_step_runner(connections& mesh, std::shared_ptr<ofi::mesh_links> links, const std::atomic<bool>& cancel,
                    core::dtype element)
        : step_runner(mesh), steps_(std::move(links), cancel, element) {}

private:
    bool has_link(unsigned peer) const override { return steps_.has_link(peer); }
    step_status move(std::span<peer_io> ios, std::chrono::milliseconds stall_limit,
                     std::vector<step_arrival>& completed) override {
        return steps_.run(ios, stall_limit, completed);
    }

    ofi::mesh_steps steps_;
};

class ofi_data_links final : public data_links {
public:
    explicit ofi_data_links(std::shared_ptr<ofi::mesh_links> links) : links_(std::move(links)) {}

    std::unique_ptr<step_runner> open_step_runner(connections& mesh, const std::atomic<bool>& cancel, core::dtype element,
                                                  const std::vector<std::span<std::byte>>&, device_memory* device) override {
        if (device) throw step_setup_error("GPU memory over libfabric (FI_HMEM) is not in this meshperf yet: use --memory host");
        return std::make_unique<ofi_step_runner>(mesh, links_, cancel, element);
    }
    std::string memory_note() const override { return {}; }
    void count_port(link_counter_target& target) const override {
        // The RDMA-class device behind the provider's domain (EFA, verbs), read as an RDMA port.
        if (const auto& device = links_->ep().description().device; !device.empty())
            target.count(core::rdma_port_source_kind, device, 1);
    }

private:
    std::shared_ptr<ofi::mesh_links> links_;
};

}  // namespace

std::shared_ptr<data_links> make_ofi_data_links(std::shared_ptr<ofi::mesh_links> links) {
    return std::make_shared<ofi_data_links>(std::move(links));
}

}  // namespace meshperf::transport::mesh
