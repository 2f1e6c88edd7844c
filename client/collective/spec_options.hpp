#pragma once
/// `meshperf collective`'s options as typed, and the one place they become a
/// core::collective_spec: through core::collective_spec_from_json, so the command refuses
/// exactly what the coordinator would (fewer than 2 hosts, a host twice, an op the algorithm
/// cannot run, a size an op cannot cut, iterations with a duration, ...), with core's
/// sentence, before anything is sent (exit 2).
#include "core/collective/spec.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace meshperf::client {

/// The command line of `collective` (and of `check --collective`), as given.
struct collective_options {
    std::string hosts;                 ///< --hosts: a host file or a comma list (client/support/hosts_file.hpp)
    std::string ops = "allreduce";     ///< --op: comma list
    std::string algo;                  ///< --algo: ring, tree or direct; empty: each op's default
    std::string sizes = "1K..64M";     ///< --sizes: list and ranges, as sweep's
    std::string transport = "tcp";
    std::string rdma_device;           ///< --rdma-device (RDMA only; empty: the one of the daemon's address)
    std::uint32_t rdma_port = 1;       ///< --port
    int gid_index = 0;                 ///< --gid-index, when given
    std::string memory = "host";       ///< host or cuda:N
    std::string dtype = "fp32";
    bool verify = false;
    std::uint64_t iterations = core::default_collective_iterations;
    double duration = 0;               ///< --duration, seconds
    std::uint64_t warmup = core::default_collective_warmup;
    std::string coordinator;           ///< empty: the first host
    bool predict = false;
    std::string model;                 ///< --model FILE (with --predict)
};

/// Whether an option ("--iterations") was on the command line: asked of the parser, never
/// read from the value (`--iterations 0` must be refused, not taken as "not given").
using option_given = std::function<bool(std::string_view)>;

/// A spec built from the options, and what was changed on the way (for stderr).
struct built_collective_spec {
    core::collective_spec spec;
    std::vector<std::string> notes;  ///< "note: ..." lines: sizes rounded or reordered
};

/// The sizes of --sizes for a run whose sizes must be multiples of `step` bytes: items as
/// written (refused later with the nearest valid sizes when they do not divide), but every
/// size a range "LO..HI" expands to rounded down to a multiple of `step` (up to `step` for
/// one below it), said in a note appended to `notes`; then sorted without repeats, said in a
/// note too. `why_step` says what needs the step ("allgather over 3 ranks of fp32").
/// Throws core::spec_error for a malformed list.
std::vector<std::uint64_t> collective_sizes(std::string_view text, std::uint64_t step, std::string_view why_step,
                                            std::vector<std::string>& notes);

/// The validated spec of `o`; hosts read from o.hosts (read_host_words) and normalized as
/// the daemons write them (transport::parse_endpoint). Throws client_error(exit_usage) with
/// core's sentence for every refusal.
built_collective_spec build_collective_spec(const collective_options& o, const option_given& given);

/// The endpoint normalizer of the client: transport::parse_endpoint(h).to_string().
std::string normalize_host(std::string_view host);

}  // namespace meshperf::client
