#include "client/collective/links.hpp"
#include "core/figure_text.hpp"

#include "client/collective/spec_options.hpp"
#include "client/support/result_files.hpp"
#include "client/support/run_model.hpp"
#include "client/support/short_runs.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

#include <cmath>
#include <fmt/format.h>
#include <map>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// Each ring link's one-way latency and bandwidth from a matrix (hosts named as the matrix
/// names them, compared as HOST:PORT).
prediction_links from_matrix(const report_matrix& m, const std::string& path, const core::collective_spec& spec) {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < m.hosts.size(); ++i) {
        try {
            index.emplace(normalize_host(m.hosts[i]), i);
        } catch (const core::spec_error&) {
            index.emplace(m.hosts[i], i);
        }
    }
    prediction_links out{fmt::format("matrix {} (one-way p50 latency as α, bandwidth as β)", path), {}};
    for (const auto& [from, to] : ring_links(spec.hosts)) {
        const analysis::link_verdict* found = nullptr;
        if (index.contains(from) && index.contains(to))
            for (const auto& v : m.analysis.links)
                if (v.link.from == index[from] && v.link.to == index[to]) found = &v;
        if (!found || !found->link.reachable || !found->link.lat_us || !found->link.gbit_per_s || *found->link.gbit_per_s <= 0)
            throw client_error(exit_usage,
                               fmt::format("--model {}: the matrix has no latency and bandwidth figures for the ring link {} -> "
                                           "{}: measure these hosts with meshperf matrix --test latency,bandwidth, or leave out "
                                           "--model to probe the ring before the run",
                                           path, from, to));
        out.links.push_back({from, to, analysis::link_model::from_us_gbit(*found->link.lat_us, *found->link.gbit_per_s)});
    }
    std::vector<std::string> name(m.hosts.size());
    for (const auto& [host, i] : index) name[i] = host;
    for (const auto& v : m.analysis.links)
        if (v.link.reachable && v.link.lat_us && v.link.gbit_per_s && *v.link.gbit_per_s > 0 && v.link.from < name.size() &&
            v.link.to < name.size())
            out.pairs.push_back({name[v.link.from], name[v.link.to],
                                 analysis::link_model::from_us_gbit(*v.link.lat_us, *v.link.gbit_per_s)});
    return out;
}

/// One fit for every ring link.
prediction_links same_fit(const analysis::model_fit& fit, std::string source, const core::collective_spec& spec) {
    prediction_links out{std::move(source), {}};
    for (const auto& [from, to] : ring_links(spec.hosts)) out.links.push_back({from, to, fit});
    return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ring_links(const std::vector<std::string>& hosts) {
    std::vector<std::pair<std::string, std::string>> out;
    for (std::size_t i = 0; i < hosts.size(); ++i) out.emplace_back(hosts[i], hosts[(i + 1) % hosts.size()]);
    return out;
}

prediction_links links_from_document(const json& doc, const std::string& path, const core::collective_spec& spec) {
    const auto schema = doc.is_object() ? doc.value("schema", "") : std::string();
    try {
        if (schema == "meshperf.matrix/1") return from_matrix(matrix_from_json(doc), path, spec);
        // A β above every measured bandwidth is replaced by the measured one (with a warning:
        // analysis::with_measured_beta, docs/capacity-planning.md).
        if (schema == "meshperf.model/1")
            return same_fit(analysis::with_measured_beta(analysis::model_fit_from_json(doc.at("model"))),
                            fmt::format("model {} (one fit for every link)", path), spec);
        if (schema == core::result_schema) {
            const auto run = core::run_result_from_json(doc);
            const auto m = fit_run_model(run);
            if (!m.fit) throw core::spec_error(fmt::format("no model can be fitted to run {}: {}", run.id, m.why_not));
            return same_fit(analysis::with_measured_beta(*m.fit),
                            fmt::format("the model of run {} in {} (one fit for every link)", run.id, path), spec);
        }
    } catch (const client_error&) {
        throw;
    } catch (const std::exception& e) {
        throw client_error(exit_usage, fmt::format("--model {}: {}", path, e.what()));
    }
    throw client_error(exit_usage, fmt::format("--model {}: not a matrix (meshperf matrix --format json), a model (meshperf model "
                                               "--format json) or a sweep result{}",
                                               path, schema.empty() ? "" : " (schema \"" + schema + "\")"));
}

prediction_links links_from_file(const std::string& path, const core::collective_spec& spec) {
    return links_from_document(read_json_file(path), path, spec);
}

prediction_links probe_ring(const core::collective_spec& spec, const credentials& creds,
                            const std::function<void(const std::string&)>& progress) {
    // A short sweep over many sizes fitted by least squares read β off points too short for a
    // paced link (0.6-0.95 Gbit/s on 0.38 Gbit/s tbf links) and took ~110 s a link; the
    // matrix's two points predict within 2% there and take about a second.
    short_test_options test;
    test.transport = spec.transport;
    prediction_links out{fmt::format("probes run before the collective, as meshperf matrix measures a link (one-way p50 "
                                     "latency at {} B as α, bandwidth at {} as β, host memory)",
                                     default_latency_size, core::format_size(default_bandwidth_size)),
                         {}};
    for (const auto& [from, to] : ring_links(spec.hosts)) {
        const daemon_client initiator(from, creds);
        std::vector<core::run_result> runs;
        for (const auto& one : short_test_specs(to, test)) {
            auto outcome = run_to_completion(initiator, one);
            if (!outcome.completed) {
                if (outcome.initiator_unreachable) throw client_error(exit_unreachable, outcome.error);
                throw client_error(exit_run_failed, fmt::format("the probe of link {} -> {} failed: {} (leave out --predict, or "
                                                                "give --model MATRIX.json)",
                                                                from, to, outcome.error));
            }
            runs.push_back(std::move(outcome.run));
        }
        const auto f = summarize_link(runs);
        const auto sane = [](const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0; };
        if (!sane(f.lat_us) || !sane(f.gbit_per_s))
            throw client_error(exit_run_failed,
                               fmt::format("the probe of link {} -> {} gave no positive, finite latency and bandwidth "
                                           "figures (leave out --predict, or give --model MATRIX.json)",
                                           from, to));
        if (progress) progress(fmt::format("probe {} -> {}: α {} µs, β {} Gbit/s", from, to, core::plain_number(*f.lat_us, 3), core::plain_number(*f.gbit_per_s, 3)));
        out.links.push_back({from, to, analysis::link_model::from_us_gbit(*f.lat_us, *f.gbit_per_s)});
    }
    return out;
}

}  // namespace meshperf::client
