// The step runner's bookkeeping and its TCP data path (transport/tcp/mesh_steps.hpp).
#include "transport/mesh/step_runner.hpp"

#include "transport/tcp/mesh_steps.hpp"

namespace meshperf::transport::mesh {

peer_io* step_runner::with(unsigned peer) {
    for (auto& p : ios_)
        if (p.peer == peer) return &p;
    if (!has_link(peer)) return nullptr;
    ios_.push_back(peer_io{peer, peer < mesh_.fds.size() ? mesh_.fds[peer].get() : -1, {}, {}});
    return &ios_.back();
}

step_status step_runner::run(std::chrono::milliseconds stall_limit) {
    auto st = move(ios_, stall_limit, completed_);
    if (st.ok()) ios_.clear();
    return st;
}

namespace {

class tcp_step_runner final : public step_runner {
public:
    tcp_step_runner(connections& mesh, const std::atomic<bool>& cancel, core::dtype element)
        : step_runner(mesh), steps_(mesh.rcvlowat, cancel, element) {}

private:
    bool has_link(unsigned peer) const override { return peer < mesh_.fds.size() && mesh_.fds[peer]; }
    step_status move(std::span<peer_io> ios, std::chrono::milliseconds stall_limit,
                     std::vector<step_arrival>& completed) override {
        return steps_.run(ios, stall_limit, completed);
    }

    tcp::mesh_steps steps_;
};

}  // namespace

std::unique_ptr<step_runner> make_tcp_step_runner(connections& mesh, const std::atomic<bool>& cancel, core::dtype element) {
    return std::make_unique<tcp_step_runner>(mesh, cancel, element);
}

}  // namespace meshperf::transport::mesh
