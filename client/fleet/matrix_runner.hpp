#pragma once
/// The fleet orchestrator of `meshperf matrix`: measures links between daemons on bounded
/// threads (a round of disjoint pairs, or a wave of disjoint links, at a time), keeps the
/// figures of each link compact, marks daemons that do not answer down, and judges what it
/// measured. What runs in which round is decided by its callers (run_matrix, run_triage)
/// from analysis/matrix_schedule and analysis/triage_schedule.
#include "analysis/link_store.hpp"
#include "analysis/matrix_schedule.hpp"
#include "analysis/outliers.hpp"
#include "analysis/rail_planes.hpp"
#include "analysis/triage_schedule.hpp"
#include "client/fleet/matrix_rails.hpp"
#include "client/fleet/matrix_settings.hpp"
#include "client/fleet/phase_progress.hpp"
#include "client/support/connection_pool.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/topology_file.hpp"
#include "core/result.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace meshperf::client {

/// How long a daemon may take to answer the matrix's /v1/info probe (before the rounds, and
/// of a peer after a failed run) before it is marked down: a live daemon answers in
/// milliseconds; a frozen one (SIGSTOP) accepts the connection and says nothing.
inline constexpr std::chrono::seconds matrix_probe_timeout{5};

/// Measures the links of a matrix between the daemons `names` and keeps what it measured.
/// Rounds, waves and retests run their links on up to `max_parallel` threads at once.
class matrix_runner {
public:
    /// Keeps up to `idle_connections` connections to daemons open between calls, so every
    /// round reuses them (one connect and TLS handshake per daemon, not per link). Keeps a
    /// reference to `o`, which must outlive it.
    matrix_runner(const matrix_settings& o, std::vector<std::string> names, credentials creds, std::size_t idle_connections);

    /// Asks every daemon for /v1/info at once (each within matrix_probe_timeout); those that
    /// do not answer are down from the start. Refused credentials end the matrix: throws the
    /// first auth_refused (every daemon would refuse the same token).
    void probe_hosts();
    /// Measures every ordered pair, a round of disjoint pairs at a time (analysis/matrix_schedule).
    void run_schedule();
    /// Retests the reachable bad links once; returns how many rounds that took.
    std::size_t retest(const analysis::matrix_analysis& a);
    /// Measures `links` (disjoint: no host in two) all at once, at most max_parallel at a
    /// time, as step k of `of` of the phase `what`; with `retest` each replaces the link's
    /// earlier figures.
    void run_links(const std::vector<analysis::directed_link>& links, const char* what, std::size_t k, std::size_t of, bool retest);

    /// Every link measured so far judged with the outlier rules (analysis/outliers), the
    /// daemons that were down named.
    analysis::matrix_analysis analyze() const;
    /// With --rails, the rails across the matrix (analysis/rail_planes), with the hosts'
    /// groups when `topo` is given (rail uplinks); empty otherwise.
    std::optional<analysis::rail_fleet_verdict> judge_rails(const std::optional<topology>& topo) const;

    /// The links measured, compact (analysis/link_store).
    const analysis::link_store& links() const { return links_; }
    /// The hosts, as given.
    const std::vector<std::string>& names() const { return names_; }
    /// How many links were measured (reachable).
    std::size_t measured_links() const { return links_.reachable(); }
    /// Clears the progress display's line.
    void end_progress() const { progress_.end(); }
    /// The connections to daemons opened and the requests sent over them so far.
    connection_pool::totals connections() const { return pool_->counts(); }

private:
    /// One link's measurement before it is stored.
    struct link_reading {
        analysis::link_sample sample;
        std::vector<std::string> run_ids;
        std::vector<analysis::rail_observation> rails;  // with --rails, for the planes' verdict
    };

    static void fail(analysis::link_sample& s, std::string why);
    void mark_down(std::size_t h, const std::string& why);
    void probe_peer(std::size_t h);
    bool is_down(std::size_t h);
    void run_round(const std::vector<analysis::host_pair>& pairs, const char* what, std::size_t k, std::size_t of, bool retest);
    void measure(std::size_t from, std::size_t to, bool retest);
    std::vector<core::run_result> run_link(std::size_t from, std::size_t to, link_reading& l);
    void judge_link(std::size_t from, std::size_t to, const std::vector<core::run_result>& runs, link_reading& l);

    const matrix_settings& o_;
    std::vector<std::string> names_;  // as given
    std::vector<std::string> addrs_;  // normalised host:port, as the initiating daemon reaches them
    credentials creds_;
    std::shared_ptr<connection_pool> pool_;
    matrix_rails rails_{o_, names_};
    phase_progress progress_;
    std::mutex m_;
    std::vector<bool> down_;
    std::map<std::size_t, std::string> down_why_;
    analysis::link_store links_;
    analysis::rail_cells rail_cells_;
    std::set<std::pair<std::size_t, std::size_t>> retest_links_;
};

}  // namespace meshperf::client
