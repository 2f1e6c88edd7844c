#pragma once
/// The libfabric side of peer sessions: the ofi entry's sweep plug-ins and inventory
/// (daemon/transports/ofi/entry.cpp). Built only where libfabric is found.
#include "core/run_spec.hpp"
#include "daemon/sweep/point_transport.hpp"
#include "daemon/test_hooks/sweep_hooks.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace meshperf::daemon {

/// GET /v1/info's libfabric part: {"available": bool, "reason"?: ..., "providers": [names,
/// best first], "domains": [{provider, fabric, domain, endpoint_type, capabilities, mr_mode,
/// device?}, ...]}.
nlohmann::json ofi_info();

/// Refuses (core::spec_error, so the CLI exits 2) a spec naming a provider this host lacks,
/// or one without the operation asked, listing what the providers here offer.
void check_ofi_spec(const core::run_spec& spec);

/// The initiator's libfabric transport for a run: at open, the provider both daemons share
/// (spec.ofi_provider, else the best of efa, cxi, verbs, tcp both have), one endpoint per
/// stream bound to the session's local address, the address exchange over the session, and
/// the path in the result's notes. `byte_cap`, `cpus`: as for every transport
/// (point_transport.hpp). `hooks`: corrupt_ofi, read once for the run.
std::unique_ptr<initiator_transport> make_ofi_initiator_transport(const core::run_spec& spec, std::uint64_t byte_cap,
                                                                  std::vector<int> cpus, const sweep_test_hooks& hooks);

/// The responder's libfabric transport for a session: chooses the provider from the
/// initiator's list and its own (refusing the session, naming both lists, when none is
/// common), opens its endpoints and exchanges addresses.
std::unique_ptr<responder_transport> make_ofi_responder_transport(const core::run_spec& spec, std::uint64_t byte_cap,
                                                                  std::vector<int> cpus, const sweep_test_hooks& hooks);

}  // namespace meshperf::daemon
