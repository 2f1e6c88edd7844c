#pragma once
/// Latency–bandwidth model of one path: t(n) = α + n/β (Hockney), fitted to a sweep by
/// weighted least squares on relative error, with a piecewise fit (one break) where a single
/// line fits badly (eager vs rendezvous protocols, MTU steps). Pure arithmetic, no I/O.
///
/// Which points feed the fit:
///  - latency points: t = one-way p50 latency (RTT/2). These are exactly t(n) = α + n/β.
///  - bandwidth points: t = n / rate, the time per message of a stream. A stream keeps many
///    messages in flight, so its per-message time at size 0 is not the path's latency α but
///    a much smaller per-message overhead (the inverse of the peak message rate). The fit
///    therefore gives stream points their own intercept, t = α_stream + n/β, sharing β with
///    the latency points. Forcing one intercept on both would pull α towards the stream
///    overhead and make every sweep that has both tests look like a bad fit.
///  - bidirectional points are left out: their rate is the sum of two directions.
/// With latency points only, α_stream is absent. With bandwidth points only, α is the stream
/// intercept and alpha_source says so (it then underestimates the one-way latency).
#include "core/result.hpp"
#include "core/units.hpp"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshperf::analysis {

/// One observation for the fit: the time to move one message of size_bytes.
struct model_sample {
    std::uint64_t size_bytes = 0;
    double time_s = 0;                    ///< latency: one-way p50; stream: size / rate
    bool stream = false;                  ///< true for a bandwidth (stream) point
    double weight = 1;                    ///< relative weight of this point's relative error
    /// The point's stated precision: 95% CI half-width relative to time_s (0: not known).
    double rel_half_width = 0;
    /// The point's per-block estimates of its figure, in time order (empty: not known):
    /// latency points a time, stream points a rate (which may be 0 for a block in which
    /// nothing arrived). Any unit: only their ratios to their mean are used.
    std::vector<double> block_values;
};

/// Options of the fit.
struct model_options {
    /// A single line whose worst relative residual exceeds this is followed by a piecewise
    /// fit with one break.
    double piecewise_threshold = 0.15;
    /// Refits of the break's stability check (a bootstrap over each point's blocks).
    unsigned refits = 100;
    /// Share of the refits that must place the break within one size step of the full fit.
    double stable_share = 0.8;
    /// Seed of the bootstrap: the same points always give the same model.
    std::uint64_t seed = 1;
};

/// Fewest distinct sizes on each side of a break: two sizes determine a line exactly, so a
/// segment needs a third before its fit says anything.
inline constexpr std::size_t min_segment_sizes = 3;

/// One straight line t(n) = α + n/β over a range of sizes, and how well it fits.
struct line_fit {
    double alpha_s = 0;                   ///< one-way latency at size 0, seconds
    std::optional<double> stream_alpha_s; ///< per-message time at size 0 in a stream, seconds
    double beta_bytes_per_s = 0;          ///< asymptotic bandwidth, bytes per second (> 0)
    std::string alpha_source = "latency"; ///< "latency", or "bandwidth" when no latency points
    double r_squared = 0;                 ///< weighted (1/t²) coefficient of determination
    double worst_rel_residual = 0;        ///< max |t_fit − t| / t over the points
    std::uint64_t worst_size_bytes = 0;   ///< size of the point with that residual
    bool worst_is_stream = false;         ///< whether that point is a stream point
    std::size_t points = 0;               ///< points fitted
    std::uint64_t min_size_bytes = 0;     ///< smallest size fitted
    std::uint64_t max_size_bytes = 0;     ///< largest size fitted
    std::size_t parameters = 2;           ///< fitted parameters: α, β, and α_stream with stream points
    /// Too few points for the quality figures to mean anything: fewer than three distinct
    /// sizes, or no more points than parameters. A line through such points fits them
    /// exactly whatever the path does; r_squared and worst_rel_residual are then not
    /// reported (JSON null).
    bool underdetermined = false;

    double alpha_us() const { return alpha_s * 1e6; }
    double beta_gbit_per_s() const { return core::gbit_from_bytes_per_s_by_factor(beta_bytes_per_s); }
    double beta_gbyte_per_s() const { return core::gbyte_from_bytes_per_s_by_factor(beta_bytes_per_s); }
    /// n½ = α·β: the size at which one message reaches half of β, in bytes.
    double n_half_bytes() const { return alpha_s * beta_bytes_per_s; }
    /// One-way time of one message of n bytes, seconds.
    double time_s(double n_bytes) const { return alpha_s + n_bytes / beta_bytes_per_s; }
};

/// The evidence that a break is real, not scatter (see fit_model).
struct break_evidence {
    /// Share of the line's weighted squared error that the break removes (0..1).
    double explained_share = 0;
    /// Drop in χ² (residuals in units of the points' stated precision) from the line to the
    /// two segments, and the 99% critical value for the extra parameters; empty when fewer
    /// than four points state their precision.
    std::optional<double> chi2_drop, chi2_critical;
    /// Share of the bootstrap refits (over each point's blocks, or its stated precision
    /// where it has no blocks) that place the break within one size step of this one;
    /// empty when no point carries blocks or a precision to resample.
    std::optional<double> stable_share;
    unsigned refits = 0;                  ///< refits behind stable_share
};

/// Two lines joined at a break between two adjacent measured sizes.
struct piecewise_fit {
    line_fit below;                       ///< sizes <= break_after_bytes
    line_fit above;                       ///< sizes >= break_before_bytes
    std::uint64_t break_after_bytes = 0;  ///< largest size of the lower segment
    std::uint64_t break_before_bytes = 0; ///< smallest size of the upper segment
    double r_squared = 0;                 ///< over all points, each by its own segment
    double worst_rel_residual = 0;
    std::uint64_t worst_size_bytes = 0;
    break_evidence evidence;              ///< why the break was accepted

    /// The segment that describes messages of n bytes (the boundary is the geometric mean
    /// of the two sizes at the break).
    const line_fit& segment_for(double n_bytes) const;
};

/// β may exceed the fastest measured bandwidth point by this share, or by that point's
/// stated precision where it is larger, before the fit says its β is not measured.
inline constexpr double min_beta_tolerance = 0.05;

/// The fit's β against what the bandwidth (stream) points measured. A stream's rate never
/// exceeds the path's β, so a β well above every stream point was not measured: it comes
/// from latency points that ran faster than the streams, e.g. a token bucket's burst
/// speeding single ping-pong messages (measured on a 200 Mbit/s tbf link: β 0.306 Gbit/s, streams 0.191).
struct beta_check {
    double beta_gbit_per_s = 0;             ///< the fitted β of the line for the largest sizes (the upper segment when piecewise)
    double measured_gbit_per_s = 0;         ///< the fastest bandwidth point, Gbit/s
    std::uint64_t measured_size_bytes = 0;  ///< its size
    double tolerance = min_beta_tolerance;  ///< relative: the larger of min_beta_tolerance and that point's stated precision
    /// with_measured_beta replaced the fitted β by measured_gbit_per_s.
    bool replaced = false;
    /// β > measured × (1 + tolerance).
    bool exceeds() const { return beta_gbit_per_s > measured_gbit_per_s * (1 + tolerance); }
    /// One line: what is wrong and what was done, e.g. "β 0.306 Gbit/s is 60% above the fastest
    /// bandwidth point (0.191 Gbit/s at 1 MiB), more than the 5% its precision allows: ...".
    std::string message() const;
};

/// The model of one path.
struct model_fit {
    line_fit line;                        ///< one line over all points
    /// Set when line.worst_rel_residual > threshold and a break passes every test of
    /// fit_model (it explains the misfit, beyond the points' precision, stably).
    std::optional<piecewise_fit> piecewise;
    double piecewise_threshold = 0.15;    ///< the threshold that was applied
    /// Why no break is reported although one line fits badly (empty otherwise).
    std::string piecewise_rejected;
    /// β against the bandwidth points; empty when the fit had none.
    std::optional<beta_check> beta_measured;

    /// True when β exceeds every measured bandwidth by more than its tolerance.
    bool beta_unmeasured() const { return beta_measured && beta_measured->exceeds(); }

    /// True when the single line fits within the threshold.
    bool line_fits() const { return line.worst_rel_residual <= piecewise_threshold; }
    /// The line that describes messages of n bytes: the piecewise segment when there is one.
    const line_fit& line_for(double n_bytes) const;
    /// Predicted one-way time of one message of n bytes, seconds.
    double time_s(double n_bytes) const { return line_for(n_bytes).time_s(n_bytes); }
};

/// The fit's inputs from a run: latency points (one-way p50) and bandwidth points (size /
/// rate), each with its stated precision and block estimates where the result has them;
/// bidirectional points and points without figures are skipped.
std::vector<model_sample> model_samples(const core::run_result&);

/// Fits the model. Throws core::spec_error when there are fewer than two distinct sizes, when a
/// time or size is not positive and finite, or when the times do not grow with size (β
/// cannot be determined: sweep up to larger messages).
///
/// When one line fits badly, the best single break (at least min_segment_sizes sizes on
/// each side) is reported only when it passes every test that has data:
///  1. it explains the misfit: the two segments' worst residual is within the threshold,
///     or they remove at least 75% of the line's weighted squared error;
///  2. the improvement exceeds what the points' stated precision explains: the drop in χ²
///     (relative residuals over each point's standard error, half-width / 1.96) exceeds
///     the 99% point of χ² with the extra parameters' degrees of freedom;
///  3. it is stable: in opt.refits bootstrap refits (each point rescaled by a resample of
///     its blocks, or by its stated precision where it has no blocks) at least
///     opt.stable_share of them place the break within one size step of it.
/// Otherwise piecewise_rejected says which test failed.
model_fit fit_model(std::span<const model_sample> samples, const model_options& = {});
/// Same, from the points of a run.
model_fit fit_model(const core::run_result&, const model_options& = {});

/// The model to predict with: `m` as it is, unless its β exceeds every measured bandwidth
/// (beta_unmeasured()); then every line whose β is above the fastest bandwidth point gets that
/// point's rate as β, and beta_measured->replaced says so. `meshperf plan --from` and
/// `collective --predict --model` predict with this (docs/capacity-planning.md).
model_fit with_measured_beta(model_fit m);

/// Fits one line to all samples (no piecewise step). Throws as fit_model.
line_fit fit_line(std::span<const model_sample> samples);

/// JSON form: α in µs, β in Gbit/s and GB/s, n½ in bytes, quality figures (null when the
/// line is underdetermined, with "underdetermined": true), the piecewise fit with its
/// evidence or null, "piecewise_rejected" (why there is no break, or null), "beta_check"
/// (β against the bandwidth points, or null) and "warnings" (lines; the β check's message
/// when β exceeds them). from_json
/// reads back what to_json wrote, and documents written before these fields existed
/// (derived figures are recomputed); it throws core::spec_error on missing or malformed fields.
nlohmann::json to_json(const line_fit&);
nlohmann::json to_json(const break_evidence&);
nlohmann::json to_json(const model_fit&);
line_fit line_fit_from_json(const nlohmann::json&);
model_fit model_fit_from_json(const nlohmann::json&);

/// One line of text: "α 12.3 µs, β 94.1 Gbit/s (11.8 GB/s), n½ 145 KiB, R² 0.998, worst
/// residual 3.1% at 4 KiB", plus the break when the fit is piecewise.
std::string describe(const model_fit&);

}  // namespace meshperf::analysis
