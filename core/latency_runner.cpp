#include "core/latency_runner.hpp"

#include "core/stats.hpp"

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace meshperf::core {
namespace {

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); }

constexpr std::size_t batch_size = 500;
constexpr std::size_t min_samples = 1000;
constexpr std::size_t warm_batch = 10;   // round trips per warm-up batch, and the handful warm-up wants

/// Round trips of `per_rtt_s` seconds each that fit in `seconds`, at most `most` (0 when not
/// even one fits; `most` when no time per round trip is known yet).
std::size_t round_trips_within(double seconds, double per_rtt_s, std::size_t most) {
    if (!(per_rtt_s > 0)) return most;
    if (!(seconds > 0)) return 0;
    const double n = std::floor(seconds / per_rtt_s);
    return n >= static_cast<double>(most) ? most : static_cast<std::size_t>(n);
}

/// Runs `n` round trips through `run_batch` and updates `per_rtt_s` to their mean wall time.
int timed_batch(const round_trip_batch& run_batch, std::size_t n, double* out, double& per_rtt_s) {
    const auto t0 = clock::now();
    const int rc = run_batch(n, out);
    if (rc == 0 && n > 0) per_rtt_s = seconds_since(t0) / static_cast<double>(n);
    return rc;
}

// Median of one batch's round trips, as percentile_sorted defines it (n > 0; scratch holds
// at least n values, so nothing is allocated).
double batch_median(const double* values, std::size_t n, std::vector<double>& scratch) {
    std::copy(values, values + n, scratch.begin());
    const auto first = scratch.begin(), last = scratch.begin() + static_cast<std::ptrdiff_t>(n);
    const std::size_t lo = (n - 1) / 2;
    std::nth_element(first, first + static_cast<std::ptrdiff_t>(lo), last);
    const double a = scratch[lo];
    if (n % 2 == 1) return a;
    return (a + *std::min_element(first + static_cast<std::ptrdiff_t>(lo) + 1, last)) / 2;
}

// The reported interval: the within-sample one, widened to the between-block one when the
// blocks disagree far more than the samples suggest.
interval_choice point_interval(double samples_rel, const block_means& blocks, double median_ns) {
    const auto means = blocks.means();
    return choose_interval(samples_rel, means, median_ns);
}

}  // namespace

latency_outcome run_latency(const round_trip_batch& run_batch, const run_spec& spec, std::vector<double>& samples,
                            const std::atomic<bool>& cancel) {
    latency_outcome out;
    out.precision.adaptive = spec.adaptive();
    out.precision.target = spec.precision;

    const std::uint64_t target_count = spec.iterations.value_or(0);
    const double time_limit = spec.duration_s.value_or(spec.max_point_s);

    // Warm-up, not counted: one round trip, timed, then batches sized by the time per round
    // trip so that none starts unless it ends within warmup_s; at least a handful
    // (warm_batch) when they fit in warmup_s plus a tenth of the time cap. A large message
    // on a slow path (4 MiB at 200 Mbit/s: 0.34 s a round trip) warms up with one.
    const auto warm_start = clock::now();
    double per_rtt = 0;  // seconds per round trip, from the latest batch
    if ((out.code = timed_batch(run_batch, 1, nullptr, per_rtt)) != 0) return out;
    std::size_t warmed = 1;
    const double handful_until = spec.warmup_s + 0.1 * time_limit;
    while (!cancel.load(std::memory_order_relaxed)) {
        const double el = seconds_since(warm_start);
        std::size_t n = round_trips_within(spec.warmup_s - el, per_rtt, warm_batch);
        if (n == 0 && warmed < warm_batch) n = round_trips_within(handful_until - el, per_rtt, warm_batch - warmed);
        if (n == 0) break;
        if ((out.code = timed_batch(run_batch, n, nullptr, per_rtt)) != 0) return out;
        warmed += n;
    }

    samples.resize(std::min<std::size_t>(target_count ? target_count : max_exact_samples, max_exact_samples));
    log_histogram overflow;  // used only past max_exact_samples
    std::vector<double> spill(batch_size);
    std::vector<double> scratch(batch_size);
    block_means blocks;      // per-batch medians, grouped into at most max_blocks blocks

    std::uint64_t done = 0;
    std::size_t exact = 0;  // samples written to `samples`: a batch that does not fit goes to the histogram whole
    std::size_t next_check = min_samples;
    double rel = std::numeric_limits<double>::infinity();
    const auto start = clock::now();
    while (!cancel.load(std::memory_order_relaxed)) {
        std::size_t n = batch_size;
        if (target_count) {
            n = static_cast<std::size_t>(std::min<std::uint64_t>(n, target_count - done));
        } else {
            // The time cap holds: a batch lasts at most max_batch_share of the cap at the time
            // per round trip measured so far (or min_batch_s), and none starts unless a round
            // trip fits before the cap, so the point ends within one round trip or
            // min_batch_s of it (the first batch is always run).
            // Round trips shorter than min_batch_s / batch_size keep whole batches.
            const std::size_t least = std::max<std::size_t>(1, round_trips_within(min_batch_s, per_rtt, n));
            n = std::min(n, std::max(least, round_trips_within(time_limit * max_batch_share, per_rtt, n)));
            const std::size_t fit = round_trips_within(time_limit - seconds_since(start), per_rtt, n);
            if (fit == 0 && done > 0) break;
            n = std::min(n, std::max(least, fit));
        }
        double* dst = done + n <= samples.size() ? samples.data() + done : spill.data();
        if ((out.code = timed_batch(run_batch, n, dst, per_rtt)) != 0) return out;
        if (n > 0) blocks.add(batch_median(dst, n, scratch));
        if (dst == spill.data())
            for (std::size_t i = 0; i < n; ++i) overflow.add(static_cast<std::uint64_t>(spill[i]));
        else
            exact += n;
        done += n;
        ++out.precision.batches;
        if (target_count) {
            if (done >= target_count) break;
            continue;
        }
        const double elapsed = seconds_since(start);
        if (spec.adaptive() && done >= next_check && done <= samples.size()) {
            std::span<double> kept(samples.data(), done);
            std::sort(kept.begin(), kept.end());
            const double median = percentile_sorted(kept, 0.5);
            const double samples_rel = median > 0 ? median_ci_half_width_sorted(kept) / median : rel;
            if (target_met(point_interval(samples_rel, blocks, median), spec.precision)) break;
            next_check = done * 2;
        }
        if (elapsed >= time_limit) break;
    }
    out.measured_s = seconds_since(start);
    if (done == 0) { out.code = ECANCELED; return out; }

    // Only what was written: the batch that crossed max_exact_samples went to the histogram,
    // and the slots it left empty (zeros, or a former point's samples) are no round trips.
    std::span<double> kept(samples.data(), exact);
    if (overflow.count() == 0) {
        out.rtt_ns = summarize(kept);
        std::sort(kept.begin(), kept.end());
        rel = out.rtt_ns.p50 > 0 ? median_ci_half_width_sorted(kept) / out.rtt_ns.p50 : rel;
    } else {
        for (double v : kept) overflow.add(static_cast<std::uint64_t>(v));
        out.rtt_ns = overflow.summarize();
        // Asymptotic standard error of the median, 1 / (2 f(m) sqrt(n)), with the density at
        // the median estimated from the 40th..60th percentile span: f(m) ~ 0.2 / span.
        const double span = overflow.quantile(0.6) - overflow.quantile(0.4);
        rel = 1.959964 * span / (0.4 * std::sqrt(static_cast<double>(done))) / out.rtt_ns.p50;
    }
    const auto chosen = point_interval(rel, blocks, out.rtt_ns.p50);
    out.precision.record(chosen);
    out.precision.block_values = blocks.means();
    out.precision.met = out.precision.adaptive && target_met(chosen, spec.precision);
    return out;
}

}  // namespace meshperf::core
