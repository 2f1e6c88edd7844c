// libfabric points over the peer session (docs/ofi.md): the provider is agreed and endpoint
// addresses travel as `endpoint` frames at the run's start; per point, passive loops are
// armed and started before the other side's active loops start (point_ready / point_go),
// and each side's sent-message counts reach the other before its passive loops stop
// (point_stop / point_done), as for RDMA SEND.
#include "daemon/transports/ofi/ofi_points.hpp"

#include "daemon/transports/ofi/ofi_wire.hpp"

#include "core/counter_sources.hpp"
#include "core/error.hpp"
#include "core/flow_tracker.hpp"
#include "core/json_fields.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/session/session_protocol.hpp"
#include "daemon/sweep/point_figures.hpp"
#include "transport/ofi/error.hpp"
#include "transport/ofi/point_side.hpp"
#include "transport/ofi/providers.hpp"
#include "transport/socket.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace meshperf::daemon {

using nlohmann::json;
using transport::clock;
namespace ofi = transport::ofi;

namespace {

/// How long a loop waits for the peer's messages or completions (ofi::point_params).
constexpr std::chrono::milliseconds ofi_peer_timeout{5000};
/// Sends in flight per bandwidth endpoint at most (the spec's tx_depth, bounded by the pool).
constexpr std::size_t max_window = 8192;

using ofi_endpoints = std::vector<std::unique_ptr<ofi::endpoint>>;

/// This side's endpoints: one per stream the run needs, over `provider`, bound to the session's local address.
ofi_endpoints open_ofi_endpoints(const core::run_spec& spec, const frame_channel& ch, const std::string& provider) {
    ofi::endpoint_options o;
    o.provider = provider;
    o.local_ip = transport::local_ip(ch.fd());
    o.kind = spec.ofi_op == core::ofi_op::msg ? ofi::message_kind::msg : ofi::message_kind::tagged;
    o.max_slots = std::min<std::size_t>(spec.tx_depth, max_window);
    o.max_message_bytes = spec.sizes.back();
    ofi_endpoints out;
    for (std::uint32_t k = 0; k < ofi::endpoints_for(spec); ++k) out.push_back(std::make_unique<ofi::endpoint>(o));
    return out;
}

json ofi_addresses_json(const ofi_endpoints& eps) {
    json list = json::array();
    for (const auto& e : eps) list.push_back(ofi_address_to_hex(e->address()));
    return list;
}

/// Connects each endpoint to the other side's address of the same index.
void connect_ofi_endpoints(ofi_endpoints& eps, const json& body) {
    const auto addresses = ofi_addresses_from_json(body, eps.size());
    for (std::size_t k = 0; k < eps.size(); ++k) eps[k]->connect(addresses[k]);
}

ofi::point_params ofi_params_for(const core::run_spec& spec, const point_key& key, bool corrupt) {
    ofi::point_params p;
    p.size = key.size;
    p.window = spec.tx_depth;
    p.verify = spec.verify;
    p.pattern_seed = static_cast<std::uint32_t>(key.index);
    p.tag = key.index;
    p.corrupt_sent_for_test = corrupt;
    p.peer_timeout = ofi_peer_timeout;
    return p;
}

std::vector<ofi::endpoint*> endpoint_pointers(const ofi_endpoints& eps) {
    std::vector<ofi::endpoint*> out;
    for (const auto& e : eps) out.push_back(e.get());
    return out;
}

/// The device behind the endpoints' domain, read as an RDMA port (EFA's hw_counters live
/// there: class/infiniband/<efa>/ports/1/hw_counters); none for providers without one.
std::optional<transport::counter_source_target> ofi_device_counters(const ofi_endpoints& eps) {
    const auto& device = eps.front()->description().device;
    std::error_code ec;
    if (device.empty() || !std::filesystem::exists(std::filesystem::path("/sys/class/infiniband") / device, ec)) return std::nullopt;
    return transport::counter_source_target{std::string(core::rdma_port_source_kind), device, 1};
}

std::size_t passive_loops(const std::vector<ofi::loop_role>& roles) {
    return static_cast<std::size_t>(std::count(roles.begin(), roles.end(), ofi::loop_role::passive));
}

class ofi_initiator final : public initiator_point {
public:
    ofi_initiator(const ofi_endpoints& eps, const core::run_spec& spec, const point_key& key, std::uint64_t byte_cap,
                  const std::vector<int>& cpus, bool corrupt)
        : spec_(spec), key_(key), byte_cap_(byte_cap),
          side_(endpoint_pointers(eps), spec, key.test, key.size, ofi::initiator_roles(key.test, spec.streams, spec.reverse),
                ofi_params_for(spec, key, corrupt)),
          local_n_(side_.counting_loops()),
          remote_n_(key.test == core::test_kind::latency ? 0 : passive_loops(ofi::peer_roles(key.test, spec.streams, spec.reverse))),
          local_(local_n_, spec.warmup_s), remote_(remote_n_, spec.warmup_s), device_(ofi_device_counters(eps)) {
        // The receiver counts: the peer's bytes are what went initiator -> peer.
        if (remote_n_) flows_.push_back({"initiator->peer", &remote_});
        if (local_n_) flows_.push_back({"peer->initiator", &local_});
        side_.pin_to(cpus);
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
    bool at_byte_cap() override {
        if (!byte_cap_ || key_.test == core::test_kind::latency) return false;
        byte_cap_reached_ = total_bytes(local_bytes_) >= byte_cap_ || remote_bytes_ >= byte_cap_;
        return byte_cap_reached_;
    }
    json stop(bool, bool) override {
        side_.stop_active();
        return {{"messages", side_.active_messages()}};
    }
    bool peer_reports_until_done() const override { return false; }
    std::chrono::seconds peer_silence_limit() const override {
        return std::chrono::duration_cast<std::chrono::seconds>(ofi_peer_timeout) + std::chrono::seconds{3};
    }
    void finish(const json& peer_done) override {
        std::vector<std::uint64_t> counts;
        if (peer_done.contains("active_messages")) counts = core::json_unsigned_list(peer_done["active_messages"], "active_messages");
        side_.finish_passive(counts);
    }
    std::string error() const override { return side_.error(); }
    bool verify_failed() const override { return side_.verify_failed(); }
    std::string_view data_path_name() const override { return "libfabric"; }
    std::vector<transport::thread_cpu_record> thread_cpus() const override { return side_.thread_cpus(); }

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
        in.verified_at_peer = peer_done.value("verified_bytes", std::uint64_t{0});
        if (byte_cap_reached_) in.byte_cap_reached = byte_cap_;
        return assemble_point(in);
    }
    void abort() noexcept override { side_.abort(); }
    std::optional<transport::counter_source_target> device_counters() const override { return device_; }

private:
    const core::run_spec& spec_;
    point_key key_;
    std::uint64_t byte_cap_;
    ofi::point_side side_;
    std::size_t local_n_, remote_n_;
    core::flow_tracker local_, remote_;  // bytes received here, and at the peer (its progress frames)
    std::vector<tracked_flow> flows_;
    std::vector<std::uint64_t> local_bytes_;
    std::uint64_t remote_bytes_ = 0;
    bool byte_cap_reached_ = false;
    std::optional<transport::counter_source_target> device_;
};

class ofi_responder final : public responder_point {
public:
    ofi_responder(const ofi_endpoints& eps, const core::run_spec& spec, const point_key& key, std::uint64_t byte_cap,
                  const std::vector<int>& cpus, bool corrupt)
        : key_(key), byte_cap_(byte_cap),
          side_(endpoint_pointers(eps), spec, key.test, key.size, ofi::peer_roles(key.test, spec.streams, spec.reverse),
                ofi_params_for(spec, key, corrupt)),
          device_(ofi_device_counters(eps)) {
        side_.pin_to(cpus);
    }

    void arm() override { side_.start_passive(); }
    void start() override { side_.start_active(); }
    bool reports() const override { return side_.counting_loops() > 0; }
    std::vector<std::uint64_t> counted_bytes() const override { return side_.counted_bytes(); }
    // This daemon's own limit: its sending loops stop at the byte cap, whatever the initiator does.
    void check_limits() override {
        if (byte_cap_ && !active_stopped_ && key_.test != core::test_kind::latency && sent_bytes() >= byte_cap_) {
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
        return {{"active_messages", side_.active_messages()}, {"verified_bytes", side_.verified_bytes()}};
    }
    double cpu_seconds() const override { return side_.cpu_seconds(); }
    double wall_seconds() const override { return side_.wall_seconds(); }
    std::string error() const override { return side_.error(); }
    bool verify_failed() const override { return side_.verify_failed(); }
    std::vector<transport::thread_cpu_record> thread_cpus() const override { return side_.thread_cpus(); }
    void abort() noexcept override { side_.abort(); }
    std::optional<transport::counter_source_target> device_counters() const override { return device_; }

private:
    std::uint64_t sent_bytes() const {
        std::uint64_t n = 0;
        for (auto m : side_.active_messages()) n += m * key_.size;
        return n;
    }

    point_key key_;
    std::uint64_t byte_cap_;
    ofi::point_side side_;
    bool active_stopped_ = false;
    std::vector<std::uint64_t> initiator_messages_;
    std::optional<transport::counter_source_target> device_;
};

/// "libfabric tcp;ofi_rxm on lo (fabric 127.0.0.1/32, FI_EP_RDM, FI_PROTO_RXM, mr_mode [...]), 2 endpoints".
std::string ofi_path_note(const ofi_endpoints& eps) {
    return fmt::format("libfabric {}, {} endpoint{}", ofi::to_text(eps.front()->description()), eps.size(), eps.size() == 1 ? "" : "s");
}

class ofi_initiator_transport final : public initiator_transport {
public:
    ofi_initiator_transport(const core::run_spec& spec, std::uint64_t byte_cap, std::vector<int> cpus, bool corrupt)
        : spec_(spec), byte_cap_(byte_cap), cpus_(std::move(cpus)), corrupt_(corrupt) {}

    void open(frame_channel& ch, const json&, core::run_result& run) override {
        const auto mine = ofi::provider_names(ofi::list_provider_domains());
        ch.send(core::frame_type::endpoint, to_json(ofi_offer{mine, spec_.ofi_provider}), clock::now() + handshake_timeout);
        const auto reply = ch.receive(clock::now() + handshake_timeout);
        if (reply.type != core::frame_type::endpoint || !reply.body.contains("ofi_provider") || !reply.body["ofi_provider"].is_string())
            throw session_error("peer did not answer with its libfabric endpoints");
        const auto provider = reply.body["ofi_provider"].get<std::string>();
        try {
            eps_ = open_ofi_endpoints(spec_, ch, provider);
            connect_ofi_endpoints(eps_, reply.body);
        } catch (const ofi::ofi_error& e) {
            throw core::spec_error(fmt::format("libfabric setup failed at the initiator: {}", e.what()));
        }
        ch.send(core::frame_type::endpoint, json{{"addresses", ofi_addresses_json(eps_)}}, clock::now() + handshake_timeout);
        run.warnings.push_back(ofi_path_note(eps_));
        if (reply.body.contains("endpoint") && reply.body["endpoint"].is_string())
            run.warnings.push_back(fmt::format("peer: libfabric {}", reply.body["endpoint"].get<std::string>()));
    }
    std::string path_label() const override { return fmt::format("ofi {} ", core::to_string(spec_.ofi_op)); }
    std::unique_ptr<initiator_point> point(const point_key& key) override {
        return std::make_unique<ofi_initiator>(eps_, spec_, key, byte_cap_, cpus_, corrupt_);
    }

private:
    const core::run_spec& spec_;
    std::uint64_t byte_cap_;
    std::vector<int> cpus_;
    ofi_endpoints eps_;
    bool corrupt_;  // test hook MESHPERF_TEST_CORRUPT_OFI, read once for the run
};

class ofi_responder_transport final : public responder_transport {
public:
    ofi_responder_transport(const core::run_spec& spec, std::uint64_t byte_cap, std::vector<int> cpus, bool corrupt)
        : spec_(spec), byte_cap_(byte_cap), cpus_(std::move(cpus)), corrupt_(corrupt) {}

    void open(frame_channel& ch) override {
        const auto first = ch.receive(clock::now() + handshake_timeout);
        if (first.type != core::frame_type::endpoint) throw session_error("expected the initiator's libfabric providers");
        const auto offer = ofi_offer_from_json(first.body);
        std::string provider;
        try {
            provider = ofi::choose_provider(offer.requested, offer.providers, ofi::provider_names(ofi::list_provider_domains()));
            eps_ = open_ofi_endpoints(spec_, ch, provider);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("libfabric setup failed at the peer: {}", e.what()));
        }
        ch.send(core::frame_type::endpoint,
                json{{"ofi_provider", provider}, {"addresses", ofi_addresses_json(eps_)},
                     {"endpoint", ofi::to_text(eps_.front()->description())}},
                clock::now() + handshake_timeout);
        const auto second = ch.receive(clock::now() + handshake_timeout);
        if (second.type != core::frame_type::endpoint) throw session_error("expected the initiator's libfabric addresses");
        try {
            connect_ofi_endpoints(eps_, second.body);
        } catch (const ofi::ofi_error& e) {
            throw session_error(fmt::format("libfabric setup failed at the peer: {}", e.what()));
        }
        log_info("session {}: {}", ch.peer_name(), ofi_path_note(eps_));
    }
    std::unique_ptr<responder_point> point(const point_key& key, const json&) override {
        return std::make_unique<ofi_responder>(eps_, spec_, key, byte_cap_, cpus_, corrupt_);
    }

private:
    const core::run_spec& spec_;
    std::uint64_t byte_cap_;
    std::vector<int> cpus_;
    ofi_endpoints eps_;
    bool corrupt_;
};

}  // namespace

json ofi_info() {
    json domains = json::array();
    const auto list = ofi::list_provider_domains();
    for (const auto& d : list) domains.push_back(ofi::to_json(d));
    json out = {{"available", !list.empty()}, {"providers", ofi::provider_names(list)}, {"domains", std::move(domains)}};
    if (list.empty()) out["reason"] = "libfabric finds no provider with reliable-datagram ofi_endpoints here (`fi_info -l` lists providers)";
    return out;
}

void check_ofi_spec(const core::run_spec& spec) {
    const auto domains = ofi::list_provider_domains();
    const auto names = ofi::provider_names(domains);
    const std::string cap = spec.ofi_op == core::ofi_op::msg ? "MSG" : "TAGGED";
    std::vector<std::string> offering;
    for (const auto& d : domains)
        if (std::find(d.capabilities.begin(), d.capabilities.end(), cap) != d.capabilities.end()) {
            auto n = ofi::core_provider(d.provider);
            if (std::find(offering.begin(), offering.end(), n) == offering.end()) offering.push_back(std::move(n));
        }
    const auto op = core::to_string(spec.ofi_op);
    if (spec.ofi_provider.empty()) {
        if (offering.empty())
            throw core::spec_error(fmt::format("no libfabric provider here offers {} messages on reliable-datagram endpoints (the "
                                               "providers here: [{}]; `fi_info -l`)",
                                               op, fmt::join(names, ", ")));
        return;
    }
    const auto want = ofi::core_provider(spec.ofi_provider);
    if (std::find(names.begin(), names.end(), want) == names.end())
        throw core::spec_error(fmt::format("libfabric provider '{}' is not on this daemon: it has [{}] (`fi_info -l`); choose one "
                                           "of them with --ofi-provider",
                                           spec.ofi_provider, fmt::join(names, ", ")));
    if (std::find(offering.begin(), offering.end(), want) == offering.end())
        throw core::spec_error(fmt::format("libfabric provider '{}' offers no {} messages on reliable-datagram endpoints here; the "
                                           "providers that do: [{}]",
                                           spec.ofi_provider, op, fmt::join(offering, ", ")));
}

std::unique_ptr<initiator_transport> make_ofi_initiator_transport(const core::run_spec& spec, std::uint64_t byte_cap,
                                                                  std::vector<int> cpus, const sweep_test_hooks& hooks) {
    return std::make_unique<ofi_initiator_transport>(spec, byte_cap, std::move(cpus), hooks.corrupt_ofi);
}

std::unique_ptr<responder_transport> make_ofi_responder_transport(const core::run_spec& spec, std::uint64_t byte_cap,
                                                                  std::vector<int> cpus, const sweep_test_hooks& hooks) {
    return std::make_unique<ofi_responder_transport>(spec, byte_cap, std::move(cpus), hooks.corrupt_ofi);
}

}  // namespace meshperf::daemon
