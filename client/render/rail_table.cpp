#include "client/render/rail_table.hpp"

#include "client/render/figure_text.hpp"
#include "core/sizes.hpp"

#include <fmt/format.h>

namespace meshperf::client {

namespace {

std::string gbit(double g) { return significant_text(g, 3); }

/// "ra0 -> rb0": the initiator's rail and the peer's it was matched with (the spec's), or
/// the initiator's alone when the spec does not name the peer's.
std::string rail_label(const core::run_result& run, const std::string& name) {
    for (const auto& r : run.spec.rails)
        if (r.name == name && !r.peer_name.empty()) return fmt::format("{} -> {}", name, r.peer_name);
    return name;
}

}  // namespace

rail_rows rail_table_rows(const core::run_result& run, core::test_kind test) {
    const bool bidir = test == core::test_kind::bidir;
    std::vector<std::vector<std::string>> rows;
    if (bidir) rows.push_back({"size", "rail (initiator -> peer)", "Gbit/s", "->peer", "<-peer", "link Gbit/s", "% of link"});
    else rows.push_back({"size", "rail (initiator -> peer)", "Gbit/s", "link Gbit/s", "% of link"});
    for (const auto& p : run.points) {
        if (p.test != test || p.rails.empty()) continue;
        for (const auto& r : p.rails) {
            if (r.failed) {  // its error is among the point's warnings
                std::vector<std::string> row{core::format_size(p.size_bytes), rail_label(run, r.name), "FAILED"};
                if (bidir) row.insert(row.end(), {"-", "-"});
                row.push_back(r.rate_gbit ? gbit(*r.rate_gbit) : "?");
                row.push_back("-");
                rows.push_back(std::move(row));
                continue;
            }
            std::vector<std::string> row{core::format_size(p.size_bytes), rail_label(run, r.name), gbit(r.gbit_per_s)};
            if (bidir)
                for (std::size_t f = 0; f < 2; ++f)
                    row.push_back(f < r.flow_gbit_per_s.size() ? gbit(r.flow_gbit_per_s[f]) : "-");
            row.push_back(r.rate_gbit ? gbit(*r.rate_gbit) : "?");
            row.push_back(r.rate_fraction ? fmt::format("{:.1f}", *r.rate_fraction * 100) : "?");
            rows.push_back(std::move(row));
        }
        // The rails together: what the node pair carried at once (over the rails that worked).
        double rate = 0;
        bool known = true;
        std::size_t failed = 0;
        for (const auto& r : p.rails) {
            if (r.failed) {
                ++failed;
                continue;
            }
            known = known && r.rate_gbit.has_value();
            if (r.rate_gbit) rate += *r.rate_gbit;
        }
        const auto label = failed ? fmt::format("all {} ({} failed)", p.rails.size() - failed, failed)
                                  : fmt::format("all {}", p.rails.size());
        std::vector<std::string> all{core::format_size(p.size_bytes), label, gbit(p.gbit_per_s)};
        if (bidir)
            for (std::size_t f = 0; f < 2; ++f) all.push_back(f < p.flows.size() ? gbit(p.flows[f].gbit_per_s) : "-");
        all.push_back(known ? gbit(rate) : "?");
        all.push_back(known && rate > 0 ? fmt::format("{:.1f}", p.gbit_per_s / (rate * static_cast<double>(p.flows.size())) * 100)
                                        : "?");
        rows.push_back(std::move(all));
    }
    if (rows.size() == 1) return {};
    return {fmt::format("\n{} per rail ({} rails at once, {} stream{} each; % of link: of the lower link rate of the two ends{})\n",
                       core::to_string(test), run.spec.rails.size(), run.spec.streams, run.spec.streams == 1 ? "" : "s",
                       bidir ? ", in each direction" : ""),
            std::move(rows)};
}

}  // namespace meshperf::client
