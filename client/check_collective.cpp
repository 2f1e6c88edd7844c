#include "client/check_collective.hpp"

#include "client/daemon_client.hpp"
#include "core/sizes.hpp"

#include <cmath>
#include <fmt/format.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

std::string what_of(const core::collective_result& run, const core::collective_point& p) {
    return fmt::format("{} {} over {} ranks ({}, {})", core::to_string(p.op), core::to_string(p.algo), p.ranks,
                       core::to_string(run.spec.transport), run.spec.memory);
}

std::string number(double v) { return fmt::format("{:.4g}", v); }

std::string host_of(const core::collective_result& run, unsigned rank) {
    return rank < run.spec.hosts.size() ? fmt::format("rank {} ({})", rank, run.spec.hosts[rank]) : fmt::format("rank {}", rank);
}

}  // namespace

collective_verdict unknown_collective(std::string what, std::string why) {
    return {core::check_state::unknown, std::move(what), std::move(why), {}};
}

collective_verdict judge_collective(const core::collective_result& run, double min_busbw) {
    std::string what = run.spec.ops.empty() ? std::string("collective") : std::string(core::to_string(run.spec.ops.front()));
    if (run.state != "completed")
        return unknown_collective(what, fmt::format("the collective {} {}: {}", run.id, run.state,
                                                    run.error.empty() ? "(no error given)" : run.error));
    if (run.points.empty()) return unknown_collective(what, fmt::format("the collective {} completed without a point", run.id));
    const auto& p = run.points.front();
    collective_verdict v;
    v.what = what_of(run, p);
    v.perfdata = core::perfdata_item("busbw_gbyte", p.busbw_gbyte_per_s, "", number(min_busbw) + ":", "0");
    auto text = fmt::format("busbw {} GB/s at {}, time {} µs", number(p.busbw_gbyte_per_s), core::format_size(p.size_bytes),
                            number(p.time_s * 1e6));
    v.state = core::check_state::ok;
    if (p.busbw_gbyte_per_s < min_busbw) {
        v.state = core::check_state::critical;
        text += fmt::format(", below --min-busbw {} GB/s; slowest {}", number(min_busbw), host_of(run, p.slowest_rank));
        if (p.slowest_link)
            text += fmt::format(", slowest link {} at {} Gbit/s", core::to_string(*p.slowest_link), number(p.slowest_link->gbit_per_s));
    }
    if (p.wrong && *p.wrong > 0) {
        v.state = core::check_state::critical;
        text += fmt::format("; {} wrong element{} (data corrupted on the way)", *p.wrong, *p.wrong == 1 ? "" : "s");
    }
    v.summary = text;
    return v;
}

std::string nagios_line(const collective_verdict& v) {
    auto summary = v.summary;
    for (auto& c : summary)
        if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
    return fmt::format("MESHPERF {} - {}: {}{}", core::to_string(v.state), v.what, summary,
                       v.perfdata.empty() ? "" : " | " + v.perfdata);
}

std::string render_collective_check(const collective_verdict& v, output_format format) {
    return render(format, {.json = [&] {
                               return json{{"state", core::to_string(v.state)},
                                           {"exit_code", core::exit_code(v.state)},
                                           {"what", v.what},
                                           {"summary", v.summary},
                                           {"line", nagios_line(v)}}
                                          .dump(2) +
                                      "\n";
                           },
                           .nagios = [&] { return nagios_line(v) + "\n"; }});
}

core::collective_spec collective_check_spec(collective_options o, const option_given& given) {
    if (o.ops.find(',') != std::string::npos)
        throw client_error(exit_usage, fmt::format("--collective {}: give one op (a check judges one figure)", o.ops));
    if (o.sizes.find(',') != std::string::npos || o.sizes.find("..") != std::string::npos)
        throw client_error(exit_usage, fmt::format("--size {}: give one size (a check judges one figure)", o.sizes));
    o.verify = true;
    auto built = build_collective_spec(o, given);
    return std::move(built.spec);
}

}  // namespace meshperf::client
