// meshperf baseline save|show|delete PEER: baselines kept by the initiating daemon per peer,
// transport, test and size (PUT/GET/DELETE /v1/baselines), for `meshperf check --baseline stored`.
#include "client/commands/commands.hpp"
#include "core/transport_rules.hpp"
#include "core/json_text.hpp"
#include "client/support/output_format.hpp"
#include "client/support/daemon_client.hpp"
#include "client/render/table.hpp"
#include "client/support/short_runs.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

#include <cstdio>
#include <fmt/format.h>
#include <memory>

namespace meshperf::client {

using nlohmann::json;

namespace {

struct baseline_options {
    std::string peer;
    std::string initiator = "localhost:7470";
    short_test_options test{"tcp", "", "", 1, 1.0, 0.1};  // longer points than a check: a baseline is kept
    output_format format = output_format::table;
};

std::string render_baselines(const json& doc) {
    const auto& list = doc.at("baselines");
    if (list.empty()) return "no baselines stored\n";
    std::vector<std::vector<std::string>> rows{{"peer", "transport", "test", "size", "figure", "run", "saved at"}};
    for (const auto& e : list) {
        const bool bw = e.value("test", "") == "bandwidth";
        rows.push_back({e.value("peer", ""), e.value("transport", ""), e.value("test", ""),
                        core::format_size(e.value("size_bytes", std::uint64_t{0})),
                        bw ? fmt::format("{:.3f} Gbit/s", e.value("gbit_per_s", 0.0)) : fmt::format("{:.2f} us", e.value("lat_us", 0.0)),
                        e["run_id"].is_string() ? e["run_id"].get<std::string>() : "-", e.value("saved_at", "")});
    }
    return format_table(rows);
}

std::string query(const std::string& peer, const std::string& transport) {
    return fmt::format("/v1/baselines?peer={}&transport={}", peer, transport);
}

void add_common(CLI::App* sub, baseline_options& o) {
    sub->add_option("peer", o.peer, "peer daemon HOST[:PORT]")->required();
    sub->add_option("--initiator", o.initiator, "daemon that keeps the baseline and measures, HOST[:PORT]")->capture_default_str();
    sub->add_option("--transport", o.test.transport, "tcp or rdma")->capture_default_str();
}

}  // namespace

command_runner add_baseline_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<baseline_options>();
    auto* cmd = app.add_subcommand("baseline", "keep the figures of a healthy path, for meshperf check --baseline stored");
    cmd->require_subcommand(1);
    auto* save = cmd->add_subcommand("save", "measure the path to PEER now and store the figures as its baseline");
    add_common(save, *o);
    save->add_option("--test", o->test.tests, "comma list of latency, bandwidth (default both)");
    save->add_option("--sizes", o->test.sizes, "sizes for every test (default: latency 8 B, bandwidth 1 MiB)");
    save->add_option("--streams", o->test.streams, "parallel streams per direction")->capture_default_str();
    save->add_option("--max-time", o->test.max_time, "adaptive time cap per point, seconds")->capture_default_str();
    save->add_option("--warmup", o->test.warmup, "warm-up seconds before every point")->capture_default_str();
    auto* show = cmd->add_subcommand("show", "show the baselines stored for PEER");
    add_common(show, *o);
    add_format_option(*show, o->format, {output_format::table, output_format::json});
    auto* del = cmd->add_subcommand("delete", "forget the baselines stored for PEER (and transport)");
    add_common(del, *o);
    return [o, save, show, &common]() -> int {
        std::string peer;
        try {
            peer = transport::parse_endpoint(o->peer).to_string();
            core::transport_rules_of(o->test.transport);
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
        const daemon_client initiator(o->initiator, client_credentials(common.token_file, common.tls));
        if (show->parsed()) {
            const auto doc = initiator.get(query(peer, o->test.transport));
            write_output("", render(o->format, {.table = [&] { return render_baselines(doc); },
                                                .json = [&] { return core::json_text(doc, 2) + "\n"; }}));
            return exit_ok;
        }
        if (!save->parsed()) {
            const auto doc = initiator.del(query(peer, o->test.transport));
            std::printf("deleted %llu baseline figure(s) for %s over %s on %s\n",
                        static_cast<unsigned long long>(doc.value("deleted", std::uint64_t{0})), peer.c_str(),
                        o->test.transport.c_str(), initiator.address().to_string().c_str());
            return exit_ok;
        }
        std::vector<core::run_spec> specs;
        try {
            specs = short_test_specs(peer, o->test);
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
        if (const auto note = size_order_note(o->test); !note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
        // Measure everything first: a baseline is stored only when every run completed.
        std::vector<std::string> ids;
        for (const auto& spec : specs) {
            const auto out = run_to_completion(initiator, spec);
            if (!out.completed)
                throw client_error(out.initiator_unreachable ? exit_unreachable : exit_run_failed,
                                   fmt::format("no baseline saved: {}", out.error));
            ids.push_back(out.run.id);
        }
        json doc;
        for (const auto& id : ids) doc = initiator.put(query(peer, o->test.transport), json{{"run_id", id}});
        std::printf("baseline saved on %s for %s over %s:\n", initiator.address().to_string().c_str(), peer.c_str(),
                    o->test.transport.c_str());
        write_output("", render_baselines(doc));
        return exit_ok;
    };
}

}  // namespace meshperf::client
