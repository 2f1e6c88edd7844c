// meshperfd: the meshperf daemon. Serves the HTTP API, peer sessions and data streams on
// one port, runs measurements one at a time, and keeps their results.
#include "core/error.hpp"
#include "daemon/store/baseline_store.hpp"
#include "daemon/runtime/config.hpp"
#include "daemon/runtime/metrics.hpp"
#include "daemon/runs/probe_scheduler.hpp"
#include "daemon/runs/inspect_scheduler.hpp"
#include "daemon/runtime/inspection_state.hpp"
#include "daemon/runtime/host_facts.hpp"
#include "daemon/api/http_server.hpp"
#include "daemon/runtime/log.hpp"
#include "daemon/store/result_store.hpp"
#include "daemon/runs/run_manager.hpp"
#include "daemon/runs/node_inspection.hpp"
#include "daemon/runtime/auth.hpp"
#include "daemon/runtime/peer_policy.hpp"
#include "daemon/runtime/sd_notify.hpp"
#include "daemon/transports/registry.hpp"
#include "transport/socket.hpp"
#include "transport/tls.hpp"
#include "node/manifest.hpp"
#include "node/inventory.hpp"

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>

using namespace meshperf;

namespace {

bool is_loopback(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

/// --listen must name an address of this host, as an IP literal (or localhost): a name that
/// is not one used to start a daemon on 127.0.0.1:7470 that nobody could reach.
void require_listen_address(const std::string& listen, const transport::endpoint_address& ep) {
    if (ep.host == "localhost") return;
    boost::system::error_code ec;
    boost::asio::ip::make_address(ep.host, ec);
    if (ec)
        throw core::spec_error(fmt::format("--listen {}: '{}' is not an IP address (give ADDR:PORT, e.g. 0.0.0.0:7470 "
                                           "with --token-file, or 127.0.0.1:7470)",
                                           listen, ep.host));
}

/// The command line of meshperfd.
struct daemon_options {
    std::string listen = "127.0.0.1:7470";
    std::string state_dir = "/var/lib/meshperf";
    std::string token_file;
    std::string log_level = "info";
    std::string config_file;
    transport::tls_files tls;
    bool loopback_fallback = false;  ///< without a token, serve 127.0.0.1:PORT instead of refusing to start
    std::string sysfs_root = "/sys";  ///< where counters, rails and the PCIe tree are read
};

void add_options(CLI::App& app, daemon_options& o) {
    app.add_option("--listen", o.listen, "ADDR:PORT for the API, peer sessions and data streams (one port)")->capture_default_str();
    app.add_option("--state-dir", o.state_dir, "directory for the result store (SQLite)")->capture_default_str();
    app.add_option("--token-file", o.token_file, "file holding the cluster bearer token (mode 0600); without it, loopback only");
    app.add_option("--tls-cert", o.tls.cert_file,
                   "PEM certificate chain: serve the API and peer sessions over TLS (data streams stay plain TCP), and "
                   "present it to peers");
    app.add_option("--tls-key", o.tls.key_file, "PEM private key of --tls-cert (not readable by others)");
    app.add_option("--tls-ca", o.tls.ca_file,
                   "PEM CA bundle: peers' and clients' certificates must chain to it (mutual TLS; clients need a certificate)");
    app.add_flag("--loopback-fallback", o.loopback_fallback,
                 "without --token-file, serve 127.0.0.1:PORT when --listen names another address (by default the "
                 "daemon refuses to start)");
    app.add_option("--sysfs-root", o.sysfs_root,
                   "where sysfs is mounted: NIC and RDMA counters, rails and the PCIe tree are read below it (tests "
                   "point it at a fixture tree)")
        ->capture_default_str();
    app.add_option("--log-level", o.log_level, "debug, info, warn or error")->capture_default_str();
    app.add_option("--config", o.config_file,
                   "TOML configuration: limits, allowed peers, /metrics authentication, scheduled probes "
                   "(see meshperfd.toml.example); options given here override its [daemon] settings");
    app.set_version_flag("--version", std::string("meshperfd ") + MESHPERF_VERSION);
}

/// The configuration file's [daemon] settings, where the command line did not give them.
void apply_config_defaults(const CLI::App& app, const daemon::daemon_config& config, daemon_options& o) {
    if (config.listen && app.count("--listen") == 0) o.listen = *config.listen;
    if (config.state_dir && app.count("--state-dir") == 0) o.state_dir = *config.state_dir;
    if (config.token_file && app.count("--token-file") == 0) o.token_file = *config.token_file;
}

/// Limits, token and TLS contexts from the options and the configuration. Without a token,
/// `ep` is narrowed to loopback.
void fill_context(daemon::daemon_context& ctx, const daemon_options& o, const daemon::daemon_config& config,
                  transport::endpoint_address& ep) {
    ctx.limits = config.limits;
    ctx.allowed_peers = config.allowed_peers;
    ctx.auth_throttle = config.auth_throttle;
    ctx.metrics_require_token = config.metrics_require_token;
    ctx.rails = config.rails;
    ctx.sysfs_root = o.sysfs_root;
    if (!o.token_file.empty()) ctx.token = daemon::load_token_file(o.token_file);
    if (o.tls.enabled()) {
        ctx.tls_server = std::make_shared<transport::tls_context>(transport::tls_context::role::server, o.tls);
        ctx.tls_client = std::make_shared<transport::tls_context>(transport::tls_context::role::client, o.tls);
    }
    if (ctx.token.empty() && !is_loopback(ep.host)) {
        if (!o.loopback_fallback)
            throw core::spec_error(fmt::format(
                "--listen {}: refusing to serve a non-loopback address without authentication; give --token-file FILE "
                "(the cluster token, mode 0600), or listen on 127.0.0.1 (--loopback-fallback does that instead of failing)",
                ep.to_string()));
        daemon::log_warn("no --token-file: refusing to serve {} without authentication; listening on 127.0.0.1:{} only "
                         "(--loopback-fallback)",
                         ep.host, ep.port);
        ep.host = "127.0.0.1";
    }
}

/// The [inspect] manifest, read once at start: a file that cannot be read or parsed stops
/// the daemon (exit 2) naming the key, as any other bad setting does.
std::optional<node::node_manifest> inspect_manifest(const daemon::inspect_config& c) {
    if (c.manifest.empty()) return std::nullopt;
    try {
        return node::load_manifest(c.manifest);
    } catch (const core::spec_error& e) {
        throw core::spec_error(fmt::format("[inspect] manifest: {}", e.what()));
    }
}

/// systemd watchdog keepalives from the I/O thread, so a stalled event loop gets the daemon
/// restarted. Does nothing when the unit has no watchdog.
class watchdog_keepalive {
public:
    explicit watchdog_keepalive(boost::asio::io_context& io) : timer_(io) {
        if (const auto interval = daemon::sd::watchdog_ping_interval()) {
            period_ = *interval;
            ping();
        }
    }

private:
    void ping() {
        daemon::sd::watchdog();
        timer_.expires_after(period_);
        timer_.async_wait([this](const boost::system::error_code& ec) { if (!ec) ping(); });
    }
    boost::asio::steady_timer timer_;
    std::chrono::steady_clock::duration period_{};
};

/// Runs the I/O thread until it is stopped. Every connection contains its own failures
/// (http_server.cpp); an exception that still escapes a handler is a bug, logged, and the
/// loop goes on serving the others instead of ending the daemon.
/// With the API on one address (the management network), the rails' data streams are taken
/// on each rail's own addresses too (start_stream_listener: nothing but data streams there),
/// so rails work without exposing the API on every interface. A daemon listening on every
/// address (0.0.0.0, ::) needs none. The rails are those of the inventory at start-up; an
/// address that cannot be bound is said and skipped.
void listen_for_rail_streams(boost::asio::io_context& io, daemon::daemon_context& ctx, daemon::run_manager& runs,
                             daemon::result_store& store, const transport::endpoint_address& ep) {
    boost::system::error_code ec;
    const auto listen_addr = boost::asio::ip::make_address(ep.host == "localhost" ? "127.0.0.1" : ep.host, ec);
    if (ec || listen_addr.is_unspecified() || listen_addr.is_loopback()) return;
    node::node_inventory inv;
    try {
        inv = daemon::read_node_inventory(ctx, listen_addr.to_string(), nlohmann::json());
    } catch (const std::exception& e) {
        daemon::log_warn("rails: cannot list them to take their data streams ({}); rails need listen = \"0.0.0.0:{}\"",
                         e.what(), ep.port);
        return;
    }
    for (const auto& rail : inv.rails)
        for (const auto& cidr : rail.addresses) {
            const auto addr = boost::asio::ip::make_address(cidr.substr(0, cidr.find('/')), ec);
            if (ec || addr == listen_addr || addr.is_loopback() || (addr.is_v6() && addr.to_v6().is_link_local())) continue;
            try {
                daemon::start_stream_listener(io, {addr, ep.port}, ep.to_string(), ctx, runs, store);
                daemon::log_info("rail {}: taking its data streams on {}:{} (no API there)", rail.name, addr.to_string(), ep.port);
            } catch (const std::exception& e) {
                daemon::log_warn("rail {}: cannot take data streams on {}: {}", rail.name, addr.to_string(), e.what());
            }
        }
}

void run_io_loop(boost::asio::io_context& io) {
    while (true) {
        try {
            io.run();
            return;
        } catch (const std::exception& e) {
            daemon::log_error("internal error on the I/O thread (a bug: please report it; the daemon goes on): {}", e.what());
        } catch (...) {
            daemon::log_error("unknown internal error on the I/O thread (a bug: please report it; the daemon goes on)");
        }
    }
}

/// Opens the store, starts the API, the run executor, the probes and the inspections, and
/// serves until SIGINT or SIGTERM.
void serve(daemon::daemon_context& ctx, const daemon_options& o, const daemon::daemon_config& config,
           const transport::endpoint_address& ep, std::optional<node::node_manifest> expect) {
    daemon::inspection_state inspections(config.inspect);  // before the I/O context: handlers may read it to the end
    ctx.inspections = &inspections;
    std::error_code fs_ec;
    std::filesystem::create_directories(o.state_dir, fs_ec);
    daemon::result_store store(o.state_dir, config.store);
    ctx.host = daemon::local_host_info(ep.to_string());
    boost::asio::io_context io(1);
    daemon::baseline_store baselines(store.path());
    daemon::metrics_registry metrics(config.metrics_max_peers);
    ctx.baselines = &baselines;
    ctx.metrics = &metrics;
    daemon::run_manager runs(ctx, store);
    runs.on_finished([&metrics](const core::run_result& r) { metrics.record_run(r); });
    runs.on_collective_finished([&metrics](const core::collective_result& r) { metrics.record_collective(r); });
    if (const char* hook = std::getenv("MESHPERF_TEST_CORRUPT_COLLECTIVE"); hook && std::string_view(hook) == "1") {
        ctx.collective_hooks.corrupt = true;
        daemon::log_warn("MESHPERF_TEST_CORRUPT_COLLECTIVE=1: this daemon corrupts the collective data it sends (a test hook)");
    }
    if (const char* hook = std::getenv("MESHPERF_TEST_CORRUPT_TCP"); hook && std::string_view(hook) == "1") {
        ctx.sweep_hooks.corrupt_tcp = true;
        daemon::log_warn("MESHPERF_TEST_CORRUPT_TCP=1: this daemon corrupts the TCP sweep data it sends (a test hook)");
    }
    if (const char* hook = std::getenv("MESHPERF_TEST_CORRUPT_RDMA"); hook && std::string_view(hook) == "1") {
        ctx.sweep_hooks.corrupt_rdma = true;
        daemon::log_warn("MESHPERF_TEST_CORRUPT_RDMA=1: this daemon corrupts the RDMA sweep data it sends (a test hook)");
    }
    if (const char* hook = std::getenv("MESHPERF_TEST_CORRUPT_OFI"); hook && std::string_view(hook) == "1") {
        ctx.sweep_hooks.corrupt_ofi = true;
        daemon::log_warn("MESHPERF_TEST_CORRUPT_OFI=1: this daemon corrupts the libfabric sweep data it sends (a test hook)");
    }
    if (const char* hook = std::getenv("MESHPERF_TEST_EMULATED_GPU"); hook && std::string_view(hook) == "1") {
        ctx.collective_hooks.emulated_gpu = true;
        daemon::log_warn("MESHPERF_TEST_EMULATED_GPU=1: this daemon serves --memory cuda:N collectives from a GPU emulated in "
                         "host memory (a test hook)");
    }
    daemon::start_http_server(io, ep.to_string(), ctx, runs, store);
    listen_for_rail_streams(io, ctx, runs, store, ep);
    daemon::probe_scheduler probes(config.schedule, runs);
    daemon::inspect_scheduler inspector(ctx, runs, std::move(expect), ep.host == "localhost" ? "127.0.0.1" : ep.host);
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
        if (!ec) daemon::log_info("signal {}: shutting down", sig);
        daemon::sd::stopping("shutting down");
        io.stop();
    });
    watchdog_keepalive watchdog(io);
    daemon::sd::ready(fmt::format("serving on {}", ep.to_string()));
    daemon::log_info("meshperfd {} listening on {} (state {}, {}, {}{}{})", MESHPERF_VERSION, ep.to_string(), store.path(),
                     ctx.token.empty() ? "no authentication" : "token authentication",
                     !ctx.tls_server ? "plain HTTP"
                                     : (ctx.tls_server->requires_peer_certificate() ? "TLS with client certificates" : "TLS"),
                     o.config_file.empty() ? "" : ", config ", o.config_file);
    run_io_loop(io);
}

}  // namespace

int main(int argc, char** argv) {
    // A transport's inventory asked in a process of its own (daemon/transports/registry.hpp).
    if (argc == 3 && std::string_view(argv[1]) == "--inventory-child") return daemon::print_inventory(argv[2]);
    daemon::enable_inventory_children();
    CLI::App app{"meshperfd: the meshperf daemon (network and interconnect measurements between cluster nodes)"};
    daemon_options options;
    add_options(app, options);
    CLI11_PARSE(app, argc, argv);

    std::signal(SIGPIPE, SIG_IGN);
    try {
        daemon::set_log_level(options.log_level);
        daemon::daemon_config config;
        if (!options.config_file.empty()) config = daemon::load_config(options.config_file);
        auto expect = inspect_manifest(config.inspect);  // a bad one stops the daemon before anything else starts
        apply_config_defaults(app, config, options);
        auto ep = transport::parse_endpoint(options.listen);
        require_listen_address(options.listen, ep);
        daemon::daemon_context ctx;
        fill_context(ctx, options, config, ep);
        daemon::install_connect_policy(ctx);  // before any thread connects anywhere
        serve(ctx, options, config, ep, std::move(expect));
    } catch (const core::spec_error& e) {
        daemon::log_error("{}", e.what());
        return 2;
    } catch (const std::exception& e) {
        daemon::log_error("{}", e.what());
        return 1;
    }
    return 0;
}
