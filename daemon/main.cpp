// meshperfd: the meshperf daemon. Serves the HTTP API, peer sessions and data streams on
// one port, runs measurements one at a time, and keeps their results.
#include "core/error.hpp"
#include "daemon/store/baseline_store.hpp"
#include "daemon/service/config.hpp"
#include "daemon/service/metrics.hpp"
#include "daemon/service/probe_scheduler.hpp"
#include "daemon/service/host_facts.hpp"
#include "daemon/api/http_server.hpp"
#include "daemon/service/log.hpp"
#include "daemon/store/result_store.hpp"
#include "daemon/service/run_manager.hpp"
#include "daemon/service/auth.hpp"
#include "daemon/service/sd_notify.hpp"
#include "transport/socket.hpp"
#include "transport/tls.hpp"

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>

using namespace meshperf;

namespace {

bool is_loopback(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"meshperfd: the meshperf daemon (network and interconnect measurements between cluster nodes)"};
    std::string listen = "127.0.0.1:7470";
    std::string state_dir = "/var/lib/meshperf";
    std::string token_file;
    std::string log_level = "info";
    std::string config_file;
    app.add_option("--listen", listen, "ADDR:PORT for the API, peer sessions and data streams (one port)")->capture_default_str();
    app.add_option("--state-dir", state_dir, "directory for the result store (SQLite)")->capture_default_str();
    app.add_option("--token-file", token_file, "file holding the cluster bearer token (mode 0600); without it, loopback only");
    transport::tls_files tls;
    app.add_option("--tls-cert", tls.cert_file,
                   "PEM certificate chain: serve the API and peer sessions over TLS (data streams stay plain TCP), and "
                   "present it to peers");
    app.add_option("--tls-key", tls.key_file, "PEM private key of --tls-cert (not readable by others)");
    app.add_option("--tls-ca", tls.ca_file,
                   "PEM CA bundle: peers' and clients' certificates must chain to it (mutual TLS; clients need a certificate)");
    app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
    app.add_option("--config", config_file,
                   "TOML configuration: limits, allowed peers, /metrics authentication, scheduled probes "
                   "(see meshperfd.toml.example); options given here override its [daemon] settings");
    app.set_version_flag("--version", std::string("meshperfd ") + MESHPERF_VERSION);
    CLI11_PARSE(app, argc, argv);

    std::signal(SIGPIPE, SIG_IGN);
    try {
        daemon::set_log_level(log_level);
        daemon::daemon_config config;
        if (!config_file.empty()) config = daemon::load_config(config_file);
        if (config.listen && app.count("--listen") == 0) listen = *config.listen;
        if (config.state_dir && app.count("--state-dir") == 0) state_dir = *config.state_dir;
        if (config.token_file && app.count("--token-file") == 0) token_file = *config.token_file;
        auto ep = transport::parse_endpoint(listen);
        daemon::daemon_context ctx;
        ctx.limits = config.limits;
        ctx.allowed_peers = config.allowed_peers;
        ctx.auth_throttle = config.auth_throttle;
        ctx.metrics_require_token = config.metrics_require_token;
        if (!token_file.empty()) ctx.token = daemon::load_token_file(token_file);
        if (tls.enabled()) {
            ctx.tls_server = std::make_shared<transport::tls_context>(transport::tls_context::role::server, tls);
            ctx.tls_client = std::make_shared<transport::tls_context>(transport::tls_context::role::client, tls);
        }
        if (ctx.token.empty() && !is_loopback(ep.host)) {
            daemon::log_warn("no --token-file: refusing to serve {} without authentication; listening on 127.0.0.1:{} only", ep.host, ep.port);
            ep.host = "127.0.0.1";
        }
        std::error_code fs_ec;
        std::filesystem::create_directories(state_dir, fs_ec);
        daemon::result_store store(state_dir);
        ctx.host = daemon::local_host_info(ep.to_string());
        boost::asio::io_context io(1);
        daemon::baseline_store baselines(store.path());
        daemon::metrics_registry metrics;
        ctx.baselines = &baselines;
        ctx.metrics = &metrics;
        daemon::run_manager runs(ctx, store);
        runs.on_finished([&metrics](const core::run_result& r) { metrics.record_run(r); });
        daemon::start_http_server(io, ep.to_string(), ctx, runs, store);
        daemon::probe_scheduler probes(config.schedule, runs);
        boost::asio::signal_set signals(io, SIGINT, SIGTERM);
        signals.async_wait([&](const boost::system::error_code& ec, int sig) {
            if (!ec) daemon::log_info("signal {}: shutting down", sig);
            daemon::sd::stopping("shutting down");
            io.stop();
        });
        // Watchdog keepalives come from the I/O thread, so a stalled event loop gets the
        // daemon restarted by systemd.
        boost::asio::steady_timer watchdog(io);
        std::function<void()> keepalive;
        if (const auto interval = daemon::sd::watchdog_ping_interval()) {
            keepalive = [&, period = *interval] {
                daemon::sd::watchdog();
                watchdog.expires_after(period);
                watchdog.async_wait([&](const boost::system::error_code& ec) { if (!ec) keepalive(); });
            };
            keepalive();
        }
        daemon::sd::ready(fmt::format("serving on {}", ep.to_string()));
        daemon::log_info("meshperfd {} listening on {} (state {}, {}, {}{}{})", MESHPERF_VERSION, ep.to_string(), store.path(),
                         ctx.token.empty() ? "no authentication" : "token authentication",
                         !ctx.tls_server ? "plain HTTP"
                                         : (ctx.tls_server->requires_peer_certificate() ? "TLS with client certificates"
                                                                                         : "TLS"),
                         config_file.empty() ? "" : ", config ", config_file);
        io.run();
    } catch (const core::spec_error& e) {
        daemon::log_error("{}", e.what());
        return 2;
    } catch (const std::exception& e) {
        daemon::log_error("{}", e.what());
        return 1;
    }
    return 0;
}
