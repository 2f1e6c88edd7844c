#pragma once
/// The transports this meshperfd measures over: one entry each, with everything the rest of
/// the daemon asks of a transport by its name (the name a run spec carries): whether it can
/// measure here and why not, its part of GET /v1/info, and the factories of its sweep and
/// collective plug-ins. The session code (daemon/sweep/, daemon/collective/) gets the
/// plug-ins from here through its callers (daemon/runs/) and never branches on a
/// transport's name; each transport lives in its own folder under daemon/transports/ and is
/// registered by one line in registry.cpp. docs/transports.md says how to add one.
#include "daemon/collective/collective_plugin.hpp"
#include "daemon/sweep/point_transport.hpp"

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::daemon {

/// What a transport can do on this host now.
struct transport_inventory {
    bool available = false;
    /// Why not, when it is not available: "no RDMA device found", "not built into this
    /// meshperfd (...)"; may also be set when available.
    std::string reason;
    /// Its own fields of GET /v1/info beside "transports" (RDMA: "rdma_devices"); an object.
    nlohmann::json info_fields = nlohmann::json::object();
};

/// One transport.
struct transport_entry {
    std::string name;  ///< as run specs and /v1/info spell it: "tcp", "rdma"
    /// Asked at every GET /v1/info and when a probe schedule starts; reads the host (devices).
    std::function<transport_inventory()> inventory;
    /// Set when `inventory` asks it in a child process (`meshperfd --inventory-child NAME`),
    /// because what it reads stays open in the process that asked (libfabric keeps RDMA
    /// device contexts open until exit, which would pin the driver under an idle daemon).
    std::function<transport_inventory()> inventory_in_process;
    /// Refuses at submission (core::spec_error) a sweep spec this host can never run over it
    /// (ofi: a provider it lacks, or one without the operation asked). Empty: none.
    std::function<void(const core::run_spec&)> check_spec;
    sweep_plugins sweep;
    collective_plugin collective;
    /// False for a transport this build knows by name but was built without: it has no
    /// plug-ins, its inventory says why, and a run over it is refused with that reason.
    bool built = true;
};

/// Every transport this build knows, in the order /v1/info lists them: those built in, and
/// those it was built without (entry.built false).
const std::vector<transport_entry>& transports();

/// The entry of `name` when it is built in. Throws core::spec_error for a name this build
/// does not have: for one it was built without, that entry's reason; for an unknown one, the
/// names it has and why each of the others is not here.
const transport_entry& find_transport(std::string_view name);

/// Why this daemon cannot measure over `name` now ("not a transport of this meshperfd", the
/// entry's reason, "not available on this host"); empty when it can.
std::string unavailable_reason(std::string_view name);

/// The sweep plug-ins by name (find_transport), for daemon/sweep/.
const sweep_plugins& find_sweep_plugins(std::string_view name);
/// The collective plug-in by name (find_transport), for daemon/collective/.
const collective_plugin& find_collective_plugin(std::string_view name);

/// Runs the spec's transport's check_spec, when it has one and is built here (a transport
/// this build lacks is refused later, when the run starts, as before). Throws core::spec_error.
void check_spec_here(const core::run_spec& spec);

/// `meshperfd --inventory-child NAME`: prints the entry's in-process inventory as JSON
/// ({"available", "reason", "info_fields"}) and returns the exit code (0; 2 for a name
/// without one).
int print_inventory(std::string_view name);

/// Lets inventory_from_child start children: meshperfd's main calls it (it answers
/// --inventory-child); elsewhere (unit tests) the inventory is asked in-process.
void enable_inventory_children();

/// An entry's inventory asked of a child process (print_inventory through /proc/self/exe),
/// kept for `max_age`: not available, with why, when the child fails.
transport_inventory inventory_from_child(std::string_view name, std::chrono::seconds max_age);

/// GET /v1/info's transport part: {"transports": [{"name", "available", "reason"?}, ...]}
/// and every entry's info_fields.
nlohmann::json transports_info();

}  // namespace meshperf::daemon
