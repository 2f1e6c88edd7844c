#include "daemon/session/run_placement.hpp"

#include "core/transport_rules.hpp"

#include "core/error.hpp"
#include "daemon/session/session_protocol.hpp"
#include "transport/socket.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace meshperf::daemon {

using nlohmann::json;

namespace {

std::optional<int> nic_node(const std::string& session_ip) {
    return interface_numa_node(transport::interface_for_address(session_ip));
}

bool overlap(const std::vector<int>& a, const std::vector<int>& b) {
    return std::any_of(a.begin(), a.end(), [&](int c) { return std::find(b.begin(), b.end(), c) != b.end(); });
}

const char* cpu_field(const core::run_spec& spec, bool initiator) {
    if (initiator) return spec.initiator_cpus.empty() ? "cpus" : "initiator_cpus";
    // The initiator hands its peer the peer's CPUs in `cpus` (core::spec_for_peer).
    return spec.peer_cpus.empty() ? "the CPUs asked of this peer; --cpu A,B puts the peer on B" : "peer_cpus";
}

bool spins_in_latency(const core::run_spec& spec) {
    const bool latency = std::find(spec.tests.begin(), spec.tests.end(), core::test_kind::latency) != spec.tests.end();
    return latency && (spec.busy_poll || core::transport_rules_of(spec.transport).polls);
}

/// This side's CPUs: the spec's (checked), else the default choice.
void choose(run_placement& p, const core::run_spec& spec, bool initiator, const std::string& session_ip) {
    if (const auto& given = core::cpus_for_side(spec, initiator); !given.empty()) {
        require_available_cpus(given, p.host.allowed, cpu_field(spec, initiator));
        p.cpus = given;
        p.source = core::cpu_source::spec;
        return;
    }
    core::cpu_choice_input in;
    in.allowed = p.host.allowed;
    in.numa_node_of = p.host.numa_node_of;
    in.nic_node = nic_node(session_ip);
    if (p.same_host.value_or(false)) in.other_side = p.other_side_cpus;
    in.threads = measuring_threads(spec);
    p.cpus = core::choose_cpus(in);
    p.source = p.cpus.empty() ? core::cpu_source::none : core::cpu_source::automatic;
}

/// Learns the other side's host and CPUs from its hello / hello_ok.
void learn_other_side(run_placement& p, const json& message) {
    const auto other = announced_placement_of(message);
    if (!other || other->boot_id.empty() || p.host.boot_id.empty()) return;
    p.same_host = other->boot_id == p.host.boot_id;
    p.other_side_cpus = other->cpus;
}

}  // namespace

std::uint32_t measuring_threads(const core::run_spec& spec) {
    std::uint32_t most = 1;
    for (auto t : spec.tests) {
        const auto per_direction = core::streams_per_direction(spec, t);
        most = std::max(most, t == core::test_kind::bidir ? 2 * per_direction : per_direction);
    }
    return most;
}

void require_available_cpus(const std::vector<int>& cpus, const std::vector<int>& allowed, const char* field) {
    for (int c : cpus)
        if (std::find(allowed.begin(), allowed.end(), c) == allowed.end())
            throw core::spec_error(fmt::format("CPU {} is not available to this meshperfd: it may use {} ({})", c,
                                               allowed.empty() ? std::string("none it can name") : core::format_cpu_list(allowed),
                                               field));
}

bool names_this_host(const std::string& peer) {
    std::string host;
    try {
        host = transport::parse_endpoint(peer).host;
    } catch (const std::exception&) {
        return false;
    }
    if (host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0) return true;
    return !transport::interface_for_address(host).empty();
}

void check_placement_at_submission(const core::run_spec& spec, const host_cpu_facts& host) {
    const auto& mine = core::cpus_for_side(spec, true);
    require_available_cpus(mine, host.allowed, cpu_field(spec, true));
    const auto& theirs = core::cpus_for_side(spec, false);
    // Each side's latency thread goes to the first CPU of its list.
    if (!spins_in_latency(spec) || mine.empty() || theirs.empty() || mine.front() != theirs.front() || !names_this_host(spec.peer))
        return;
    const int cpu = mine.front();
    const auto other = std::find_if(host.allowed.begin(), host.allowed.end(), [&](int c) { return c != cpu; });
    const auto apart = other == host.allowed.end() ? fmt::format("--cpu {},B with another CPU B", cpu)
                                                   : fmt::format("e.g. --cpu {},{}", cpu, *other);
    throw core::spec_error(fmt::format(
        "{} with both sides pinned to CPU {} of this host ({}): two spinning threads would time-share one CPU, so each "
        "round trip would wait for the scheduler (milliseconds) instead of measuring the path; pin the sides apart ({}){}",
        spec.busy_poll ? "busy_poll (--busy-poll)" : "RDMA latency (its loops poll completions)", cpu,
        spec.initiator_cpus.empty() && spec.peer_cpus.empty() ? "field cpus" : "fields initiator_cpus and peer_cpus, --cpu",
        apart, spec.busy_poll ? " or drop --busy-poll" : ""));
}

run_placement initiator_placement(const core::run_spec& spec, host_cpu_facts host, const std::string& session_ip) {
    run_placement p;
    p.host = std::move(host);
    choose(p, spec, true, session_ip);
    return p;
}

json hello_placement(const run_placement& p) {
    return {{"boot_id", p.host.boot_id}, {"cpus", p.cpus},
            {"pinned_by", p.source == core::cpu_source::spec ? "spec" : p.source == core::cpu_source::automatic ? "default" : "none"}};
}

run_placement peer_placement(const core::run_spec& spec, host_cpu_facts host, const std::string& session_ip, const json& hello) {
    run_placement p;
    p.host = std::move(host);
    learn_other_side(p, hello);
    choose(p, spec, false, session_ip);
    return p;
}

void settle_initiator_placement(run_placement& p, const core::run_spec& spec, const std::string& session_ip, const json& hello_ok) {
    learn_other_side(p, hello_ok);
    if (p.source == core::cpu_source::automatic && p.same_host.value_or(false) && overlap(p.cpus, p.other_side_cpus))
        choose(p, spec, true, session_ip);
}

core::side_placement observed_placement(const run_placement& p, const std::vector<transport::thread_cpu_record>& threads) {
    core::side_placement s;
    s.pinned = !threads.empty() && std::all_of(threads.begin(), threads.end(), [](const auto& t) { return t.pinned; });
    s.source = s.pinned ? p.source : core::cpu_source::none;
    for (const auto& t : threads)
        for (int c : {t.cpu_at_start, t.cpu_at_end})
            if (c >= 0 && std::find(s.cpus.begin(), s.cpus.end(), c) == s.cpus.end()) s.cpus.push_back(c);
    std::sort(s.cpus.begin(), s.cpus.end());
    for (int c : s.cpus)
        if (auto it = p.host.numa_node_of.find(c); it != p.host.numa_node_of.end() &&
            std::find(s.numa_nodes.begin(), s.numa_nodes.end(), it->second) == s.numa_nodes.end())
            s.numa_nodes.push_back(it->second);
    std::sort(s.numa_nodes.begin(), s.numa_nodes.end());
    return s;
}

core::point_placement point_placement_at_initiator(const run_placement& p, const std::vector<transport::thread_cpu_record>& threads,
                                                   const json& peer_done) {
    return core::make_point_placement(observed_placement(p, threads), reported_placement(peer_done), p.same_host);
}

}  // namespace meshperf::daemon
