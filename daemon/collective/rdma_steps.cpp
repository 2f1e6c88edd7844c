// The RDMA data path of a collective run: setting up one QP per mesh peer over the mesh's TCP
// connections, and the step runner that moves pieces through the peers' receive slots
// (protocol: collective_rdma.hpp).
#include "daemon/collective/rdma_steps.hpp"

#include "core/collective/reduce_ops.hpp"
#include "daemon/session/frame_channel.hpp"
#include "daemon/session/session_protocol.hpp"
#include "transport/rdma/device_registration.hpp"
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/error.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <array>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>

namespace meshperf::daemon {

namespace rdma = transport::rdma;
using transport::clock;

/// One direction pair of a link, as this rank keeps it for the whole run.
struct rdma_link {
    std::size_t slot = 0;            ///< the QP's index in the endpoint
    std::uint64_t sent = 0;          ///< pieces written to the peer, ever
    std::uint64_t credited = 0;      ///< of those, pieces the peer has consumed (its credits)
    std::uint64_t arrived = 0;       ///< pieces from the peer that came, ever
    std::uint64_t consumed = 0;      ///< of those, pieces consumed here (arrived − consumed wait in their slots)
    std::array<std::uint32_t, rdma_slot_count> length{};  ///< slot i: the length of the piece in it
    std::uint32_t owed = 0;          ///< credits consumed here and not sent back yet
    std::uint32_t data_in_flight = 0, credits_in_flight = 0;  ///< sends not completed
};

struct collective_rdma_links {
    std::unique_ptr<rdma::endpoint> ep;
    std::vector<std::optional<rdma_link>> links;  ///< index = rank
};

namespace {

constexpr std::uint32_t send_depth = 2 * rdma_slot_count + 4;  // pieces and credits in flight
constexpr std::uint32_t recv_depth = 2 * rdma_slot_count + 4;  // pieces and credits not yet polled

// --- setup over the mesh's sockets ---------------------------------------------------------

/// transport::send_all, its failure said as the set-up's.
void send_bytes(int fd, const void* data, std::size_t n, clock::time_point deadline, const std::string& who) {
    try {
        transport::send_all(fd, data, n, deadline);
    } catch (const std::system_error& e) {
        throw session_error(fmt::format("the RDMA set-up with {} failed: {} (see its daemon's log)", who, e.what()));
    }
}

/// Exactly n bytes through transport::recv_some, a close or a failure said as the set-up's.
void recv_bytes(int fd, void* data, std::size_t n, clock::time_point deadline, const std::string& who) {
    auto* p = static_cast<char*>(data);
    while (n) {
        std::size_t got = 0;
        try {
            got = transport::recv_some(fd, p, n, deadline);
        } catch (const std::system_error& e) {
            throw session_error(fmt::format("the RDMA set-up with {} failed: {} (see its daemon's log)", who, e.what()));
        }
        if (got == 0) throw session_error(fmt::format("{} closed its connection during the RDMA set-up (see its daemon's log)", who));
        p += got;
        n -= got;
    }
}

void send_description(int fd, const rdma::endpoint_info& info, clock::time_point deadline, const std::string& who) {
    const auto text = nlohmann::json(info).dump();
    const std::uint32_t n = htonl(static_cast<std::uint32_t>(text.size()));
    send_bytes(fd, &n, sizeof n, deadline, who);
    send_bytes(fd, text.data(), text.size(), deadline, who);
}

rdma::endpoint_info receive_description(int fd, clock::time_point deadline, const std::string& who) {
    std::uint32_t n = 0;
    recv_bytes(fd, &n, sizeof n, deadline, who);
    n = ntohl(n);
    if (n == 0 || n > 64 * 1024) throw session_error(fmt::format("{} sent a malformed RDMA description ({} bytes)", who, n));
    std::string text(n, '\0');
    recv_bytes(fd, text.data(), n, deadline, who);
    try {
        return rdma::endpoint_info_from_json(nlohmann::json::parse(text));
    } catch (const std::exception& e) {
        throw session_error(fmt::format("{} sent a malformed RDMA description: {}", who, e.what()));
    }
}

// --- the step runner -------------------------------------------------------------------------

/// A registered buffer of the size being run.
struct registered {
    std::byte* begin;
    std::size_t bytes;
    std::unique_ptr<rdma::memory_region> mr;
};

class rdma_step_runner final : public step_runner {
public:
    rdma_step_runner(collective_mesh& mesh, const std::atomic<bool>& cancel, core::dtype element,
                     const std::vector<std::span<std::byte>>& buffers, collective_device_memory* device)
        : step_runner(mesh), keep_(mesh.rdma), links_(*keep_), cancel_(cancel), element_(element), device_(device) {
        const bool slots_on_device = links_.ep->qp_count() && !links_.ep->slot(0).host_memory();
        if (slots_on_device != (device != nullptr) || (device && !buffers.empty()))
            throw collective_fault(fmt::format("the RDMA receive slots are {} memory but the size's buffers are {} memory "
                                               "(a bug: report it)",
                                               slots_on_device ? "device" : "host", device ? "device" : "host"),
                                   std::nullopt);
        if (device) register_device_buffers(*device);
        for (auto b : buffers) {
            if (b.empty()) continue;
            try {
                regions_.push_back({b.data(), b.size(),
                                    std::make_unique<rdma::memory_region>(links_.ep->pd(), b.data(), b.size(),
                                                                          IBV_ACCESS_LOCAL_WRITE, links_.ep->where())});
            } catch (const std::exception& e) {
                throw collective_fault(fmt::format("cannot register the {} byte buffer for RDMA: {}", b.size(), e.what()),
                                       std::nullopt);
            }
        }
    }

    void run(const step_label& label, std::chrono::milliseconds stall_limit) override {
        completed_.clear();
        posted_.assign(ios_.size(), 0);
        auto last_progress = clock::now();
        bool armed = false;  // the step's CQs are armed and have been polled since
        while (true) {
            bool active = false, moved = false;
            for (std::size_t i = 0; i < ios_.size(); ++i) {
                auto& io = ios_[i];
                auto& link = *links_.links[io.peer];
                moved |= poll(io, link, label);
                while (io.recv.active() && link.arrived > link.consumed) {
                    consume(io, link, label);
                    moved = true;
                }
                moved |= send_credits(io.peer, link, label);
                while (posted_[i] < io.send.bytes && link.sent - link.credited < rdma_slot_count &&
                       link.data_in_flight < rdma_slot_count) {
                    post_piece(io, link, posted_[i], label);
                    moved = true;
                }
                active |= io.send.active() || io.recv.active();
            }
            if (!active) break;
            if (cancel_.load(std::memory_order_relaxed)) throw run_cancelled();
            const auto now = clock::now();
            if (moved) {
                last_progress = now;
                armed = false;
                continue;
            }
            if (now - last_progress > stall_limit) throw stalled(label, stall_limit);
            // Spin while data is due; past spin_for of silence (a slow peer, the barrier
            // waiting for the slowest rank) arm the CQs, look once more, then sleep until a
            // completion or a peer's close, so that ranks sharing CPUs leave them to each
            // other (and to a software RDMA device's kernel threads).
            if (now - last_progress < spin_for) continue;
            if (!armed) {
                arm(label);
                armed = true;
                continue;
            }
            sleep_until_completion(label);
            armed = false;
        }
        ios_.clear();
    }

private:
    /// How long a step spins on its CQs before it sleeps on the completion channel: a few
    /// round trips of a hardware link, so a live exchange never sleeps.
    static constexpr auto spin_for = std::chrono::microseconds(50);

    /// GPUDirect: registers the size's device buffers with the NIC by the path the endpoint's
    /// slots took (dma-buf, else nvidia-peermem), so sends are read from the GPU directly.
    void register_device_buffers(collective_device_memory& device) {
        using region = collective_device_memory::region;
        const auto& gpu = links_.ep->options().gpu_memory;
        for (auto r : {region::send, region::recv, region::scratch}) {
            auto* a = device.allocation(r);
            if (!a) continue;
            try {
                auto reg = rdma::register_device_memory(links_.ep->pd(), *a, gpu->caps(), IBV_ACCESS_LOCAL_WRITE,
                                                        fmt::format("{} with {}", links_.ep->where(), gpu->name()));
                regions_.push_back({a->data(), a->size(), std::make_unique<rdma::memory_region>(reg.mr)});
            } catch (const std::exception& e) {
                throw collective_fault(
                    fmt::format("cannot register the {} byte device buffer for GPUDirect RDMA: {}", a->size(), e.what()),
                    std::nullopt);
            }
        }
    }

    /// Runs a device operation of the data path; its failure ends the size as this rank's fault.
    template <class Op> void on_device(const char* what, const step_label& label, Op op) {
        try {
            op();
        } catch (const std::exception& e) {
            throw collective_fault(fmt::format("{}: device memory failed while {}: {}", label.text(), what, e.what()), std::nullopt);
        }
    }

    /// Asks every CQ of the step for an event at its next completion.
    void arm(const step_label& label) {
        for (const auto& io : ios_)
            if (const int rc = ibv_req_notify_cq(slot(*links_.links[io.peer]).cq.get(), 0))
                link_failed(io.peer, fmt::format("ibv_req_notify_cq: {}", std::strerror(rc)), label);
    }

    /// Sleeps (at most 100 ms) until an armed CQ has a completion or a peer's socket reads,
    /// and takes the channel's events. Nothing travels on the sockets once the QPs are up: a
    /// socket that reads end-of-stream is a peer that closed it (it faulted or its daemon died).
    void sleep_until_completion(const step_label& label) {
        auto& events = *links_.ep->events();
        fds_.assign(1, pollfd{events.fd(), POLLIN, 0});
        for (const auto& io : ios_)
            if (io.fd >= 0) fds_.push_back(pollfd{io.fd, POLLIN, 0});
        const int n = ::poll(fds_.data(), fds_.size(), 100);
        if (n < 0 && errno != EINTR) throw collective_fault(fmt::format("{}: poll failed: {}", label.text(), std::strerror(errno)), {});
        events.drain();
        for (std::size_t k = 1; k < fds_.size(); ++k) {
            if (!fds_[k].revents) continue;
            char c;
            const auto r = ::recv(fds_[k].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                const auto& io = *std::find_if(ios_.begin(), ios_.end(), [&](const peer_io& x) { return x.fd == fds_[k].fd; });
                throw closed(label, io.peer);
            }
        }
    }

    bool has_link(unsigned peer) const override { return peer < links_.links.size() && links_.links[peer]; }

    rdma::qp_slot& slot(const rdma_link& l) { return links_.ep->slot(l.slot); }

    [[noreturn]] void link_failed(unsigned peer, const std::string& what, const step_label& label) {
        slot(*links_.links[peer]).failed = true;
        throw collective_fault(fmt::format("{}: the RDMA link to rank {} failed: {} (its daemon died or gave up on the run, "
                                           "or the link was cut)",
                                           label.text(), peer, what),
                               peer);
    }

    /// Takes the link's completions: pieces and credits that came, sends that finished.
    bool poll(peer_io& io, rdma_link& link, const step_label& label) {
        auto& s = slot(link);
        ibv_wc wc[16];
        const int n = ibv_poll_cq(s.cq.get(), 16, wc);
        if (n < 0) link_failed(io.peer, "ibv_poll_cq failed", label);
        for (int k = 0; k < n; ++k) {
            const auto& c = wc[k];
            if (c.status != IBV_WC_SUCCESS) link_failed(io.peer, ibv_wc_status_str(c.status), label);
            switch (c.opcode) {
            case IBV_WC_RECV_RDMA_WITH_IMM:
                --s.rx_posted;
                if (link.arrived - link.consumed >= rdma_slot_count)
                    link_failed(io.peer, "a piece came into a slot not yet credited", label);
                link.length[link.arrived++ % rdma_slot_count] = ntohl(c.imm_data);
                break;
            case IBV_WC_RECV:
                --s.rx_posted;
                if (!(c.wc_flags & IBV_WC_WITH_IMM)) link_failed(io.peer, "a send without a credit count came", label);
                link.credited += ntohl(c.imm_data);
                if (link.credited > link.sent) link_failed(io.peer, "more credits came than pieces were sent", label);
                break;
            case IBV_WC_RDMA_WRITE:
                --link.data_in_flight;
                io.send.done += static_cast<std::size_t>(c.wr_id);
                break;
            case IBV_WC_SEND:
                --link.credits_in_flight;
                break;
            default:
                link_failed(io.peer, fmt::format("unexpected completion opcode {}", static_cast<int>(c.opcode)), label);
            }
        }
        if (n > 0) {
            try {
                s.top_up_receives();
            } catch (const std::exception& e) {
                link_failed(io.peer, e.what(), label);
            }
        }
        return n > 0;
    }

    /// Copies, or adds, the oldest piece from the peer into the step's receive and frees its slot.
    void consume(peer_io& io, rdma_link& link, const step_label& label) {
        auto& m = io.recv;
        const std::size_t slot_index = link.consumed % rdma_slot_count;
        const std::size_t len = link.length[slot_index];
        if (len == 0 || len > rdma_slot_bytes || len > m.bytes - m.done)
            throw collective_fault(fmt::format("{}: rank {} sent a piece of {} bytes where this step expects {} more (the two "
                                               "daemons run different plans: check their versions)",
                                               label.text(), io.peer, len, m.bytes - m.done),
                                   io.peer);
        const std::byte* piece = slot(link).rx() + slot_index * rdma_slot_bytes;
        if (device_) {
            // GPUDirect: the piece is in device memory, written by the NIC.
            std::byte* to = m.reduce_into ? m.reduce_into + m.done : m.data + m.done;
            on_device("taking a piece from its receive slot", label, [&] {
                device_->flush_rdma_writes();
                if (m.reduce_into) device_->add_at(element_, to, piece, len);
                else if (region_of(to, len)) device_->copy_at(to, piece, len);
                else device_->download_at(to, piece, len);  // a host message: the barrier's flag
            });
        } else if (m.reduce_into) {
            core::reduce_sum(element_, {m.reduce_into + m.done, len}, {piece, len});
        } else {
            std::memcpy(m.data + m.done, piece, len);
        }
        const auto now = clock::now();
        if (m.done == 0) {
            m.first_byte = now;
            m.first_bytes = len;
        }
        m.done += len;
        if (m.done == m.bytes) completed_.push_back({io.peer, m.first_byte, now, m.bytes - m.first_bytes, m.bytes});
        ++link.consumed;
        ++link.owed;
    }

    /// Sends the credits owed to the peer, when the send queue has room for them.
    bool send_credits(unsigned peer, rdma_link& link, const step_label& label) {
        if (!link.owed || link.credits_in_flight >= send_depth - rdma_slot_count) return false;
        ibv_send_wr wr{};
        wr.opcode = IBV_WR_SEND_WITH_IMM;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.imm_data = htonl(link.owed);
        post(peer, link, wr, label);
        ++link.credits_in_flight;
        link.owed = 0;
        return true;
    }

    /// Writes the next piece of the step's send into the peer's next slot.
    void post_piece(peer_io& io, rdma_link& link, std::size_t& posted, const step_label& label) {
        auto& s = slot(link);
        const std::size_t len = std::min(rdma_slot_bytes, io.send.bytes - posted);
        const std::size_t at = (link.sent % rdma_slot_count) * rdma_slot_bytes;
        std::byte* src = io.send.data + posted;
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(src), static_cast<std::uint32_t>(len), 0};
        ibv_send_wr wr{};
        wr.wr_id = len;  // what its completion adds to the send (a credit's is 0: told apart by opcode)
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.imm_data = htonl(static_cast<std::uint32_t>(len));
        wr.wr.rdma.remote_addr = s.remote_addr + at;
        wr.wr.rdma.rkey = s.remote_rkey;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        const auto* r = region_of(src, len);
        if (len <= s.qp.max_inline() && !(device_ && r)) {  // inline data is read by the CPU: host memory only
            wr.send_flags |= IBV_SEND_INLINE;
        } else if (r) {
            sge.lkey = r->mr->lkey();
        } else {  // not in the size's buffers (the barrier's flag): staged in the link's send half
            if (s.host_memory()) std::memcpy(s.tx() + at, src, len);
            else on_device("staging a send", label, [&] { device_->upload_at(s.tx() + at, src, len); });
            sge.addr = reinterpret_cast<std::uintptr_t>(s.tx() + at);
            sge.lkey = s.mr.lkey();
        }
        post(io.peer, link, wr, label);
        ++link.sent;
        ++link.data_in_flight;
        posted += len;
    }

    void post(unsigned peer, rdma_link& link, ibv_send_wr& wr, const step_label& label) {
        ibv_send_wr* bad = nullptr;
        if (const int rc = ibv_post_send(slot(link).qp.get(), &wr, &bad))
            link_failed(peer, fmt::format("ibv_post_send: {}", std::strerror(rc)), label);
    }

    const registered* region_of(const std::byte* p, std::size_t len) const {
        for (const auto& r : regions_)
            if (p >= r.begin && p + len <= r.begin + r.bytes) return &r;
        return nullptr;
    }

    std::shared_ptr<collective_rdma_links> keep_;  // the PD outlives the regions registered in it
    collective_rdma_links& links_;
    const std::atomic<bool>& cancel_;
    core::dtype element_;
    collective_device_memory* device_;  // GPUDirect: the size's device memory; null: host memory
    std::vector<registered> regions_;
    std::vector<std::size_t> posted_;  // per ios_ entry: bytes of its send posted
    std::vector<pollfd> fds_;          // kept, so a sleep allocates nothing
};

}  // namespace

std::shared_ptr<collective_rdma_links> connect_rdma_links(const collective_mesh& mesh, const core::collective_spec& spec,
                                                          clock::time_point deadline,
                                                          std::shared_ptr<const rdma::device_memory> gpu) {
    std::vector<unsigned> peers;
    for (unsigned q = 0; q < mesh.fds.size(); ++q)
        if (mesh.fds[q]) peers.push_back(q);
    if (peers.empty()) throw session_error("this rank has no peer to open RDMA queue pairs to");
    auto links = std::make_shared<collective_rdma_links>();
    rdma::endpoint_options o;
    o.local_ip = transport::local_ip(mesh.fds[peers.front()].get());
    o.device = spec.rdma_device;
    o.port = static_cast<std::uint8_t>(spec.rdma_port);
    o.gid_index = spec.gid_index;
    o.qps = static_cast<std::uint32_t>(peers.size());
    o.max_message_bytes = rdma_slot_count * rdma_slot_bytes;
    o.tx_depth = send_depth;
    o.rx_depth = recv_depth;
    o.inline_bytes = 64;
    o.completion_events = true;
    o.gpu_memory = std::move(gpu);
    try {
        links->ep = std::make_unique<rdma::endpoint>(o);
    } catch (const std::exception& e) {
        throw session_error(fmt::format("cannot open RDMA for the collective: {}", e.what()));
    }
    links->links.resize(mesh.fds.size());
    const auto name = [](unsigned q) { return fmt::format("rank {}", q); };
    for (std::size_t i = 0; i < peers.size(); ++i) {
        links->links[peers[i]] = rdma_link{i};
        send_description(mesh.fds[peers[i]].get(), links->ep->qp_info(i), deadline, name(peers[i]));
    }
    for (std::size_t i = 0; i < peers.size(); ++i) {
        const auto remote = receive_description(mesh.fds[peers[i]].get(), deadline, name(peers[i]));
        try {
            links->ep->connect_qp(i, remote);
            links->ep->slot(i).top_up_receives();
        } catch (const std::exception& e) {
            throw session_error(fmt::format("cannot connect the RDMA queue pair to {}: {}", name(peers[i]), e.what()));
        }
    }
    const char ready = 'R';
    for (auto q : peers) send_bytes(mesh.fds[q].get(), &ready, 1, deadline, name(q));
    for (auto q : peers) {
        char got = 0;
        recv_bytes(mesh.fds[q].get(), &got, 1, deadline, name(q));
        if (got != ready) throw session_error(fmt::format("{} sent {:#x} where the RDMA set-up expects ready", name(q), got));
    }
    return links;
}

std::string rdma_memory_note(const collective_rdma_links& links) {
    if (!links.ep || !links.ep->qp_count()) return {};
    const auto& slot = links.ep->slot(0);
    if (slot.host_memory() || !slot.registration) return {};
    return fmt::format("GPUDirect RDMA, {} registered with {} by {}", links.ep->options().gpu_memory->name(), links.ep->where(),
                       core::to_string(slot.registration->path));
}

std::unique_ptr<step_runner> make_rdma_step_runner(collective_mesh& mesh, const std::atomic<bool>& cancel, core::dtype element,
                                                   const std::vector<std::span<std::byte>>& buffers,
                                                   collective_device_memory* device) {
    return std::make_unique<rdma_step_runner>(mesh, cancel, element, buffers, device);
}

}  // namespace meshperf::daemon
