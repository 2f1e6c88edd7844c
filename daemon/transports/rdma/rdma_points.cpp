// RDMA points over the peer session (docs/architecture.md, docs/rdma.md): endpoint
// descriptions travel as `endpoint` frames; per point, passive runners are armed and
// started before the other side's active runners start (point_ready / point_go), and each
// side's active message counts reach the other before its passive runners stop
// (point_stop / point_done).
#include "daemon/transports/rdma/rdma_points.hpp"

#include "core/json_fields.hpp"
#include "core/counter_sources.hpp"
#include "core/error.hpp"
#include "core/flow_tracker.hpp"
#include "core/sizes.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/sweep/point_figures.hpp"
#include "daemon/sweep/rail_failures.hpp"
#include "daemon/session/session_protocol.hpp"
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/error.hpp"
#include "transport/rdma/inventory.hpp"
#include "transport/rdma/point_side.hpp"
#include "transport/rdma/rail_point_side.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon {

using transport::clock;
using nlohmann::json;
namespace rdma = transport::rdma;

namespace {

/// This side's endpoints: one on the device of the session's address (or spec.rdma_device),
/// or over rails one per rail, each on the device whose RoCE GID holds this side's address
/// on the rail (the initiator's local_address, the peer's peer_address). Each endpoint's
/// buffers are in this side's memory on its rail (core::rail_memory: with cuda:auto the GPU
/// nearest that rail's NIC).
using endpoints = std::vector<std::unique_ptr<rdma::endpoint>>;
endpoints open_endpoints(const core::run_spec& spec, const frame_channel& ch, bool initiator) {
    rdma::endpoint_options o;
    if (spec.rails.empty()) o.gpu_memory = rdma_device_memory(initiator ? spec.local_memory : spec.remote_memory);
    o.device = spec.rdma_device;
    o.port = static_cast<std::uint8_t>(spec.rdma_port);
    o.gid_index = spec.gid_index;
    o.local_ip = transport::local_ip(ch.fd());
    o.qps = rdma::qps_for(spec);
    o.max_message_bytes = spec.sizes.back();
    o.tx_depth = spec.tx_depth;
    endpoints out;
    if (spec.rails.empty()) {
        out.push_back(std::make_unique<rdma::endpoint>(o));
        return out;
    }
    for (const auto& r : spec.rails) {
        o.local_ip = initiator ? r.local_address : r.peer_address;
        try {
            o.gpu_memory = rdma_device_memory(core::rail_memory(spec, r, initiator));
            out.push_back(std::make_unique<rdma::endpoint>(o));
        } catch (const rdma::rdma_error& e) {
            throw rdma::rdma_error(e.code(), fmt::format("rail {} ({}): {}", r.name, o.local_ip, e.what()));
        }
    }
    return out;
}

/// The endpoints of the point's rails (`point`: the run's less those dropped after failing),
/// from those opened for every rail of the `run`; all of them without rails.
std::vector<rdma::endpoint*> point_endpoints(const endpoints& eps, const core::run_spec& run, const core::run_spec& point) {
    std::vector<rdma::endpoint*> out;
    const auto in_point = [&](const std::string& name) {
        return std::any_of(point.rails.begin(), point.rails.end(), [&](const core::rail_pair& r) { return r.name == name; });
    };
    for (std::size_t k = 0; k < eps.size(); ++k)
        if (run.rails.empty() || (k < run.rails.size() && in_point(run.rails[k].name))) out.push_back(eps[k].get());
    return out;
}

std::vector<std::string> rail_names(const core::run_spec& spec) {
    std::vector<std::string> out;
    for (const auto& r : spec.rails) out.push_back(r.name);
    return out;
}

/// The endpoint frame's body: {"endpoint": INFO}, or over rails {"endpoints": [INFO per rail]}.
json endpoints_json(const endpoints& eps, bool rails) {
    if (!rails) return {{"endpoint", rdma::to_json(eps.front()->local_info())}};
    json list = json::array();
    for (const auto& e : eps) list.push_back(rdma::to_json(e->local_info()));
    return {{"endpoints", std::move(list)}};
}

/// Connects each endpoint to the other side's description of the same rail. Throws
/// session_error for a frame that does not hold one per rail.
void connect_endpoints(endpoints& eps, const json& body, bool rails) {
    if (!rails) {
        eps.front()->connect(rdma::endpoint_info_from_json(body.at("endpoint")));
        return;
    }
    const auto it = body.find("endpoints");
    if (it == body.end() || !it->is_array() || it->size() != eps.size())
        throw session_error(fmt::format("the other side sent no RDMA endpoint for each of the {} rails", eps.size()));
    for (std::size_t k = 0; k < eps.size(); ++k) eps[k]->connect(rdma::endpoint_info_from_json((*it)[k]));
}

/// "rxe0 port 1 (path MTU 4096)", or one per rail: "rail ra0: rxe0 port 1 (...), rail ra1: ...".
std::string where_text(const endpoints& eps, const core::run_spec& spec) {
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < eps.size(); ++k)
        parts.push_back(fmt::format("{}{}, path MTU {} bytes", k < spec.rails.size() ? "rail " + spec.rails[k].name + ": " : "",
                                    eps[k]->where(), eps[k]->path_mtu()));
    return fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<rdma::qp_role> peer_roles(const core::run_spec& spec, core::test_kind test) {
    auto roles = rdma::initiator_qp_roles(test, spec.streams, spec.reverse);
    for (auto& r : roles) r = rdma::mirror(r);
    return roles;
}

std::size_t counting(const std::vector<rdma::qp_role>& roles, core::rdma_op op) {
    std::size_t n = 0;
    for (auto r : roles)
        if ((r == rdma::qp_role::active) == rdma::active_counts(op)) ++n;
    return n;
}

// Sentences for the result about one side's GPU memory: how it was registered, and where
// the GPU sits relative to the NIC. Empty for host memory.
/// The memory of endpoint `k` of this side (open_endpoints' order).
const std::string& endpoint_memory(const core::run_spec& spec, std::size_t k, bool initiator) {
    if (k < spec.rails.size()) return core::rail_memory(spec, spec.rails[k], initiator);
    return initiator ? spec.local_memory : spec.remote_memory;
}

/// "initiator", or over rails "initiator rail ra0" (the peer: "peer rail rb0", its own name
/// of the rail): whose memory a note is about.
std::string endpoint_side(const core::run_spec& spec, std::size_t k, bool initiator) {
    const std::string side = initiator ? "initiator" : "peer";
    if (k >= spec.rails.size()) return side;
    return fmt::format("{} rail {}", side, initiator ? spec.rails[k].name : spec.rails[k].peer_name);
}

std::vector<std::string> gpu_memory_notes(const rdma::endpoint& ep, const std::string& memory, const std::string& side) {
    if (ep.gpu_registration().empty()) return {};
    std::vector<std::string> notes{fmt::format("{} memory {}: GPUDirect RDMA, registered with {} through {}", side, memory,
                                               ep.where(), ep.gpu_registration())};
    for (const auto& n : ep.slot(0).registration->notes) notes.push_back(fmt::format("{}: {}", side, n));
    for (auto& n : memory_notes(memory, side, ep.local_info().device, false)) notes.push_back(std::move(n));
    return notes;
}

/// The device and port each endpoint opened, for the point's counters.
std::vector<transport::counter_source_target> ports_of(const endpoints& eps) {
    std::vector<transport::counter_source_target> out;
    for (const auto& e : eps)
        out.push_back({std::string(core::rdma_port_source_kind), e->local_info().device, e->local_info().port});
    return out;
}

/// The session's port (no rails), or nothing: over rails each rail's port is read instead.
std::optional<transport::counter_source_target> path_port(const std::vector<transport::counter_source_target>& ports,
                                                          const core::run_spec& spec) {
    if (!spec.rails.empty() || ports.empty()) return std::nullopt;
    return ports.front();
}

class rdma_initiator final : public initiator_point {
public:
    rdma_initiator(const endpoints& eps, const core::run_spec& run_spec, const point_key& key, std::uint64_t byte_cap,
                   const std::vector<int>& cpus, point_rails::run_rails& rails, bool corrupt_sent_for_test)
        : run_spec_(run_spec), spec_(point_rails::point_spec(run_spec, rails.dropped)), key_(key), byte_cap_(byte_cap),
          ports_(ports_of(eps)),
          side_(point_endpoints(eps, run_spec, spec_), rail_names(spec_), spec_, key.test, key.size,
                rdma::initiator_qp_roles(key.test, spec_.streams, spec_.reverse), static_cast<std::uint32_t>(key.index),
                corrupt_sent_for_test),
          local_n_(side_.counting_runners()),
          remote_n_(counting(peer_roles(spec_, key.test), spec_.op) * std::max<std::size_t>(1, spec_.rails.size())),
          local_(local_n_, spec_.warmup_s), remote_(remote_n_, spec_.warmup_s), rails_(rails),
          tolerant_(point_rails::tolerates_rail_failures(spec_, key.test)) {
        const auto& spec = spec_;
        // Bytes are counted where the op completes: the receiver of a SEND, the initiator of a
        // WRITE or READ. Name each tracker for the direction its bytes travel.
        const bool counted_here_is_inbound = rdma::counting_side_receives(spec.op);
        if (remote_n_) flows_.push_back({counted_here_is_inbound ? "initiator->peer" : "peer->initiator", &remote_});
        if (local_n_) flows_.push_back({counted_here_is_inbound ? "peer->initiator" : "initiator->peer", &local_});
        side_.pin_to(cpus);
    }

    json begin_fields() override {
        json f = json::object();
        rails_.add_begin_fields(f, tolerant_);
        return f;
    }
    void arm() override { side_.start_passive(); }
    void connect() override { side_.start_active(); }

    void peer_progress(double t_s, const std::vector<std::uint64_t>& bytes) override {
        remote_.add(t_s, bytes);
        remote_bytes_ = total_bytes(bytes);
    }
    void sample(double elapsed_s) override {
        local_bytes_ = side_.counted_bytes();
        if (local_n_) local_.add(elapsed_s, local_bytes_);
    }
    std::vector<tracked_flow> flows() const override { return flows_; }
    bool ended() override { return key_.test == core::test_kind::latency && side_.active_finished(); }

    // The byte limit, checked every tick: a flow may pass it by one tick's worth.
    bool at_byte_cap() override {
        if (!byte_cap_ || key_.test == core::test_kind::latency) return false;
        byte_cap_reached_ = total_bytes(local_bytes_) >= byte_cap_ || remote_bytes_ >= byte_cap_;
        return byte_cap_reached_;
    }

    json stop(bool, bool) override {
        side_.stop_active();
        // What the peer's passive runners expect (none over a rail whose QPs failed here).
        return {{"messages", side_.active_messages(tolerant_)}};
    }

    // The peer answers point_stop only once its passive runners have their messages (up to
    // the endpoint's peer timeout), quiet meanwhile.
    bool peer_reports_until_done() const override { return false; }
    std::chrono::seconds peer_silence_limit() const override {
        return std::chrono::duration_cast<std::chrono::seconds>(rdma::point_params{}.peer_timeout) + std::chrono::seconds{3};
    }

    void finish(const json& peer_done) override {
        std::vector<std::uint64_t> counts;
        if (peer_done.contains("active_messages")) counts = core::json_unsigned_list(peer_done["active_messages"], "active_messages");
        side_.finish_passive(counts);
    }

    std::string error() const override { return side_.error(tolerant_); }
    bool verify_failed() const override { return side_.verify_failed(); }
    std::string_view data_path_name() const override { return "RDMA"; }
    std::vector<transport::thread_cpu_record> thread_cpus() const override { return side_.thread_cpus(); }
    std::optional<transport::counter_source_target> device_counters() const override { return path_port(ports_, spec_); }
    std::vector<transport::counter_source_target> rail_device_counters() const override { return ports_; }

    core::point_result figures(const json& peer_done) override {
        point_inputs in{spec_, key_.test, key_.size};
        in.latency = &side_.latency();
        in.tracked_flows = flows_;
        in.local_cpu_s = side_.cpu_seconds();
        in.local_wall_s = side_.wall_seconds();
        in.peer_cpu_s = peer_done.value("cpu_s", 0.0);
        in.peer_wall_s = peer_done.value("wall_s", 0.0);
        in.sender_is_local = !spec_.reverse;
        in.verified_here = side_.verified_bytes();
        in.verified_at_peer = peer_done.value("verified_bytes", std::uint64_t{0});  // an older peer: none said
        if (byte_cap_reached_) in.byte_cap_reached = byte_cap_;
        if (tolerant_) {
            auto failed = side_.failed_rails("at the initiator");
            core::merge_rail_failures(failed, point_rails::peer_rail_failures(peer_done, spec_));
            in.failed_rails = point_rails::with_a_survivor(std::move(failed), spec_);
            if (!in.failed_rails.empty()) in.tracked_flows = flows_without(in.failed_rails);
        }
        in.dropped_rails = rails_.dropped;
        if (!in.dropped_rails.empty()) in.run_rails = &run_spec_.rails;
        auto point = assemble_point(in);
        rails_.drop(in.failed_rails, key_.index, key_.test, key_.size);
        return point;
    }

    void abort() noexcept override { side_.abort(); }

private:
    /// The flows with the QPs of `failed` rails left out (their bytes count nothing).
    std::vector<tracked_flow> flows_without(const std::vector<core::rail_failure>& failed) {
        const auto rails = std::max<std::size_t>(1, spec_.rails.size());
        local_kept_.emplace(local_.without_streams(point_rails::streams_on(failed, spec_, local_n_, local_n_ / rails)));
        remote_kept_.emplace(remote_.without_streams(point_rails::streams_on(failed, spec_, remote_n_, remote_n_ / rails)));
        auto out = flows_;
        for (auto& f : out) f.tracker = f.tracker == &local_ ? &*local_kept_ : &*remote_kept_;
        return out;
    }

    const core::run_spec& run_spec_;
    core::run_spec spec_;  // the run's, less the rails dropped in earlier points
    point_key key_;
    std::uint64_t byte_cap_;
    std::vector<transport::counter_source_target> ports_;
    rdma::rail_point_side side_;
    std::size_t local_n_, remote_n_;
    core::flow_tracker local_, remote_;  // bytes counted here, and at the peer (its progress frames)
    std::optional<core::flow_tracker> local_kept_, remote_kept_;  // without a failed rail's QPs
    std::vector<tracked_flow> flows_;
    std::vector<std::uint64_t> local_bytes_;
    std::uint64_t remote_bytes_ = 0;
    bool byte_cap_reached_ = false;
    point_rails::run_rails& rails_;
    bool tolerant_;  // a rail whose QPs fail ends alone
};

class rdma_responder final : public responder_point {
public:
    rdma_responder(const endpoints& eps, const core::run_spec& run_spec, const point_key& key, const json& begin,
                   std::uint64_t byte_cap, const std::vector<int>& cpus, bool corrupt_sent_for_test)
        : spec_(point_rails::point_spec(run_spec, point_rails::dropped_from_begin(begin, run_spec))), key_(key),
          byte_cap_(byte_cap), ports_(ports_of(eps)),
          side_(point_endpoints(eps, run_spec, spec_), rail_names(spec_), spec_, key.test, key.size, peer_roles(spec_, key.test),
                static_cast<std::uint32_t>(key.index), corrupt_sent_for_test),
          tolerant_(point_rails::tolerant_by_begin(begin, spec_, key.test)) {
        side_.pin_to(cpus);
    }

    void arm() override { side_.start_passive(); }
    void start() override { side_.start_active(); }
    bool reports() const override { return side_.counting_runners() > 0; }
    std::vector<std::uint64_t> counted_bytes() const override { return side_.counted_bytes(); }

    // Our own active queue pairs stop at the byte limit, whatever the initiator does.
    void check_limits() override {
        if (byte_cap_ && !active_stopped_ && key_.test != core::test_kind::latency && total_bytes(side_.counted_bytes()) >= byte_cap_) {
            side_.stop_active();
            active_stopped_ = true;
        }
    }

    void stop(const json& body) override {
        if (body.contains("messages")) initiator_messages_ = core::json_unsigned_list(body["messages"], "messages");
    }
    bool ended(bool stop_received) const override { return stop_received; }
    void finish(bool) override {
        side_.stop_active();
        side_.finish_passive(initiator_messages_);
    }
    json done_fields() override {
        // Our own QPs that failed on a rail: the initiator keeps the other rails (it asked to).
        json done = {{"active_messages", side_.active_messages(tolerant_)}, {"verified_bytes", side_.verified_bytes()}};
        if (tolerant_)
            if (const auto failed = side_.failed_rails("at the peer"); !failed.empty() && side_.error(true).empty())
                done["failed_rails"] = point_rails::to_json(failed);
        return done;
    }

    double cpu_seconds() const override { return side_.cpu_seconds(); }
    double wall_seconds() const override { return side_.wall_seconds(); }
    std::string error() const override { return side_.error(tolerant_); }
    bool verify_failed() const override { return side_.verify_failed(); }
    std::vector<transport::thread_cpu_record> thread_cpus() const override { return side_.thread_cpus(); }
    void abort() noexcept override { side_.abort(); }
    std::optional<transport::counter_source_target> device_counters() const override { return path_port(ports_, spec_); }
    std::vector<transport::counter_source_target> rail_device_counters() const override { return ports_; }

private:
    core::run_spec spec_;  // the run's, less the rails the initiator dropped in earlier points
    point_key key_;
    std::uint64_t byte_cap_;
    std::vector<transport::counter_source_target> ports_;
    rdma::rail_point_side side_;
    bool tolerant_;  // a rail whose QPs fail ends alone, named in point_done
    bool active_stopped_ = false;
    std::vector<std::uint64_t> initiator_messages_;
};

class rdma_initiator_transport final : public initiator_transport {
public:
    rdma_initiator_transport(const core::run_spec& spec, std::uint64_t byte_cap, std::vector<int> cpus, bool corrupt_sent_for_test)
        : spec_(spec), byte_cap_(byte_cap), cpus_(std::move(cpus)), corrupt_sent_for_test_(corrupt_sent_for_test) {}

    void open(frame_channel& ch, const json&, core::run_result& run) override {
        const bool rails = !spec_.rails.empty();
        eps_ = open_endpoints(spec_, ch, true);
        ch.send(core::frame_type::endpoint, endpoints_json(eps_, rails), clock::now() + handshake_timeout);
        const auto remote = ch.receive(clock::now() + handshake_timeout);
        if (remote.type != core::frame_type::endpoint) throw session_error("peer did not answer with its RDMA endpoint");
        connect_endpoints(eps_, remote.body, rails);
        run.warnings.push_back(fmt::format("RDMA on {}", where_text(eps_, spec_)));
        for (std::size_t k = 0; k < eps_.size(); ++k)
            for (auto& n : gpu_memory_notes(*eps_[k], endpoint_memory(spec_, k, true), endpoint_side(spec_, k, true)))
                run.warnings.push_back(std::move(n));
        for (auto& n : peer_memory_notes(remote.body)) run.warnings.push_back(std::move(n));
        rails_.warnings = &run.warnings;
    }
    std::string path_label() const override { return fmt::format("rdma {} ", core::to_string(spec_.op)); }
    std::unique_ptr<initiator_point> point(const point_key& key) override {
        return std::make_unique<rdma_initiator>(eps_, spec_, key, byte_cap_, cpus_, rails_, corrupt_sent_for_test_);
    }

private:
    const core::run_spec& spec_;
    std::uint64_t byte_cap_;
    std::vector<int> cpus_;
    endpoints eps_;
    point_rails::run_rails rails_;  // rails that failed in earlier points
    bool corrupt_sent_for_test_;    // test hook MESHPERF_TEST_CORRUPT_RDMA, read once for the run
};

class rdma_responder_transport final : public responder_transport {
public:
    rdma_responder_transport(const core::run_spec& spec, std::uint64_t byte_cap, std::vector<int> cpus, bool corrupt_sent_for_test)
        : spec_(spec), byte_cap_(byte_cap), cpus_(std::move(cpus)), corrupt_sent_for_test_(corrupt_sent_for_test) {}

    void open(frame_channel& ch) override {
        const auto first = ch.receive(clock::now() + handshake_timeout);
        if (first.type != core::frame_type::endpoint) throw session_error("expected the initiator's RDMA endpoint");
        const bool rails = !spec_.rails.empty();
        try {
            eps_ = open_endpoints(spec_, ch, false);
            connect_endpoints(eps_, first.body, rails);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("RDMA setup failed at the peer: {}", e.what()));
        }
        auto body = endpoints_json(eps_, rails);
        auto notes = json::array();
        for (std::size_t k = 0; k < eps_.size(); ++k)
            for (auto& n : gpu_memory_notes(*eps_[k], endpoint_memory(spec_, k, false), endpoint_side(spec_, k, false)))
                notes.push_back(std::move(n));
        body["memory_notes"] = std::move(notes);
        ch.send(core::frame_type::endpoint, body, clock::now() + handshake_timeout);
        log_info("session {}: RDMA on {}", ch.peer_name(), where_text(eps_, spec_));
    }
    std::unique_ptr<responder_point> point(const point_key& key, const json& begin) override {
        return std::make_unique<rdma_responder>(eps_, spec_, key, begin, byte_cap_, cpus_, corrupt_sent_for_test_);
    }

private:
    const core::run_spec& spec_;
    std::uint64_t byte_cap_;
    std::vector<int> cpus_;
    endpoints eps_;
    bool corrupt_sent_for_test_;  // test hook MESHPERF_TEST_CORRUPT_RDMA, read once for the run
};

}  // namespace

json rdma_info() {
    auto inv = rdma::list_devices();
    json out = {{"available", inv.contains("devices") && !inv["devices"].empty()}, {"devices", inv.value("devices", json::array())}};
    if (inv.contains("reason")) out["reason"] = inv["reason"];
    return out;
}

std::unique_ptr<initiator_transport> make_rdma_initiator_transport(const core::run_spec& spec,
                                                                   std::uint64_t byte_cap, std::vector<int> cpus,
                                                                   const sweep_test_hooks& hooks) {
    return std::make_unique<rdma_initiator_transport>(spec, byte_cap, std::move(cpus), hooks.corrupt_rdma);
}

std::unique_ptr<responder_transport> make_rdma_responder_transport(const core::run_spec& spec,
                                                                   std::uint64_t byte_cap, std::vector<int> cpus,
                                                                   const sweep_test_hooks& hooks) {
    return std::make_unique<rdma_responder_transport>(spec, byte_cap, std::move(cpus), hooks.corrupt_rdma);
}

}  // namespace meshperf::daemon
