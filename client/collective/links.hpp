#pragma once
/// Where `collective --predict` gets the fits of the ring's links (host i -> host i+1, for
/// every rank i): `--model FILE` (a `meshperf matrix --format json` document: each ring
/// link's one-way latency and bandwidth; a `meshperf model --format json` document or a
/// sweep result: one fitted model for every link), or else short pairwise probe sweeps over
/// the ring, each through POST /v1/runs on host i, before the collective runs.
#include "client/collective/predict.hpp"
#include "client/support/daemon_client.hpp"
#include "core/collective/spec.hpp"

#include <functional>
#include <string>
#include <vector>

namespace meshperf::client {

/// The ring links of `hosts` (normalized HOST:PORT): (hosts[i], hosts[i+1 mod p]) for each i.
std::vector<std::pair<std::string, std::string>> ring_links(const std::vector<std::string>& hosts);

/// The fits of the ring of `spec.hosts` from the document `doc` read from `path`. A matrix
/// must hold both figures of every ring link; a model or run document gives one fit for all.
/// Throws client_error(exit_usage) naming the file and what is missing.
prediction_links links_from_document(const nlohmann::json& doc, const std::string& path, const core::collective_spec& spec);

/// Reads `path` (JSON) and calls links_from_document.
prediction_links links_from_file(const std::string& path, const core::collective_spec& spec);

/// Measures every ring link of `spec` as `meshperf matrix` measures a link (short_runs.hpp:
/// an 8 B latency point and a 1 MiB bandwidth point, spec.transport, host memory), run by
/// host i against host i+1, one link after the other; α is the one-way p50 latency, β the
/// bandwidth, as from a matrix (--model). `progress` (may be empty) gets one line per link.
/// A host that cannot be reached throws client_error(exit_unreachable) naming it; a probe
/// that fails or gives no figure throws client_error(exit_run_failed) saying so.
prediction_links probe_ring(const core::collective_spec& spec, const credentials& creds,
                            const std::function<void(const std::string&)>& progress);

}  // namespace meshperf::client
