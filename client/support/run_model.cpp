#include "client/support/run_model.hpp"
#include "core/figure_text.hpp"

#include "core/error.hpp"
#include "core/sizes.hpp"
#include "core/units.hpp"

#include <cmath>
#include <fmt/format.h>

namespace meshperf::client {

run_model fit_run_model(const core::run_result& run) {
    run_model m;
    const auto samples = analysis::model_samples(run);
    // A run that ended early: say so, not what to sweep (a run that failed at its first size
    // was advised to sweep up to 4 MiB).
    const bool ended_early = !run.state.empty() && run.state != core::run_state::completed && !run.state.in_progress();
    const auto early = [&] {
        return fmt::format("run {} {}{}", run.id.empty() ? std::string("?") : run.id, run.state.text(),
                           run.error.empty() ? std::string() : ": " + run.error);
    };
    if (samples.empty()) {
        m.why_not = ended_early ? fmt::format("{}, before any latency or bandwidth point to fit", early())
                                : std::string("no latency or bandwidth points to fit");
        return m;
    }
    try {
        m.fit = analysis::fit_model(samples);
    } catch (const std::exception& e) {
        std::string why = e.what();
        if (why.rfind("model: ", 0) == 0) why.erase(0, 7);  // callers say "no model: ..." themselves
        if (ended_early)
            why = fmt::format("{}, with points at too few sizes to fit ({} point{}); see why it {} and measure again", early(),
                              samples.size(), samples.size() == 1 ? "" : "s", run.state.text());
        m.why_not = why;
    }
    return m;
}

namespace {

std::string line_text(const analysis::line_fit& l) {
    std::string s = fmt::format("α {} µs{}", core::plain_number(l.alpha_us(), 3), l.alpha_source == "latency" ? "" : " (stream intercept: no latency points)");
    if (std::isfinite(l.beta_bytes_per_s))
        s += fmt::format(", β {}, n½ {}", core::gbit_gbyte_text(l.beta_bytes_per_s, 4),
                         core::format_size(static_cast<std::uint64_t>(std::llround(l.n_half_bytes()))));
    else
        s += ", β unbounded (time does not grow with size here)";
    return s;
}

}  // namespace

std::string render_model_text(const run_model& m) {
    if (!m.fit) return fmt::format("\nmodel t(n) = α + n/β: none: {}\n", m.why_not);
    const auto& f = *m.fit;
    const auto& l = f.line;
    std::string out = fmt::format("\nmodel t(n) = α + n/β, {} points, {}..{}\n  {}\n", l.points, core::format_size(l.min_size_bytes),
                                  core::format_size(l.max_size_bytes), line_text(l));
    if (l.underdetermined)
        out += fmt::format("  underdetermined: {} points for {} parameters{}; a line through them fits whatever the path does, so "
                           "there is no quality figure (sweep more sizes)\n",
                           l.points, l.parameters, l.points > l.parameters ? " at fewer than 3 sizes" : "");
    else
        out += fmt::format("  R² {:.4f}, worst relative residual {:.1f}% ({} {})\n", l.r_squared, l.worst_rel_residual * 100,
                           l.worst_is_stream ? "bandwidth" : "latency", core::format_size(l.worst_size_bytes));
    if (f.beta_unmeasured()) out += "  warning: " + f.beta_measured->message() + "\n";
    if (!f.piecewise && !f.piecewise_rejected.empty())
        out += fmt::format("  one line fits badly (> {:.0f}%), but no break is reported: {}\n", f.piecewise_threshold * 100,
                           f.piecewise_rejected);
    if (f.piecewise) {
        const auto& p = *f.piecewise;
        out += fmt::format("  one line fits badly (> {:.0f}%): piecewise, break between {} and {}\n", f.piecewise_threshold * 100,
                           core::format_size(p.break_after_bytes), core::format_size(p.break_before_bytes));
        out += fmt::format("    up to {}: {}\n", core::format_size(p.break_after_bytes), line_text(p.below));
        out += fmt::format("    from {}: {}\n", core::format_size(p.break_before_bytes), line_text(p.above));
        out += fmt::format("    R² {:.4f}, worst relative residual {:.1f}% at {}\n", p.r_squared, p.worst_rel_residual * 100,
                           core::format_size(p.worst_size_bytes));
        const auto& e = p.evidence;
        std::string why = fmt::format("    the break removes {:.0f}% of the line's error", e.explained_share * 100);
        if (e.chi2_drop) why += fmt::format(", χ² drop {} > {} (the points' precision)", core::plain_number(*e.chi2_drop, 3), core::plain_number(*e.chi2_critical, 3));
        if (e.stable_share) why += fmt::format(", same place in {:.0f}% of {} refits over the blocks", *e.stable_share * 100, e.refits);
        else why += "; not checked for stability (the points carry no precision)";
        out += why + "\n";
    }
    return out;
}

nlohmann::json with_model(nlohmann::json doc, const core::run_result& run) {
    const auto m = fit_run_model(run);
    if (m.fit) {
        doc["model"] = analysis::to_json(*m.fit);
        doc.erase("model_error");
    } else {
        doc["model"] = nullptr;
        doc["model_error"] = m.why_not;
    }
    return doc;
}

double predicted_time_s(const analysis::model_fit& m, double size_bytes, bool stream) {
    const auto& l = m.line_for(size_bytes);
    const double alpha = stream && l.stream_alpha_s ? *l.stream_alpha_s : l.alpha_s;
    return alpha + size_bytes / l.beta_bytes_per_s;
}

}  // namespace meshperf::client
