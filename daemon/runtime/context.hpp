#pragma once
/// What every part of meshperfd shares: who this host is, the one-measurement gate, the
/// data-stream hand-over, the run limits and the cluster token.
#include "core/result.hpp"
#include "core/run_spec.hpp"
#include "daemon/runtime/auth.hpp"
#include "daemon/runtime/measurement_gate.hpp"
#include "daemon/test_hooks/collective_hooks.hpp"
#include "daemon/test_hooks/sweep_hooks.hpp"
#include "daemon/runtime/self_peer.hpp"
#include "daemon/runtime/stream_registry.hpp"
#include "node/inventory.hpp"
#include "transport/tls.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace meshperf::daemon {

class metrics_registry;
class baseline_store;
class inspection_state;

struct daemon_context {
    core::host_info host;          ///< this daemon, as results name it
    core::run_limits limits;       ///< bounds on every run this daemon starts or serves
    std::string token;             ///< cluster bearer token; empty = no authentication
    /// Random, one per daemon: sent on the sessions it opens, so a session it opens to
    /// itself (through NAT, a DNS alias) is refused at once (daemon/runtime/self_peer.hpp).
    std::string instance_id = new_instance_id();
    stream_registry streams;
    measurement_gate gate;
    cidr_list allowed_peers;       ///< peers sessions may come from and runs may go to; empty = any
    auth_throttle_options auth_throttle;  ///< failed-authentication limiter of the HTTP server
    bool metrics_require_token = true;    ///< GET /metrics needs the token (config [auth])
    metrics_registry* metrics = nullptr;  ///< fed when runs finish; served on /metrics (owned by main)
    baseline_store* baselines = nullptr;  ///< /v1/baselines (owned by main)
    /// The scheduled inspections' latest result and the one-inspection-at-a-time lock
    /// (config [inspect]; GET /v1/inspect/last). Owned by main; null in tests that need none.
    inspection_state* inspections = nullptr;
    /// Test hooks of collective runs, from the daemon's environment (collective_test_hooks).
    collective_test_hooks collective_hooks;
    /// Test hooks of sweep points, from the daemon's environment (sweep_test_hooks).
    sweep_test_hooks sweep_hooks;
    /// TLS for the control plane (--tls-cert/--tls-key/--tls-ca); both null when off. The
    /// server context encrypts the API and incoming sessions, the client context the
    /// sessions this daemon opens (presenting the same certificate: mutual TLS).
    std::shared_ptr<const transport::tls_context> tls_server;
    std::shared_ptr<const transport::tls_context> tls_client;
    /// Where sysfs is mounted (--sysfs-root): NIC and RDMA counters, rails and the PCIe tree
    /// are read below it. "/sys" in service; tests point it at a fixture tree.
    std::filesystem::path sysfs_root = "/sys";
    /// Which NICs are rails (config [rails]): /v1/info's rails and /v1/inspect.
    node::rail_selection rails;
};

}  // namespace meshperf::daemon
