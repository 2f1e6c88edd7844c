#pragma once
/// Text pieces of `meshperf matrix`'s table and summary that depend on which rule of a link
/// was broken: a cell's bad mark (only in the table of the figure that was bad), what a
/// retest confirmed (only the rules the first measurement broke too), and what the links
/// were judged against. Pure, no I/O.
#include "analysis/outliers.hpp"
#include "analysis/triage_verdict.hpp"
#include "client/support/topology_file.hpp"

#include <optional>
#include <span>
#include <string>

namespace meshperf::client {

/// Which of a link's figures a matrix table shows.
enum class matrix_figure { bandwidth, latency };

/// A cell of the table of `figure`: `text`, with "*" when that figure broke its rule (a link
/// slow in bandwidth is not marked in the latency table, nor the other way round).
std::string matrix_cell(const std::string& text, const analysis::link_verdict& v, matrix_figure figure);

/// What a retest says of a bad link, to follow its reason (empty when it was not retested;
/// `first` holds the figures before the retest): " (confirmed by a retest)" when the first
/// measurement broke every rule the retest broke, else each rule said on its own, e.g.
/// " (bandwidth confirmed by a retest; latency bad in the retest only)". The first figures
/// are judged against `a`'s references, as the retest's are.
std::string retest_note(const analysis::link_verdict& now, const std::optional<analysis::link_sample>& first,
                        const analysis::matrix_analysis& a);

/// The summary's lines on the medians and on what the links were judged against; with
/// analysis::small_matrix_hosts hosts or fewer, why that is the better half's median.
std::string matrix_reference_text(const analysis::matrix_analysis& a);

/// What explains bad link i, to follow its reason: " [host H]" (a suspect end), " [uplink of
/// KEY=GROUP]", or "" (nothing: the link itself). `topo` names the groups (may be null).
std::string cause_note(const analysis::group_verdict& v, std::size_t i, std::span<const std::string> names,
                       const topology* topo);

/// "bad links: N" and, with causes, how many each explains: "(8 explained by suspect
/// hosts, 36 by slow uplinks, 1 on its own)".
std::string bad_links_heading(std::size_t bad, const analysis::group_verdict* v, std::span<const std::size_t> bad_indices);

/// "slow uplinks: ..." naming each bad uplink with its cross-group and in-group tallies and
/// medians ("none" when none is bad).
std::string uplink_lines(const analysis::group_verdict& v, const topology& topo);

/// The per group pair table: from, to, links, bad, median Gbit/s.
std::string group_pair_table(const analysis::group_verdict& v, const topology& topo);

}  // namespace meshperf::client
