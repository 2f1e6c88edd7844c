#include "analysis/model.hpp"

#include "core/error.hpp"
#include "core/figure_text.hpp"
#include "core/sizes.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

namespace meshperf::analysis {

using nlohmann::json;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// Unknowns of the fit: latency intercept, stream intercept, inverse bandwidth (s/byte).
enum : std::size_t { p_alpha = 0, p_stream_alpha = 1, p_inv_beta = 2, n_params = 3 };

// Each point's relative residual is (t_fit − t)/t = row·θ − 1 with row = [lat, stream, n]/t,
// so weighted least squares on relative error is ordinary least squares on these rows
// scaled by sqrt(weight) against a right-hand side of sqrt(weight).
struct system_row {
    std::array<double, n_params> a{};
    double sqrt_w = 1;
};

system_row row_of(const model_sample& s) {
    system_row r;
    const double inv_t = 1.0 / s.time_s;
    r.a[s.stream ? p_stream_alpha : p_alpha] = inv_t;
    r.a[p_inv_beta] = static_cast<double>(s.size_bytes) * inv_t;
    r.sqrt_w = std::sqrt(s.weight);
    return r;
}

// Least squares over the columns marked free (the others are fixed at 0), by Householder QR
// on column-scaled data (sizes span 1 B .. 1 GiB, so the columns differ by many orders of
// magnitude). Returns false when the free columns are (nearly) linearly dependent.
bool least_squares(std::span<const system_row> rows, std::array<bool, n_params> free,
                   std::array<double, n_params>& theta) {
    std::array<std::size_t, n_params> col{};
    std::size_t k = 0;
    for (std::size_t j = 0; j < n_params; ++j)
        if (free[j]) col[k++] = j;
    const std::size_t m = rows.size();
    if (k == 0 || m < k) return false;

    std::vector<double> a(m * k), b(m);
    std::array<double, n_params> scale{};
    for (std::size_t c = 0; c < k; ++c) {
        double norm = 0;
        for (std::size_t i = 0; i < m; ++i) {
            const double v = rows[i].a[col[c]] * rows[i].sqrt_w;
            norm += v * v;
        }
        norm = std::sqrt(norm);
        if (!(norm > 0)) return false;
        scale[c] = norm;
        for (std::size_t i = 0; i < m; ++i) a[i * k + c] = rows[i].a[col[c]] * rows[i].sqrt_w / norm;
    }
    for (std::size_t i = 0; i < m; ++i) b[i] = rows[i].sqrt_w;

    for (std::size_t c = 0; c < k; ++c) {
        double norm = 0;
        for (std::size_t i = c; i < m; ++i) norm += a[i * k + c] * a[i * k + c];
        norm = std::sqrt(norm);
        if (norm < 1e-10) return false;  // columns are unit length: this is rank deficiency
        const double alpha = a[c * k + c] > 0 ? -norm : norm;
        std::vector<double> v(m - c);
        for (std::size_t i = c; i < m; ++i) v[i - c] = a[i * k + c];
        v[0] -= alpha;
        double vnorm2 = 0;
        for (double x : v) vnorm2 += x * x;
        if (vnorm2 > 0) {
            for (std::size_t cc = c; cc < k; ++cc) {
                double dot = 0;
                for (std::size_t i = c; i < m; ++i) dot += v[i - c] * a[i * k + cc];
                const double f = 2 * dot / vnorm2;
                for (std::size_t i = c; i < m; ++i) a[i * k + cc] -= f * v[i - c];
            }
            double dot = 0;
            for (std::size_t i = c; i < m; ++i) dot += v[i - c] * b[i];
            const double f = 2 * dot / vnorm2;
            for (std::size_t i = c; i < m; ++i) b[i] -= f * v[i - c];
        }
    }
    std::array<double, n_params> y{};
    for (std::size_t c = k; c-- > 0;) {
        double s = b[c];
        for (std::size_t cc = c + 1; cc < k; ++cc) s -= a[c * k + cc] * y[cc];
        y[c] = s / a[c * k + c];
    }
    theta = {};
    for (std::size_t c = 0; c < k; ++c) theta[col[c]] = y[c] / scale[c];
    return std::all_of(theta.begin(), theta.end(), [](double v) { return std::isfinite(v); });
}

double weighted_sse(std::span<const system_row> rows, const std::array<double, n_params>& theta) {
    double sse = 0;
    for (const auto& r : rows) {
        double fit = 0;
        for (std::size_t j = 0; j < n_params; ++j) fit += r.a[j] * theta[j];
        const double e = (fit - 1) * r.sqrt_w;
        sse += e * e;
    }
    return sse;
}

// Fit of one set of samples, with the constraints α ≥ 0, α_stream ≥ 0, 1/β ≥ 0. The problem
// is convex, so the constrained optimum is the best feasible optimum over the faces where
// some intercepts are held at zero (at most four small solves).
struct raw_fit {
    std::array<double, n_params> theta{};
    double sse = inf;
    bool has_latency = false, has_stream = false;
};

std::optional<raw_fit> solve_constrained(std::span<const model_sample> samples) {
    raw_fit best;
    std::vector<system_row> rows;
    rows.reserve(samples.size());
    for (const auto& s : samples) {
        rows.push_back(row_of(s));
        (s.stream ? best.has_stream : best.has_latency) = true;
    }
    bool found = false;
    for (int mask = 0; mask < 4; ++mask) {
        const bool alpha_free = best.has_latency && (mask & 1) == 0;
        const bool stream_free = best.has_stream && (mask & 2) == 0;
        if (!best.has_latency && (mask & 1)) continue;  // same face as mask without the bit
        if (!best.has_stream && (mask & 2)) continue;
        for (bool slope_free : {true, false}) {
            std::array<double, n_params> theta{};
            if (!least_squares(rows, {alpha_free, stream_free, slope_free}, theta)) continue;
            if (theta[p_alpha] < 0 || theta[p_stream_alpha] < 0 || theta[p_inv_beta] < 0) continue;
            const double sse = weighted_sse(rows, theta);
            if (sse < best.sse) {
                best.theta = theta;
                best.sse = sse;
                found = true;
            }
        }
    }
    if (!found) return std::nullopt;
    return best;
}

struct quality {
    double sse = 0, sst = 0, worst = 0;
    std::uint64_t worst_size = 0;
    bool worst_stream = false;
};

double predict(const line_fit& l, const model_sample& s) {
    const double a = s.stream ? l.stream_alpha_s.value_or(l.alpha_s) : l.alpha_s;
    return a + static_cast<double>(s.size_bytes) / l.beta_bytes_per_s;
}

// Accumulates residuals of samples against a line; sst needs the weighted mean of t under
// weights w/t² (the weights of relative error).
void add_quality(quality& q, const line_fit& l, std::span<const model_sample> samples, double t_mean) {
    for (const auto& s : samples) {
        const double rel = (predict(l, s) - s.time_s) / s.time_s;
        const double dev = (s.time_s - t_mean) / s.time_s;
        q.sse += s.weight * rel * rel;
        q.sst += s.weight * dev * dev;
        if (std::fabs(rel) > q.worst) {
            q.worst = std::fabs(rel);
            q.worst_size = s.size_bytes;
            q.worst_stream = s.stream;
        }
    }
}

double weighted_mean_time(std::span<const model_sample> samples) {
    double num = 0, den = 0;
    for (const auto& s : samples) {
        const double w = s.weight / (s.time_s * s.time_s);
        num += w * s.time_s;
        den += w;
    }
    return num / den;
}

double r_squared_of(const quality& q) {
    if (q.sst <= 0) return q.sse <= 0 ? 1.0 : 0.0;
    return 1 - q.sse / q.sst;
}

std::size_t distinct_sizes(std::span<const model_sample> samples) {
    std::vector<std::uint64_t> sizes;
    for (const auto& s : samples) sizes.push_back(s.size_bytes);
    std::sort(sizes.begin(), sizes.end());
    return static_cast<std::size_t>(std::unique(sizes.begin(), sizes.end()) - sizes.begin());
}

// Fits a line; returns nullopt when no feasible solution exists. allow_flat accepts 1/β = 0
// (β = ∞: no size dependence in this range), which only a piecewise segment may have.
std::optional<line_fit> try_fit_line(std::span<const model_sample> samples, bool allow_flat) {
    auto raw = solve_constrained(samples);
    if (!raw) return std::nullopt;
    if (!(raw->theta[p_inv_beta] > 0) && !allow_flat) return std::nullopt;
    line_fit l;
    l.beta_bytes_per_s = raw->theta[p_inv_beta] > 0 ? 1.0 / raw->theta[p_inv_beta] : inf;
    if (raw->has_latency) {
        l.alpha_s = raw->theta[p_alpha];
        l.alpha_source = "latency";
    } else {
        l.alpha_s = raw->theta[p_stream_alpha];
        l.alpha_source = "bandwidth";
    }
    if (raw->has_stream) l.stream_alpha_s = raw->theta[p_stream_alpha];
    quality q;
    add_quality(q, l, samples, weighted_mean_time(samples));
    l.r_squared = r_squared_of(q);
    l.worst_rel_residual = q.worst;
    l.worst_size_bytes = q.worst_size;
    l.worst_is_stream = q.worst_stream;
    l.points = samples.size();
    l.min_size_bytes = ~0ull;
    for (const auto& s : samples) {
        l.min_size_bytes = std::min(l.min_size_bytes, s.size_bytes);
        l.max_size_bytes = std::max(l.max_size_bytes, s.size_bytes);
    }
    l.parameters = (raw->has_latency ? 1u : 0u) + (raw->has_stream ? 1u : 0u) + 1u;
    l.underdetermined = distinct_sizes(samples) < 3 || samples.size() <= l.parameters;
    return l;
}

void check_samples(std::span<const model_sample> samples) {
    for (const auto& s : samples) {
        if (s.size_bytes == 0)
            throw core::spec_error("model: a point has size 0; every message size must be at least 1 byte");
        if (!std::isfinite(s.time_s) || s.time_s <= 0)
            throw core::spec_error(fmt::format("model: the point at {} has time {} s; times must be positive and finite",
                                         core::format_size(s.size_bytes), s.time_s));
        if (!std::isfinite(s.weight) || s.weight <= 0)
            throw core::spec_error(fmt::format("model: the point at {} has weight {}; weights must be positive",
                                         core::format_size(s.size_bytes), s.weight));
    }
    if (distinct_sizes(samples) < 2)
        throw core::spec_error(fmt::format(
            "model: the fit needs points at two or more message sizes, got {} point(s) at {} size(s); "
            "sweep a range of sizes (e.g. --sizes 1..4M)",
            samples.size(), distinct_sizes(samples)));
}

// The best single break, and where it lies among the distinct sizes.
struct break_candidate {
    piecewise_fit fit;
    std::size_t index = 0;  // distinct-size index of break_after_bytes
    double sse = inf;       // weighted squared relative error of both segments
};

std::vector<model_sample> sorted_by_size(std::span<const model_sample> in) {
    std::vector<model_sample> samples(in.begin(), in.end());
    std::stable_sort(samples.begin(), samples.end(),
                     [](const model_sample& a, const model_sample& b) { return a.size_bytes < b.size_bytes; });
    return samples;
}

// samples must be sorted by size. Each segment holds at least min_segment_sizes distinct
// sizes and more points than parameters, so neither is fitted exactly by construction.
std::optional<break_candidate> fit_piecewise(std::span<const model_sample> samples) {
    std::vector<std::size_t> starts;  // index of the first sample of each distinct size
    for (std::size_t i = 0; i < samples.size(); ++i)
        if (i == 0 || samples[i].size_bytes != samples[i - 1].size_bytes) starts.push_back(i);
    const std::size_t m = starts.size();
    if (m < 2 * min_segment_sizes) return std::nullopt;

    std::optional<break_candidate> best;
    const double t_mean = weighted_mean_time(samples);
    // Break after distinct size k: the lower segment holds sizes 0..k, the upper k+1..m−1.
    for (std::size_t k = min_segment_sizes - 1; k + min_segment_sizes < m; ++k) {
        const std::size_t split = starts[k + 1];
        auto lo = try_fit_line(samples.first(split), true);
        auto hi = try_fit_line(samples.subspan(split), true);
        if (!lo || !hi || lo->underdetermined || hi->underdetermined) continue;
        quality q;
        add_quality(q, *lo, samples.first(split), t_mean);
        add_quality(q, *hi, samples.subspan(split), t_mean);
        if (!best || q.sse < best->sse) {
            break_candidate c;
            c.fit.below = *lo;
            c.fit.above = *hi;
            c.fit.break_after_bytes = samples[starts[k]].size_bytes;
            c.fit.break_before_bytes = samples[split].size_bytes;
            c.fit.r_squared = r_squared_of(q);
            c.fit.worst_rel_residual = q.worst;
            c.fit.worst_size_bytes = q.worst_size;
            c.index = k;
            c.sse = q.sse;
            best = c;
        }
    }
    return best;
}

double predict_piecewise(const piecewise_fit& p, const model_sample& s) {
    return predict(p.segment_for(static_cast<double>(s.size_bytes)), s);
}

// χ² of relative residuals in units of each point's standard error (stated half-width /
// 1.96, at least 0.01%), over the points that state a precision.
template <class Predict>
double chi2_of(std::span<const model_sample> samples, Predict&& predict_time) {
    double chi2 = 0;
    for (const auto& s : samples) {
        if (!(s.rel_half_width > 0) || !std::isfinite(s.rel_half_width)) continue;
        const double sigma = std::max(s.rel_half_width / 1.959964, 1e-4);
        const double rel = (predict_time(s) - s.time_s) / s.time_s;
        chi2 += (rel / sigma) * (rel / sigma);
    }
    return chi2;
}

// 99% points of χ² for 1..8 degrees of freedom.
double chi2_critical_99(std::size_t dof) {
    static constexpr double table[] = {0, 6.635, 9.210, 11.345, 13.277, 15.086, 16.812, 18.475, 20.090};
    return table[std::clamp<std::size_t>(dof, 1, 8)];
}

bool has_blocks(const model_sample& s) { return s.block_values.size() >= core::min_blocks_to_assess; }
bool has_precision(const model_sample& s) { return s.rel_half_width > 0 && std::isfinite(s.rel_half_width); }

// One bootstrap replicate: each point rescaled by the ratio of a resampled block mean to its
// block mean (for a stream, whose blocks are rates, the inverse ratio), or by a normal draw
// from its stated precision; points with neither stay put.
std::vector<model_sample> replicate(std::span<const model_sample> samples, std::mt19937_64& rng) {
    std::vector<model_sample> out(samples.begin(), samples.end());
    std::normal_distribution<double> normal(0.0, 1.0);
    for (auto& s : out) {
        if (has_blocks(s)) {
            const auto& b = s.block_values;
            std::uniform_int_distribution<std::size_t> pick(0, b.size() - 1);
            double sum = 0, resampled = 0;
            for (double v : b) sum += v;
            for (std::size_t i = 0; i < b.size(); ++i) resampled += b[pick(rng)];
            if (sum > 0 && resampled > 0) s.time_s *= s.stream ? sum / resampled : resampled / sum;
        } else if (has_precision(s)) {
            s.time_s *= std::max(0.05, 1.0 + normal(rng) * s.rel_half_width / 1.959964);
        }
        s.block_values.clear();
    }
    return out;
}

// Share of bootstrap refits whose best break lies within one distinct size of `index`
// (a refit where one line fits, or no break can be fitted, disagrees).
double stable_share(std::span<const model_sample> sorted, std::size_t index, const model_options& opt) {
    std::mt19937_64 rng(opt.seed);
    unsigned agree = 0;
    for (unsigned r = 0; r < opt.refits; ++r) {
        const auto rep = replicate(sorted, rng);
        const auto line = try_fit_line(rep, false);
        if (!line || line->worst_rel_residual <= opt.piecewise_threshold) continue;
        const auto c = fit_piecewise(rep);
        if (c && (c->index + 1 >= index && c->index <= index + 1)) ++agree;
    }
    return opt.refits ? static_cast<double>(agree) / opt.refits : 0.0;
}

// Share of the line's weighted squared error a break must remove to count as explaining it.
constexpr double min_explained_share = 0.75;

// Decides whether the best break is real; fills m.piecewise or m.piecewise_rejected.
void judge_break(model_fit& m, std::span<const model_sample> input, const model_options& opt) {
    const auto samples = sorted_by_size(input);
    auto cand = fit_piecewise(samples);
    if (!cand) {
        m.piecewise_rejected = fmt::format("too few sizes for a break: each side needs {} sizes", min_segment_sizes);
        return;
    }
    auto& ev = cand->fit.evidence;
    quality line_q;
    add_quality(line_q, m.line, samples, weighted_mean_time(samples));
    ev.explained_share = line_q.sse > 0 ? std::clamp(1.0 - cand->sse / line_q.sse, 0.0, 1.0) : 0.0;
    const auto where = fmt::format("the best break (between {} and {})", core::format_size(cand->fit.break_after_bytes),
                                   core::format_size(cand->fit.break_before_bytes));
    if (cand->fit.worst_rel_residual > m.piecewise_threshold && ev.explained_share < min_explained_share) {
        m.piecewise_rejected = fmt::format("{} explains only {:.0f}% of the misfit and leaves a {:.0f}% residual: the points scatter "
                                           "rather than follow two lines",
                                           where, ev.explained_share * 100, cand->fit.worst_rel_residual * 100);
        return;
    }
    const auto stated = static_cast<std::size_t>(std::count_if(samples.begin(), samples.end(), has_precision));
    if (stated >= 4) {
        const auto& f = cand->fit;
        ev.chi2_drop = chi2_of(samples, [&](const model_sample& s) { return predict(m.line, s); }) -
                       chi2_of(samples, [&](const model_sample& s) { return predict_piecewise(f, s); });
        ev.chi2_critical = chi2_critical_99(m.line.parameters + 1);
        if (!(*ev.chi2_drop > *ev.chi2_critical)) {
            m.piecewise_rejected = fmt::format("{} improves the fit by less than the points' stated precision explains "
                                               "(χ² drop {}, 99% point {})",
                                               where, core::plain_number(*ev.chi2_drop, 3), core::plain_number(*ev.chi2_critical, 3));
            return;
        }
    }
    if (std::any_of(samples.begin(), samples.end(), [](const model_sample& s) { return has_blocks(s) || has_precision(s); }) &&
        opt.refits > 0) {
        ev.refits = opt.refits;
        ev.stable_share = stable_share(samples, cand->index, opt);
        if (*ev.stable_share < opt.stable_share) {
            m.piecewise_rejected = fmt::format("{} is not stable: only {:.0f}% of {} refits over the points' blocks place it within "
                                               "one size step (at least {:.0f}% needed)",
                                               where, *ev.stable_share * 100, opt.refits, opt.stable_share * 100);
            return;
        }
    }
    m.piecewise = cand->fit;
}

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// A number that may be absent or null (older documents, or a figure not reported).
std::optional<double> optional_number(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return std::nullopt;
    if (!j.at(key).is_number()) throw core::spec_error(fmt::format("model JSON: field \"{}\" is not a number", key));
    return j.at(key).get<double>();
}

double required_number(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_number())
        throw core::spec_error(fmt::format("model JSON: field \"{}\" is missing or not a number", key));
    return j.at(key).get<double>();
}

}  // namespace

const line_fit& piecewise_fit::segment_for(double n_bytes) const {
    const double boundary = std::sqrt(static_cast<double>(break_after_bytes) * static_cast<double>(break_before_bytes));
    return n_bytes < boundary ? below : above;
}

const line_fit& model_fit::line_for(double n_bytes) const {
    return piecewise ? piecewise->segment_for(n_bytes) : line;
}

std::vector<model_sample> model_samples(const core::run_result& r) {
    std::vector<model_sample> out;
    for (const auto& p : r.points) {
        if (p.size_bytes == 0) continue;
        model_sample s;
        s.size_bytes = p.size_bytes;
        if (p.test == core::test_kind::latency && p.lat_ns && p.lat_ns->p50 > 0) {
            s.time_s = core::seconds_from_ns_by_factor(p.lat_ns->p50);
            s.block_values = p.precision.block_values;  // round-trip ns
        } else if (p.test == core::test_kind::bandwidth && p.gbit_per_s > 0) {
            s.time_s = core::seconds_at_gbit_per_s(static_cast<double>(p.size_bytes), p.gbit_per_s);
            s.stream = true;
            s.block_values = p.precision.block_values;  // Gbit/s
        } else {
            continue;
        }
        // achieved 0 is what fixed-count bandwidth points report: "not measured"
        if (std::isfinite(p.precision.achieved) && p.precision.achieved > 0) s.rel_half_width = p.precision.achieved;
        out.push_back(std::move(s));
    }
    return out;
}

line_fit fit_line(std::span<const model_sample> samples) {
    check_samples(samples);
    auto l = try_fit_line(samples, false);
    if (!l)
        throw core::spec_error(
            "model: the times do not grow with message size, so the bandwidth β cannot be fitted; "
            "sweep up to larger messages (e.g. --sizes 1..4M)");
    return *l;
}

namespace {

/// β of the line that describes the largest sizes against the fastest stream point.
std::optional<beta_check> check_beta(const model_fit& m, std::span<const model_sample> samples) {
    std::optional<beta_check> out;
    double best = 0;
    for (const auto& s : samples) {
        if (!s.stream) continue;
        const double rate = core::gbit_per_s_by_factor(static_cast<double>(s.size_bytes), s.time_s);
        if (!out || rate > best) {
            best = rate;
            out = beta_check{};
            out->measured_gbit_per_s = rate;
            out->measured_size_bytes = s.size_bytes;
            out->tolerance = std::max(min_beta_tolerance, std::isfinite(s.rel_half_width) ? s.rel_half_width : 0.0);
        }
    }
    if (out) out->beta_gbit_per_s = (m.piecewise ? m.piecewise->above : m.line).beta_gbit_per_s();
    return out;
}

}  // namespace

std::string beta_check::message() const {
    const auto beta = std::isfinite(beta_gbit_per_s) ? fmt::format("{} Gbit/s is {:.0f}% above", core::significant_text(beta_gbit_per_s, 3),
                                                                   (beta_gbit_per_s / measured_gbit_per_s - 1) * 100)
                                                     : std::string("is unbounded, above");
    return fmt::format("the fitted β {} the fastest bandwidth point ({} Gbit/s at {}), more than the {:.0f}% its precision allows: "
                       "β was not measured (latency points at large sizes ran faster than the streams: a shaper's burst speeds "
                       "single messages on a shaped link; on loopback a lone message is one memory copy, faster per byte "
                       "than a stream); {}",
                       beta, core::significant_text(measured_gbit_per_s, 3), core::format_size(measured_size_bytes),
                       tolerance * 100,
                       replaced ? fmt::format("predictions use the measured {} Gbit/s instead", core::significant_text(measured_gbit_per_s, 3))
                                : std::string("predictions from it are too fast: plan and collective --predict use the measured "
                                              "bandwidth instead"));
}

model_fit with_measured_beta(model_fit m) {
    if (!m.beta_unmeasured()) return m;
    const double cap = core::bytes_per_s_from_gbit_by_factor(m.beta_measured->measured_gbit_per_s);
    const auto lower = [&](line_fit& l) {
        if (!(l.beta_bytes_per_s <= cap)) l.beta_bytes_per_s = cap;  // also β = ∞ (a flat segment)
    };
    lower(m.line);
    if (m.piecewise) {
        lower(m.piecewise->below);
        lower(m.piecewise->above);
    }
    m.beta_measured->replaced = true;
    return m;
}

model_fit fit_model(std::span<const model_sample> samples, const model_options& opt) {
    if (!(opt.piecewise_threshold > 0) || !std::isfinite(opt.piecewise_threshold))
        throw core::spec_error("model: the piecewise threshold must be a positive fraction (e.g. 0.15)");
    model_fit m;
    m.piecewise_threshold = opt.piecewise_threshold;
    if (!(opt.stable_share >= 0 && opt.stable_share <= 1))
        throw core::spec_error("model: the stable share of refits must be a fraction in [0, 1] (e.g. 0.8)");
    m.line = fit_line(samples);
    // An underdetermined line has no quality figure, so it cannot "fit badly".
    if (!m.line.underdetermined && !m.line_fits()) judge_break(m, samples, opt);
    m.beta_measured = check_beta(m, samples);
    return m;
}

model_fit fit_model(const core::run_result& r, const model_options& opt) {
    const auto samples = model_samples(r);
    return fit_model(samples, opt);
}

json to_json(const line_fit& l) {
    json j;
    j["alpha_us"] = l.alpha_us();
    j["alpha_source"] = l.alpha_source;
    j["stream_alpha_us"] = l.stream_alpha_s ? json(*l.stream_alpha_s * 1e6) : json(nullptr);
    j["beta_gbit_per_s"] = num_or_null(l.beta_gbit_per_s());
    j["beta_gbyte_per_s"] = num_or_null(l.beta_gbyte_per_s());
    j["n_half_bytes"] = num_or_null(l.n_half_bytes());
    // An underdetermined line passes through its points whatever the path does: its
    // quality figures would be fake, so they are null.
    j["r_squared"] = l.underdetermined ? json(nullptr) : json(l.r_squared);
    j["worst_rel_residual"] = l.underdetermined ? json(nullptr) : json(l.worst_rel_residual);
    j["worst_size_bytes"] = l.worst_size_bytes;
    j["worst_test"] = l.worst_is_stream ? "bandwidth" : "latency";
    j["points"] = l.points;
    j["min_size_bytes"] = l.min_size_bytes;
    j["max_size_bytes"] = l.max_size_bytes;
    j["parameters"] = l.parameters;
    j["underdetermined"] = l.underdetermined;
    return j;
}

json to_json(const break_evidence& e) {
    const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    return {{"explained_share", e.explained_share},
            {"chi2_drop", opt(e.chi2_drop)},
            {"chi2_critical", opt(e.chi2_critical)},
            {"stable_share", opt(e.stable_share)},
            {"refits", e.refits}};
}

json to_json(const model_fit& m) {
    json j = to_json(m.line);
    j["model"] = "t(n) = alpha + n/beta";
    j["piecewise_threshold"] = m.piecewise_threshold;
    j["line_fits"] = m.line_fits();
    if (m.piecewise) {
        const auto& p = *m.piecewise;
        j["piecewise"] = {{"break_after_bytes", p.break_after_bytes},
                          {"break_before_bytes", p.break_before_bytes},
                          {"r_squared", p.r_squared},
                          {"worst_rel_residual", p.worst_rel_residual},
                          {"worst_size_bytes", p.worst_size_bytes},
                          {"below", to_json(p.below)},
                          {"above", to_json(p.above)},
                          {"evidence", to_json(p.evidence)}};
    } else {
        j["piecewise"] = nullptr;
    }
    j["piecewise_rejected"] = m.piecewise_rejected.empty() ? json(nullptr) : json(m.piecewise_rejected);
    j["warnings"] = json::array();
    if (const auto& b = m.beta_measured) {
        j["beta_check"] = {{"beta_gbit_per_s", num_or_null(b->beta_gbit_per_s)},
                           {"measured_gbit_per_s", b->measured_gbit_per_s},
                           {"measured_size_bytes", b->measured_size_bytes},
                           {"tolerance", b->tolerance},
                           {"exceeds", b->exceeds()},
                           {"replaced", b->replaced}};
        if (b->exceeds()) j["warnings"].push_back(b->message());
    } else {
        j["beta_check"] = nullptr;
    }
    return j;
}

line_fit line_fit_from_json(const json& j) {
    line_fit l;
    l.alpha_s = required_number(j, "alpha_us") * 1e-6;
    if (!j.contains("beta_gbit_per_s"))
        throw core::spec_error("model JSON: field \"beta_gbit_per_s\" is missing");
    // null is how to_json writes β = ∞ (a flat piecewise segment)
    l.beta_bytes_per_s = j.at("beta_gbit_per_s").is_null() ? inf : core::bytes_per_s_from_gbit_by_factor(required_number(j, "beta_gbit_per_s"));
    if (!(l.alpha_s >= 0) || !(l.beta_bytes_per_s > 0))
        throw core::spec_error("model JSON: alpha_us must be >= 0 and beta_gbit_per_s > 0");
    l.alpha_source = j.value("alpha_source", "latency");
    if (j.contains("stream_alpha_us") && !j.at("stream_alpha_us").is_null())
        l.stream_alpha_s = required_number(j, "stream_alpha_us") * 1e-6;
    l.underdetermined = j.contains("underdetermined") && j.at("underdetermined").is_boolean() && j.at("underdetermined").get<bool>();
    l.parameters = j.contains("parameters") && j.at("parameters").is_number_unsigned() ? j.at("parameters").get<std::size_t>()
                                                                                        : (l.stream_alpha_s ? 3u : 2u);
    l.r_squared = optional_number(j, "r_squared").value_or(0.0);
    l.worst_rel_residual = optional_number(j, "worst_rel_residual").value_or(0.0);
    l.worst_size_bytes = j.value("worst_size_bytes", std::uint64_t{0});
    l.worst_is_stream = j.value("worst_test", "latency") == "bandwidth";
    l.points = j.value("points", std::size_t{0});
    l.min_size_bytes = j.value("min_size_bytes", std::uint64_t{0});
    l.max_size_bytes = j.value("max_size_bytes", std::uint64_t{0});
    return l;
}

model_fit model_fit_from_json(const json& j) {
    model_fit m;
    m.line = line_fit_from_json(j);
    m.piecewise_threshold = j.value("piecewise_threshold", 0.15);
    if (j.contains("piecewise") && !j.at("piecewise").is_null()) {
        const auto& pj = j.at("piecewise");
        if (!pj.is_object() || !pj.contains("below") || !pj.contains("above"))
            throw core::spec_error("model JSON: \"piecewise\" needs \"below\" and \"above\" segments");
        piecewise_fit p;
        p.below = line_fit_from_json(pj.at("below"));
        p.above = line_fit_from_json(pj.at("above"));
        p.break_after_bytes = static_cast<std::uint64_t>(required_number(pj, "break_after_bytes"));
        p.break_before_bytes = static_cast<std::uint64_t>(required_number(pj, "break_before_bytes"));
        p.r_squared = pj.value("r_squared", 0.0);
        p.worst_rel_residual = pj.value("worst_rel_residual", 0.0);
        p.worst_size_bytes = pj.value("worst_size_bytes", std::uint64_t{0});
        if (pj.contains("evidence") && pj.at("evidence").is_object()) {
            const auto& e = pj.at("evidence");
            p.evidence.explained_share = optional_number(e, "explained_share").value_or(0.0);
            p.evidence.chi2_drop = optional_number(e, "chi2_drop");
            p.evidence.chi2_critical = optional_number(e, "chi2_critical");
            p.evidence.stable_share = optional_number(e, "stable_share");
            p.evidence.refits = e.contains("refits") && e.at("refits").is_number_unsigned() ? e.at("refits").get<unsigned>() : 0u;
        }
        m.piecewise = p;
    }
    if (j.contains("piecewise_rejected") && j.at("piecewise_rejected").is_string())
        m.piecewise_rejected = j.at("piecewise_rejected").get<std::string>();
    if (j.contains("beta_check") && j.at("beta_check").is_object()) {
        const auto& bj = j.at("beta_check");
        beta_check b;
        // null is how to_json writes β = ∞
        b.beta_gbit_per_s = optional_number(bj, "beta_gbit_per_s").value_or(inf);
        b.measured_gbit_per_s = required_number(bj, "measured_gbit_per_s");
        if (!(b.measured_gbit_per_s > 0)) throw core::spec_error("model JSON: beta_check.measured_gbit_per_s must be > 0");
        b.measured_size_bytes = bj.value("measured_size_bytes", std::uint64_t{0});
        b.tolerance = optional_number(bj, "tolerance").value_or(min_beta_tolerance);
        b.replaced = bj.value("replaced", false);
        m.beta_measured = b;
    }
    return m;
}

namespace {

std::string describe_line(const line_fit& l) {
    std::string s = fmt::format("α {} µs{}, ", core::plain_number(l.alpha_us(), 3), l.alpha_source == "latency" ? "" : " (from streams)");
    if (std::isfinite(l.beta_bytes_per_s))
        s += fmt::format("β {}, n½ {}", core::gbit_gbyte_text(l.beta_bytes_per_s, 4),
                         core::format_size(static_cast<std::uint64_t>(std::llround(l.n_half_bytes()))));
    else
        s += "β unbounded (no size dependence)";
    return s;
}

}  // namespace

std::string describe(const model_fit& m) {
    std::string s = describe_line(m.line);
    if (m.line.underdetermined)
        s += fmt::format(", underdetermined ({} points for {} parameters, or fewer than 3 sizes): no quality figure", m.line.points,
                         m.line.parameters);
    else
        s += fmt::format(", R² {:.4f}, worst residual {:.1f}% at {}", m.line.r_squared, m.line.worst_rel_residual * 100,
                         core::format_size(m.line.worst_size_bytes));
    if (m.piecewise) {
        const auto& p = *m.piecewise;
        s += fmt::format("; piecewise, break between {} and {}: below {}; above {}; worst residual {:.1f}%",
                         core::format_size(p.break_after_bytes), core::format_size(p.break_before_bytes), describe_line(p.below),
                         describe_line(p.above), p.worst_rel_residual * 100);
        if (p.evidence.stable_share)
            s += fmt::format(", stable in {:.0f}% of {} refits", *p.evidence.stable_share * 100, p.evidence.refits);
    } else if (!m.piecewise_rejected.empty()) {
        s += "; no break: " + m.piecewise_rejected;
    }
    if (m.beta_unmeasured()) s += "; warning: " + m.beta_measured->message();
    return s;
}

}  // namespace meshperf::analysis
