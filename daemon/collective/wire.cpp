#include "daemon/collective/wire.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/sizes.hpp"
#include "daemon/test_hooks/emulated_gpu.hpp"
#include "daemon/runtime/gpu_support.hpp"
#include "daemon/session/frame_channel.hpp"
#include "transport/socket.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <random>

namespace meshperf::daemon {

using nlohmann::json;

json to_json(const collective_size_key& k) {
    return {{"op", core::to_string(k.op)}, {"size", k.size}, {"index", k.index}};
}

collective_size_key collective_size_key_from_json(const json& j, const core::collective_spec& spec) {
    collective_size_key k;
    try {
        k.op = core::parse_collective_op(j.at("op").get<std::string>());
        k.size = core::json_unsigned(j.at("size"), "size");
        k.index = core::json_unsigned(j.at("index"), "index");
    } catch (const std::exception& e) {
        throw session_error(fmt::format("the coordinator's point_begin is malformed: {}", e.what()));
    }
    if (std::find(spec.ops.begin(), spec.ops.end(), k.op) == spec.ops.end() ||
        std::find(spec.sizes.begin(), spec.sizes.end(), k.size) == spec.sizes.end())
        throw session_error(fmt::format("the coordinator asked for {} {} B, which the agreed plan does not hold",
                                        core::to_string(k.op), k.size));
    return k;
}

std::string describe(const collective_size_key& k) {
    return fmt::format("{} {}", core::to_string(k.op), core::format_size(k.size));
}

json to_json(const rank_timing& t) {
    json j = {{"iteration_s", t.iteration_s}, {"link_in_s", t.link_in_s}, {"wrong", t.wrong ? json(*t.wrong) : json(nullptr)}};
    if (!t.from_sender_s.empty()) j["from_sender_s"] = t.from_sender_s;
    if (t.link_counters) j["link_counters"] = core::to_json(*t.link_counters);
    if (t.send_tcp) j["send_tcp"] = core::to_json(*t.send_tcp);
    return j;
}

namespace {

std::vector<double> positive_times(const json& j, const char* name, std::uint64_t max_count) {
    if (!j.contains(name) || !j[name].is_array()) throw session_error(fmt::format("a rank's report has no {} array", name));
    if (j[name].size() > max_count) throw session_error(fmt::format("a rank's report has {} {} entries, more than {}", j[name].size(), name, max_count));
    std::vector<double> out;
    out.reserve(j[name].size());
    for (const auto& v : j[name]) {
        if (!v.is_number()) throw session_error(fmt::format("a rank's report has a {} entry that is not a number", name));
        const double x = v.get<double>();
        if (!std::isfinite(x) || x <= 0) throw session_error(fmt::format("a rank's report has a {} entry of {} s", name, x));
        out.push_back(x);
    }
    return out;
}

}  // namespace

rank_timing rank_timing_from_json(const json& j, std::uint64_t max_iterations, bool verify) {
    if (!j.is_object()) throw session_error("a rank's report is not an object");
    rank_timing t;
    t.iteration_s = positive_times(j, "iteration_s", max_iterations);
    t.link_in_s = positive_times(j, "link_in_s", max_iterations);
    if (t.iteration_s.empty()) throw session_error("a rank reported no timed iteration");
    if (!t.link_in_s.empty() && t.link_in_s.size() != t.iteration_s.size())
        throw session_error("a rank reported link times for another number of iterations than it timed");
    if (verify) {
        if (!j.contains("wrong") || !j["wrong"].is_number_unsigned()) throw session_error("a rank's report has no wrong count");
        t.wrong = j["wrong"].get<std::uint64_t>();
    }
    if (j.contains("from_sender_s")) {
        const auto& senders = j["from_sender_s"];
        if (!senders.is_array() || senders.size() > core::collective_limits{}.max_ranks)
            throw session_error("a rank's report has a malformed from_sender_s");
        for (const auto& one : senders) {
            const json wrapped = {{"from_sender_s", one}};
            t.from_sender_s.push_back(positive_times(wrapped, "from_sender_s", max_iterations));
            if (!t.from_sender_s.back().empty() && t.from_sender_s.back().size() != t.iteration_s.size())
                throw session_error("a rank reported a sender's arrival times for another number of iterations than it timed");
        }
    }
    if (const auto c = j.find("link_counters"); c != j.end() && !c->is_null()) {
        try {
            t.link_counters = core::link_side_counters_from_json(*c);
            core::check_sane(*t.link_counters);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("a rank's report has malformed link_counters: {}", e.what()));
        }
    }
    if (const auto c = j.find("send_tcp"); c != j.end() && !c->is_null()) {
        try {
            t.send_tcp = core::tcp_point_counters_from_json(*c);
            core::check_sane(*t.send_tcp, false);
        } catch (const std::exception& e) {
            throw session_error(fmt::format("a rank's report has malformed send_tcp: {}", e.what()));
        }
    }
    return t;
}

core::collective_limits collective_limits_of(const core::run_limits& limits) {
    core::collective_limits l;
    l.run = limits;
    return l;
}

std::string normalize_host(std::string_view h) { return transport::parse_endpoint(h).to_string(); }

std::vector<core::collective_algo> algos_of(const core::collective_spec& spec) {
    std::vector<core::collective_algo> out;
    for (auto op : spec.ops) out.push_back(core::algo_for(spec, op));
    return out;
}

size_run_options run_options_of(const core::collective_spec& spec, const core::run_limits& limits,
                                const collective_test_hooks& hooks) {
    size_run_options o;
    o.warmup_iterations = spec.warmup_iterations;
    o.iterations = spec.iterations;
    o.duration_s = spec.duration_s;
    o.max_iterations = limits.max_iterations;
    o.max_duration_s = limits.max_duration_s;
    o.verify = spec.verify;
    o.corrupt = hooks.corrupt;
    if (spec.memory != "host")
        o.device_memory = hooks.emulated_gpu ? emulated_collective_memory_factory() : collective_memory_for(spec.memory);
    return o;
}

void require_collective_memory(const core::collective_spec& spec, const collective_test_hooks& hooks, const std::string& side) {
    if (!hooks.emulated_gpu) require_memory_domain(spec.memory, side);
}

std::string rank_name(const core::collective_spec& spec, unsigned rank) {
    return rank < spec.hosts.size() ? fmt::format("rank {} ({})", rank, spec.hosts[rank]) : fmt::format("rank {}", rank);
}

std::string new_mesh_token() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("{:016x}{:016x}", rng(), rng());
}

}  // namespace meshperf::daemon
