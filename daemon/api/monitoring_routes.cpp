#include "daemon/api/monitoring_routes.hpp"

#include "core/transport_rules.hpp"
#include "core/check_figures.hpp"
#include "core/error.hpp"
#include "core/prometheus.hpp"
#include "daemon/store/baseline_store.hpp"
#include "daemon/runtime/host_facts.hpp"
#include "daemon/runtime/metrics.hpp"
#include "transport/socket.hpp"

#include <fmt/format.h>

namespace meshperf::daemon {

using nlohmann::json;

api_reply handle_metrics(api_state& s) {
    api_reply r;
    r.content_type = core::prometheus_content_type;
    if (!s.ctx.metrics) return api_error(503, "metrics are not collected by this meshperfd");
    r.text = s.ctx.metrics->render(s.runs.queued());
    if (!r.text.empty() && r.text.back() != '\n') r.text += '\n';
    r.text += fmt::format("# HELP meshperf_store_writable Whether the result store can be written (0: read-only or full disk; "
                          "results wait in memory, see /healthz)\n"
                          "# TYPE meshperf_store_writable gauge\n"
                          "meshperf_store_writable {}\n"
                          "# HELP meshperf_store_pending_results Results waiting in memory to be stored\n"
                          "# TYPE meshperf_store_pending_results gauge\n"
                          "meshperf_store_pending_results {}\n",
                          s.store.writable() ? 1 : 0, s.store.pending());
    return r;
}

namespace {

json entries_json(const std::vector<baseline_entry>& entries) {
    json list = json::array();
    for (const auto& e : entries) list.push_back(to_json(e));
    return list;
}

/// The figures a PUT asks to store, or an error reply.
api_reply figures_to_store(api_state& s, const json& body, const std::string& peer, std::string& transport,
                           std::vector<core::check_figure>& figures, std::string& run_id) {
    if (body.contains("run_id")) {
        if (!body["run_id"].is_string()) return api_error(400, "\"run_id\" must be a string");
        run_id = body["run_id"].get<std::string>();
        json doc;
        if (auto live = s.runs.find(run_id)) doc = live->document();
        else if (auto stored = s.store.load(run_id)) doc = *stored;
        else return api_error(404, fmt::format("no run '{}' on this daemon (list runs with GET /v1/runs)", run_id));
        core::run_result run;
        try {
            run = core::run_result_from_json(doc);
        } catch (const std::exception& e) {
            return api_error(500, fmt::format("stored run '{}' cannot be read: {}", run_id, e.what()));
        }
        if (run.state != core::run_state::completed)
            return api_error(409, fmt::format("run '{}' is {}, not completed: only a completed run can be a baseline", run_id, run.state.text()));
        if (run.spec.peer != peer)
            return api_error(409, fmt::format("run '{}' measured peer {}, not {}", run_id, run.spec.peer, peer));
        const std::string run_transport(run.spec.transport);
        if (!transport.empty() && transport != run_transport)
            return api_error(409, fmt::format("run '{}' measured over {}, not {}", run_id, run_transport, transport));
        transport = run_transport;
        figures = core::figures_of(run);
        if (figures.empty()) return api_error(400, fmt::format("run '{}' has no latency or bandwidth point to keep", run_id));
        return {};
    }
    if (body.contains("figures")) {
        if (!body["figures"].is_array() || body["figures"].empty())
            return api_error(400, "\"figures\" must be a non-empty array of {\"test\", \"size_bytes\", \"gbit_per_s\" or \"lat_us\"}");
        try {
            for (const auto& f : body["figures"]) figures.push_back(core::check_figure_from_json(f));
        } catch (const core::spec_error& e) {
            return api_error(400, e.what());
        }
        if (transport.empty()) transport = "tcp";
        return {};
    }
    return api_error(400, "send {\"run_id\": \"r-...\"} (a completed run against the peer) or {\"figures\": [...]}");
}

}  // namespace

api_reply handle_baselines(api_state& s, const std::string& method, const std::string& query, const std::string& body) {
    if (!s.ctx.baselines) return api_error(503, "baselines are not kept by this meshperfd");
    std::string peer;
    try {
        peer = peer_query_param(query);
    } catch (const core::spec_error& e) {
        return api_error(400, e.what());
    }
    if (!peer.empty()) peer = transport::parse_endpoint(peer).to_string();  // baselines are kept under HOST:PORT
    std::string transport = query_param(query, "transport");
    if (!transport.empty()) {
        try {
            core::transport_rules_of(transport);
        } catch (const core::spec_error& e) {
            return api_error(400, fmt::format("transport: {}", e.what()));
        }
    }
    try {
        if (method == "GET") return {200, {{"schema", core::baselines_schema}, {"baselines", entries_json(s.ctx.baselines->load(peer, transport))}}};
        if (peer.empty()) return api_error(400, fmt::format("{} /v1/baselines needs ?peer=HOST[:PORT]", method));
        if (method == "DELETE") return {200, {{"peer", peer}, {"deleted", s.ctx.baselines->remove(peer, transport)}}};
        if (method != "PUT") return api_error(405, "use GET, PUT or DELETE on /v1/baselines");
        const auto j = json::parse(body, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return api_error(400, "the request body is not a JSON object: send {\"run_id\": \"r-...\"} or {\"figures\": [...]}");
        for (const auto& [key, _] : j.items())
            if (key != "run_id" && key != "figures") return api_error(400, fmt::format("unknown field '{}' in baseline request", key));
        std::vector<core::check_figure> figures;
        std::string run_id;
        if (auto err = figures_to_store(s, j, peer, transport, figures, run_id); err.status != 200) return err;
        s.ctx.baselines->save(peer, transport, figures, run_id, utc_now_rfc3339());
        return {200, {{"schema", core::baselines_schema}, {"peer", peer}, {"transport", transport}, {"saved", figures.size()},
                      {"baselines", entries_json(s.ctx.baselines->load(peer, transport))}}};
    } catch (const std::runtime_error& e) {
        return api_error(500, e.what());
    }
}

}  // namespace meshperf::daemon
