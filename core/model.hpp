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

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace meshperf::core {

/// One observation for the fit: the time to move one message of size_bytes.
struct model_sample {
    std::uint64_t size_bytes = 0;
    double time_s = 0;                    ///< latency: one-way p50; stream: size / rate
    bool stream = false;                  ///< true for a bandwidth (stream) point
    double weight = 1;                    ///< relative weight of this point's relative error
};

/// Options of the fit.
struct model_options {
    /// A single line whose worst relative residual exceeds this is followed by a piecewise
    /// fit with one break.
    double piecewise_threshold = 0.15;
};

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

    double alpha_us() const { return alpha_s * 1e6; }
    double beta_gbit_per_s() const { return beta_bytes_per_s * 8e-9; }
    double beta_gbyte_per_s() const { return beta_bytes_per_s * 1e-9; }
    /// n½ = α·β: the size at which one message reaches half of β, in bytes.
    double n_half_bytes() const { return alpha_s * beta_bytes_per_s; }
    /// One-way time of one message of n bytes, seconds.
    double time_s(double n_bytes) const { return alpha_s + n_bytes / beta_bytes_per_s; }
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

    /// The segment that describes messages of n bytes (the boundary is the geometric mean
    /// of the two sizes at the break).
    const line_fit& segment_for(double n_bytes) const;
};

/// The model of one path.
struct model_fit {
    line_fit line;                        ///< one line over all points
    std::optional<piecewise_fit> piecewise; ///< set when line.worst_rel_residual > threshold
    double piecewise_threshold = 0.15;    ///< the threshold that was applied

    /// True when the single line fits within the threshold.
    bool line_fits() const { return line.worst_rel_residual <= piecewise_threshold; }
    /// The line that describes messages of n bytes: the piecewise segment when there is one.
    const line_fit& line_for(double n_bytes) const;
    /// Predicted one-way time of one message of n bytes, seconds.
    double time_s(double n_bytes) const { return line_for(n_bytes).time_s(n_bytes); }
};

/// The fit's inputs from a run: latency points (one-way p50) and bandwidth points (size /
/// rate); bidirectional points and points without figures are skipped.
std::vector<model_sample> model_samples(const run_result&);

/// Fits the model. Throws spec_error when there are fewer than two distinct sizes, when a
/// time or size is not positive and finite, or when the times do not grow with size (β
/// cannot be determined: sweep up to larger messages).
model_fit fit_model(std::span<const model_sample> samples, const model_options& = {});
/// Same, from the points of a run.
model_fit fit_model(const run_result&, const model_options& = {});

/// Fits one line to all samples (no piecewise step). Throws as fit_model.
line_fit fit_line(std::span<const model_sample> samples);

/// JSON form: α in µs, β in Gbit/s and GB/s, n½ in bytes, quality figures, and the
/// piecewise fit or null. from_json reads back what to_json wrote (derived figures are
/// recomputed) and throws spec_error on missing or malformed fields.
nlohmann::json to_json(const line_fit&);
nlohmann::json to_json(const model_fit&);
line_fit line_fit_from_json(const nlohmann::json&);
model_fit model_fit_from_json(const nlohmann::json&);

/// One line of text: "α 12.3 µs, β 94.1 Gbit/s (11.8 GB/s), n½ 145 KiB, R² 0.998, worst
/// residual 3.1% at 4 KiB", plus the break when the fit is piecewise.
std::string describe(const model_fit&);

}  // namespace meshperf::core
