// RNIC loopback (transport/rnic_loopback.hpp) over verbs: per device, two endpoints on its
// first active port, QPs connected to each other, RDMA WRITE with verify from one to the
// other on one thread per QP and side, as a sweep's bandwidth point runs them.
#include "transport/rnic_loopback.hpp"
#include "core/units.hpp"

#include "core/error.hpp"
#include "transport/rdma/bandwidth.hpp"
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/error.hpp"
#include "transport/rdma/inventory.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <exception>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

namespace meshperf::transport {

namespace {

namespace rdma = transport::rdma;

/// The active side's figures of one loopback: what completed, first post to last completion.
void run_write(rdma::endpoint& from, rdma::endpoint& to, const rnic_loopback_options& o, rnic_loopback_reading& r) {
    rdma::point_params p;
    p.op = core::rdma_op::write;
    p.size = o.message_bytes;
    p.verify = true;
    const auto qps = from.qp_count();
    std::vector<std::unique_ptr<rdma::bandwidth_passive>> passive;
    std::vector<std::unique_ptr<rdma::bandwidth_active>> active;
    for (std::size_t q = 0; q < qps; ++q) passive.push_back(std::make_unique<rdma::bandwidth_passive>(to, q, p));
    for (std::size_t q = 0; q < qps; ++q) active.push_back(std::make_unique<rdma::bandwidth_active>(from, q, p));
    std::atomic<bool> stop_active{false}, stop_passive{false};
    std::vector<std::exception_ptr> errors(2 * qps);
    // One thread per runner; what it throws is kept for after the joins.
    const auto spawn = [&](std::vector<std::thread>& threads, auto& runners, const std::atomic<bool>& stop, std::size_t first) {
        for (std::size_t q = 0; q < qps; ++q)
            threads.emplace_back([&, q] {
                try {
                    runners[q]->run(stop);
                } catch (...) {
                    errors[first + q] = std::current_exception();
                }
            });
    };
    std::vector<std::thread> threads, senders;
    spawn(threads, passive, stop_passive, 0);
    spawn(senders, active, stop_active, qps);
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    stop_active = true;
    for (auto& t : senders) t.join();
    for (std::size_t q = 0; q < qps; ++q) passive[q]->expect(active[q]->messages());
    stop_passive = true;
    for (auto& t : threads) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    std::int64_t first = 0, last = 0;
    std::uint64_t corrupt = 0;
    for (std::size_t q = 0; q < qps; ++q) {
        const auto s = active[q]->counters().load();
        r.bytes += s.bytes;
        if (s.first_ns) first = first == 0 ? s.first_ns : std::min(first, s.first_ns);
        last = std::max(last, s.last_ns);
        corrupt += passive[q]->verification().corrupt + active[q]->verification().corrupt;
    }
    r.seconds = last > first ? core::seconds_from_ns_by_factor(static_cast<double>(last - first)) : 0;
    if (corrupt) {
        r.device_fault = true;
        r.error = fmt::format("{} of the regions written came back corrupted", corrupt);
        return;
    }
    const double gbit = r.seconds > 0 ? core::gbit_per_s(static_cast<double>(r.bytes), r.seconds) : 0;
    if (!(std::isfinite(gbit) && gbit > 0)) {
        r.device_fault = true;
        r.error = fmt::format("no data completed in {:.2f} s ({} bytes)", o.seconds, r.bytes);
        return;
    }
    r.gbit_per_s = gbit;
}

rnic_loopback_reading loop_back(const std::string& device, unsigned port, std::optional<double> rate,
                                const rnic_loopback_options& o) {
    rnic_loopback_reading r;
    r.device = device;
    r.port = port;
    r.port_rate_gbit = rate;
    try {
        rdma::endpoint_options eo;
        eo.device = device;
        eo.port = static_cast<std::uint8_t>(port);
        eo.qps = o.qps;
        eo.max_message_bytes = o.message_bytes;
        rdma::endpoint from(eo), to(eo);
        from.connect(to.local_info());
        to.connect(from.local_info());
        run_write(from, to, o, r);
    } catch (const rdma::rdma_error& e) {
        // A memlock limit says nothing of the NIC; anything else the device did.
        r.device_fault = e.code() != std::errc::not_enough_memory;
        r.error = e.what();
    } catch (const std::exception& e) {
        r.device_fault = true;
        r.error = e.what();
    }
    return r;
}

}  // namespace

rnic_loopback_survey measure_rnic_loopback(const rnic_loopback_options& o) {
    if (!(o.message_bytes >= 1 && o.message_bytes <= (1u << 24) && o.qps >= 1 && o.qps <= 16 && std::isfinite(o.seconds) &&
          o.seconds >= 0.05 && o.seconds <= 10))
        throw core::spec_error("RNIC loopback: message size 1 B..16 MiB, 1..16 QPs, 0.05..10 s");
    rnic_loopback_survey out;
    const auto list = rdma::list_devices();
    if (!list.is_object() || !list.contains("devices") || list["devices"].empty()) {
        out.none_because = list.is_object() ? list.value("reason", std::string("no RDMA device found")) : "no RDMA device found";
        return out;
    }
    std::vector<std::string> inactive;
    for (const auto& d : list["devices"]) {
        const auto name = d.value("name", std::string());
        const auto ports = d.value("ports", nlohmann::json::array());  // `active` points into it
        const nlohmann::json* active = nullptr;
        for (const auto& p : ports)
            if (p.value("state", std::string()) == "ACTIVE") {
                active = &p;
                break;
            }
        if (!active) {
            inactive.push_back(name);
            continue;
        }
        std::optional<double> rate;
        if (const auto it = active->find("rate_gbit_per_s"); it != active->end() && it->is_number() && it->get<double>() > 0)
            rate = it->get<double>();
        out.readings.push_back(loop_back(name, active->value("port", 1u), rate, o));
    }
    if (out.readings.empty())
        out.none_because = fmt::format("no RDMA device has an active port ({} {}: bring a port's link up, or leave out "
                                       "--loopback)",
                                       inactive.size() == 1 ? "device" : "devices", fmt::join(inactive, ", "));
    return out;
}

}  // namespace meshperf::transport
