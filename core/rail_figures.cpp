#include "core/rail_figures.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string_view>

namespace meshperf::core {

using nlohmann::json;

std::vector<rail_figures> split_by_rail(const std::vector<std::vector<double>>& flows, const std::vector<rail_pair>& rails,
                                        std::uint32_t streams_per_rail) {
    std::vector<rail_figures> out(rails.size());
    for (std::size_t r = 0; r < rails.size(); ++r) {
        out[r].name = rails[r].name;
        out[r].rate_gbit = rails[r].rate_gbit;
        out[r].flow_gbit_per_s.assign(flows.size(), 0.0);
    }
    for (std::size_t f = 0; f < flows.size(); ++f) {
        const auto& streams = flows[f];
        if (streams.size() != rails.size() * streams_per_rail)
            throw insane_figure(fmt::format("flow {}: {} stream rates for {} rails of {} stream{}", f, streams.size(),
                                            rails.size(), streams_per_rail, streams_per_rail == 1 ? "" : "s"));
        for (std::size_t i = 0; i < streams.size(); ++i) out[rail_of_stream(i, streams_per_rail)].flow_gbit_per_s[f] += streams[i];
    }
    for (auto& r : out) {
        for (double g : r.flow_gbit_per_s) r.gbit_per_s += g;
        if (r.rate_gbit && !flows.empty()) r.rate_fraction = r.gbit_per_s / (*r.rate_gbit * static_cast<double>(flows.size()));
    }
    return out;
}

void merge_rail_failures(std::vector<rail_failure>& failures, const std::vector<rail_failure>& more) {
    for (const auto& m : more)
        if (std::none_of(failures.begin(), failures.end(), [&](const rail_failure& f) { return f.name == m.name; }))
            failures.push_back(m);
}

namespace {

const rail_failure* failure_of(const std::vector<rail_failure>& failed, const std::string& name) {
    const auto it = std::find_if(failed.begin(), failed.end(), [&](const rail_failure& f) { return f.name == name; });
    return it == failed.end() ? nullptr : &*it;
}

}  // namespace

bool rails_survive(const std::vector<rail_pair>& rails, const std::vector<rail_failure>& failed) {
    return rails.size() >= 2 &&
           std::any_of(rails.begin(), rails.end(), [&](const rail_pair& r) { return !failure_of(failed, r.name); });
}

void mark_failed_rails(std::vector<rail_figures>& rails, const std::vector<rail_failure>& failed) {
    for (auto& r : rails) {
        const auto* f = failure_of(failed, r.name);
        if (!f) continue;
        r.failed = true;
        r.error = f->error.empty() ? std::string("its streams failed") : f->error;
        r.gbit_per_s = 0;
        std::fill(r.flow_gbit_per_s.begin(), r.flow_gbit_per_s.end(), 0.0);
        r.rate_fraction.reset();
    }
}

std::vector<rail_figures> with_dropped_rails(std::vector<rail_figures> measured, const std::vector<rail_pair>& all,
                                             const std::vector<rail_failure>& dropped, std::size_t flows) {
    std::vector<rail_figures> out;
    for (const auto& pair : all) {
        const auto it = std::find_if(measured.begin(), measured.end(), [&](const rail_figures& r) { return r.name == pair.name; });
        if (it != measured.end()) {
            out.push_back(std::move(*it));
        } else if (const auto* f = failure_of(dropped, pair.name)) {
            rail_figures r;
            r.name = pair.name;
            r.rate_gbit = pair.rate_gbit;
            r.flow_gbit_per_s.assign(flows, 0.0);
            r.failed = true;
            r.error = f->error;
            out.push_back(std::move(r));
        }
    }
    return out;
}

std::vector<std::string> rail_warnings(const std::vector<rail_figures>& rails, const std::vector<rail_pair>& pairs) {
    std::vector<std::string> out;
    for (const auto& r : rails) {
        if (r.failed) {
            // An error that already starts with the rail's name (RDMA's) is not named twice.
            const auto own = fmt::format("rail {}: ", r.name);
            const std::string_view why = r.error.starts_with(own) ? std::string_view(r.error).substr(own.size()) : r.error;
            out.push_back(fmt::format("rail {} failed: {}; the point's figures are the other rails' alone", r.name, why));
            continue;
        }
        if (r.gbit_per_s > 0) continue;
        const auto pair = std::find_if(pairs.begin(), pairs.end(), [&](const rail_pair& p) { return p.name == r.name; });
        // The command to run on the initiator's host, with the rail's own addresses.
        const auto route = pair == pairs.end() ? std::string("ip route get PEER_ADDRESS from LOCAL_ADDRESS")
                                               : fmt::format("ip route get {} from {}", pair->peer_address, pair->local_address);
        out.push_back(fmt::format("rail {}: no bytes in the measured window while the other rails moved data: its link is down "
                                  "or its route leaves by another interface (on the initiator: {})",
                                  r.name, route));
    }
    return out;
}

void check_sane(const rail_figures& r) {
    auto finite_nonneg = [&](const char* what, double v) {
        if (!std::isfinite(v) || v < 0) throw insane_figure(fmt::format("rail {}: {} is {}", r.name, what, v));
    };
    finite_nonneg("bandwidth", r.gbit_per_s);
    double sum = 0;
    for (double g : r.flow_gbit_per_s) {
        finite_nonneg("flow bandwidth", g);
        sum += g;
    }
    if (std::fabs(sum - r.gbit_per_s) > 1e-9 * std::max(sum, r.gbit_per_s) + 1e-12)
        throw insane_figure(fmt::format("rail {}: {} Gbit/s is not the sum of its flows ({})", r.name, r.gbit_per_s, sum));
    if (r.rate_gbit && !(*r.rate_gbit > 0 && std::isfinite(*r.rate_gbit)))
        throw insane_figure(fmt::format("rail {}: link rate {} Gbit/s", r.name, *r.rate_gbit));
    if (r.rate_fraction) finite_nonneg("share of the link rate", *r.rate_fraction);
    if (r.failed && r.error.empty()) throw insane_figure(fmt::format("rail {}: failed without an error", r.name));
}

json to_json(const rail_figures& r) {
    json j = {{"name", r.name},
            {"gbit_per_s", r.gbit_per_s},
            {"flows_gbit_per_s", r.flow_gbit_per_s},
            {"rate_gbit", r.rate_gbit ? json(*r.rate_gbit) : json(nullptr)},
            {"rate_fraction", r.rate_fraction ? json(*r.rate_fraction) : json(nullptr)}};
    if (r.failed) {
        j["failed"] = true;
        j["error"] = r.error;
    }
    return j;
}

rail_figures rail_figures_from_json(const json& j) {
    if (!j.is_object()) throw spec_error("each entry of a point's 'rails' must be an object");
    rail_figures r;
    r.name = j.value("name", "");
    r.gbit_per_s = j.value("gbit_per_s", 0.0);
    r.flow_gbit_per_s = j.value("flows_gbit_per_s", std::vector<double>{});
    if (const auto it = j.find("rate_gbit"); it != j.end() && it->is_number()) r.rate_gbit = it->get<double>();
    if (const auto it = j.find("rate_fraction"); it != j.end() && it->is_number()) r.rate_fraction = it->get<double>();
    if (const auto it = j.find("failed"); it != j.end() && it->is_boolean()) r.failed = it->get<bool>();
    if (const auto it = j.find("error"); it != j.end() && it->is_string()) r.error = it->get<std::string>();
    return r;
}

}  // namespace meshperf::core
