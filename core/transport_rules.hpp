#pragma once
/// What the specs the CLI and every daemon share know of each transport, by the name a spec
/// carries: core's part of the transport registry (the transports themselves, and the daemon's
/// part, are in daemon/transports/; docs/transports.md). Nothing else in core, analysis or the
/// client branches on a transport's name: it asks this table.
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::core {

struct run_spec;
struct run_limits;

/// One transport's rules for the specs that name it.
struct transport_rules {
    std::string_view name;  ///< as specs spell it: "tcp", "rdma"
    /// Its latency loops spin on completions, so each needs a CPU of its own (thread placement).
    bool polls = false;
    /// It has device fields of its own (rdma_device, rdma_port, gid_index): a collective spec
    /// carries them only for it and refuses them with another transport.
    bool device_fields = false;
    /// Its streams (or queue pairs) per direction under the limits. Throws spec_error.
    void (*check_streams)(const run_spec&, const run_limits&) = nullptr;
    /// What it cannot do with the spec's point length (checked after the common length rules).
    void (*check_length)(const run_spec&) = nullptr;
    /// What it cannot do with the spec's memory (checked after the memory names).
    void (*check_memory)(const run_spec&) = nullptr;
    /// Fields of the spec's JSON that only this transport carries ("ofi_provider"): written
    /// only for it, and a spec of another transport that sets them is refused.
    std::vector<std::string_view> own_fields;
    /// Words of its own for a report's path line ("write", "mlx5_0"); none when null.
    std::vector<std::string> (*path_details)(const run_spec&) = nullptr;
};

/// Every transport a spec may name, in the order messages list them.
const std::vector<transport_rules>& transport_rule_table();

/// The rules of `name`. Throws spec_error "unknown transport 'x': use one of tcp, rdma".
const transport_rules& transport_rules_of(std::string_view name);

}  // namespace meshperf::core
