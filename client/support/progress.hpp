#pragma once
/// Progress of a sweep: one line per measured point with the share done and an estimate of
/// the time left. Arithmetic and formatting only; the command prints (to stderr).
#include "core/run_spec.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace meshperf::client {

/// Seconds one point may take by the spec: warm-up plus the fixed duration or the adaptive
/// time cap, plus core::point_overrun_bound_s (a flow's first bytes, the close on a slow or
/// lossy path) for the stream
/// tests (bandwidth, bidir; a latency point ends after its batch); the largest of the
/// spec's tests. Nullopt when a fixed iteration count sets the length (its time is unknown).
std::optional<double> point_time_bound_s(const core::run_spec&);

/// Points a run of `spec` measures besides its sizes: a latency test of at least
/// core::drift_min_sizes sizes re-measures its first size after every
/// core::drift_reference_every points and after its last (docs/methodology.md, "Drift
/// during a sweep"). Rechecks of points the curve falls from come on top, when needed.
std::size_t reference_point_count(const core::run_spec&);

/// Seconds a whole sweep may take by the spec: each point's and reference reading's bound
/// by its test (as point_time_bound_s), plus point_overhead_s each. Nullopt as for point_time_bound_s.
std::optional<double> sweep_time_bound_s(const core::run_spec&);

/// Time a point takes besides its warm-up and measured time (frames, data streams opened
/// and joined, figures): measured on loopback and a 200 Mbit/s link at 10-40 ms.
inline constexpr double point_overhead_s = 0.05;

/// Seconds a full matrix of `hosts` takes at the least: round_count rounds, each in
/// ceil(pairs_per_round / parallel) waves of pairs, each pair measured both ways one after
/// the other at `link_s` a direction (the sweep bounds of a link's short tests). Before the
/// first round, to say up front what a large full matrix costs.
double full_matrix_floor_s(std::size_t hosts, std::size_t parallel, double link_s);

/// Seconds left after `done` of `total` points took `elapsed_s`: the mean measured time per
/// point so far times the points left; before the first point, `bound_s` times the points
/// left. Nullopt when nothing sensible can be said (no points, no time known); never
/// negative, infinite or NaN.
std::optional<double> estimate_seconds_left(std::size_t done, std::size_t total, double elapsed_s,
                                            std::optional<double> bound_s);

/// Seconds left when `fraction_done` (0..1) of a job took `elapsed_s`, at the same pace.
/// Nullopt before any progress or with a bad clock; never negative, infinite or NaN.
std::optional<double> seconds_left_at(double fraction_done, double elapsed_s);

/// The progress line of a matrix phase counted in steps (rounds, waves): step `k` (1-based)
/// of `of` is running, `done` of its `total` jobs (`unit`: "pairs", "links") have ended,
/// `elapsed_s` since the phase's first step began. The share done is
/// (k − 1 + done/total) / of, and the time left is the time so far at that pace
/// (seconds_left_at): after the first round, the measured time per round times the rounds
/// left. E.g. "matrix: round 3 of 15, pairs done 4/8 (16%, about 40 s left)"; "done" at 100%.
/// Plain text, no escape sequence.
std::string phase_progress_line(const std::string& what, std::size_t k, std::size_t of, const std::string& unit,
                                std::size_t done, std::size_t total, double elapsed_s);

/// "under a second", "about 40 s", "about 3 min", "about 1 h 5 min": a rounded duration.
std::string about_duration(double seconds);

/// The progress line of point `index` (1-based) of `total`: `point_line` (the point as
/// client/render/table.hpp's point_progress_line prints it, "[  3/16] latency ...") with the
/// share done after its "[  3/16]" and the time left at its end, e.g.
/// "[  3/16]  18%  latency        64 B  p50 12.3 µs  about 40 s left";
/// the last point reads "100%" and "done in 52 s". Plain text: no carriage return or
/// escape sequence, so it suits logs as well as terminals.
std::string progress_line(std::string point_line, std::size_t index, std::size_t total, double elapsed_s,
                          std::optional<double> bound_s);

}  // namespace meshperf::client
