#include "core/check.hpp"
#include "core/figure_text.hpp"

#include "core/error.hpp"
#include "core/sizes.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace meshperf::core {

using nlohmann::json;

namespace {

bool positive_finite(double v) { return std::isfinite(v) && v > 0; }

int severity(check_state s) {
    switch (s) {
        case check_state::ok: return 0;
        case check_state::unknown: return 1;
        case check_state::warning: return 2;
        case check_state::critical: return 3;
    }
    return 1;
}

// About six significant digits, fixed notation (perfdata values match [-0-9.]+), trailing
// zeros dropped.
std::string perf_number(double v) {
    const double a = std::fabs(v);
    const int magnitude = a > 0 ? static_cast<int>(std::floor(std::log10(a))) : 0;
    const int decimals = std::clamp(5 - magnitude, 0, 9);
    std::string s = fmt::format("{:.{}f}", v, decimals);
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return s == "-0" ? "0" : s;
}

std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '|') c = '/';
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
}

const char* unit_of(figure_kind k) { return k == figure_kind::bandwidth ? "Gbit/s" : "us"; }

const check_figure* find_baseline(const check_limits& l, const check_figure& f) {
    for (const check_figure& b : l.baseline)
        if (b.kind == f.kind && b.size_bytes == f.size_bytes) return &b;
    return nullptr;
}

struct hit {
    check_state state;
    std::string why;
};

figure_verdict judge(const check_figure& f, const check_limits& l) {
    figure_verdict v;
    v.figure = f;
    const bool bandwidth = f.kind == figure_kind::bandwidth;
    const check_figure* base = find_baseline(l, f);
    // Thresholds first: perfdata carries them even when the figure is not a measurement.
    // Bandwidth alerts below its thresholds (the strictest is the highest), latency above
    // them (the strictest is the lowest).
    auto stricter = [&](std::optional<double> current, double candidate) {
        if (!current) return candidate;
        return bandwidth ? std::max(*current, candidate) : std::min(*current, candidate);
    };
    const std::optional<double> absolute = bandwidth ? l.min_gbit : l.max_lat_us;
    std::optional<double> base_warn, base_crit;
    if (base) {
        base_warn = bandwidth ? l.warn * base->value : base->value / l.warn;
        base_crit = bandwidth ? l.crit * base->value : base->value / l.crit;
    }
    if (absolute) v.crit_at = *absolute;
    if (base_crit) v.crit_at = stricter(v.crit_at, *base_crit);
    v.warn_at = base_warn;

    if (!positive_finite(f.value)) {
        v.state = check_state::unknown;
        v.reason = fmt::format("{} {} is not a valid measurement", to_string(f.kind), f.value);
        return v;
    }
    auto beyond = [&](double threshold) { return bandwidth ? f.value < threshold : f.value > threshold; };
    std::vector<hit> hits;
    if (!l.baseline.empty() && !base)
        hits.push_back({check_state::unknown,
                        fmt::format("no baseline for {} at {}: save one with `meshperf baseline save`",
                                    to_string(f.kind), format_size(f.size_bytes))});
    if (absolute && beyond(*absolute))
        hits.push_back({check_state::critical, bandwidth ? fmt::format("below minimum {} Gbit/s", *absolute)
                                                         : fmt::format("above maximum {} us", *absolute)});
    if (base) {
        const bool crit = beyond(*base_crit);
        if (crit || beyond(*base_warn)) {
            const double fraction = crit ? l.crit : l.warn;
            const double at = crit ? *base_crit : *base_warn;
            hits.push_back({crit ? check_state::critical : check_state::warning,
                            bandwidth ? fmt::format("below {} x baseline {} = {} Gbit/s ({:.0f}% of baseline)",
                                                    fraction, message_figure(base->value), message_figure(at),
                                                    100 * f.value / base->value)
                                      : fmt::format("above baseline {} / {} = {} us ({} x baseline)",
                                                    message_figure(base->value), fraction, message_figure(at),
                                                    message_figure(f.value / base->value))});
        }
    }
    // Most severe first, so the reason leads with what decided the state.
    std::stable_sort(hits.begin(), hits.end(),
                     [](const hit& x, const hit& y) { return severity(x.state) > severity(y.state); });
    for (const hit& h : hits) {
        v.state = worst(v.state, h.state);
        v.reason += (v.reason.empty() ? "" : "; ") + h.why;
    }
    return v;
}

std::string figure_text(const figure_verdict& v) {
    const check_figure& f = v.figure;
    std::string s = f.rail.empty() ? std::string() : fmt::format("rail {}: ", f.rail);
    s += positive_finite(f.value)
             ? fmt::format("{} {} at {}", message_figure(f.value), unit_of(f.kind), format_size(f.size_bytes))
             : fmt::format("{} at {}: no valid figure", to_string(f.kind), format_size(f.size_bytes));
    if (v.state != check_state::ok) s += fmt::format(" ({}: {})", to_string(v.state), v.reason);
    return s;
}

}  // namespace

std::string_view to_string(check_state s) {
    switch (s) {
        case check_state::ok: return "OK";
        case check_state::warning: return "WARNING";
        case check_state::critical: return "CRITICAL";
        case check_state::unknown: return "UNKNOWN";
    }
    return "UNKNOWN";
}

int exit_code(check_state s) { return static_cast<int>(s); }

check_state worst(check_state a, check_state b) { return severity(a) >= severity(b) ? a : b; }

std::string_view to_string(figure_kind k) { return k == figure_kind::bandwidth ? "bandwidth" : "latency"; }

void validate_fractions(double warn, double crit) {
    if (!(std::isfinite(warn) && std::isfinite(crit) && crit > 0 && crit <= warn && warn <= 1))
        throw spec_error(fmt::format("--warn {} and --crit {} must satisfy 0 < crit <= warn <= 1: they are "
                                     "fractions of baseline performance (e.g. --warn 0.9 --crit 0.75)",
                                     warn, crit));
}

void validate(const check_limits& l) {
    if (!l.min_gbit && !l.max_lat_us && l.baseline.empty())
        throw spec_error("no limits to check against: give --min-gbit and/or --max-lat-us, or --baseline");
    if (l.min_gbit && !positive_finite(*l.min_gbit))
        throw spec_error(fmt::format("--min-gbit {} must be a positive number of Gbit/s", *l.min_gbit));
    if (l.max_lat_us && !positive_finite(*l.max_lat_us))
        throw spec_error(fmt::format("--max-lat-us {} must be a positive number of microseconds", *l.max_lat_us));
    validate_fractions(l.warn, l.crit);
    for (std::size_t i = 0; i < l.baseline.size(); ++i) {
        const check_figure& b = l.baseline[i];
        if (!positive_finite(b.value) || b.size_bytes == 0)
            throw spec_error(fmt::format("baseline {} at {} bytes is {}: a baseline figure must be positive; "
                                         "save the baseline again",
                                         to_string(b.kind), b.size_bytes, b.value));
        for (std::size_t k = 0; k < i; ++k)
            if (l.baseline[k].kind == b.kind && l.baseline[k].size_bytes == b.size_bytes)
                throw spec_error(fmt::format("baseline holds {} at {} twice; keep one figure per test and size",
                                             to_string(b.kind), format_size(b.size_bytes)));
    }
}

std::string describe(const check_target& t) {
    std::string s = t.transport;
    auto add = [&](std::string_view word, const std::string& who) {
        if (who.empty()) return;
        s += fmt::format("{}{} {}", s.empty() ? "" : " ", word, who);
    };
    add("from", t.initiator);
    add("to", t.peer);
    return s;
}

check_result evaluate_check(const check_target& target, std::span<const check_figure> measured,
                            const check_limits& limits) {
    validate(limits);
    if (measured.empty()) return unknown_result(target, "no figures were measured");
    check_result r;
    r.target = target;
    r.state = check_state::ok;
    for (const check_figure& f : measured) {
        r.figures.push_back(judge(f, limits));
        r.state = worst(r.state, r.figures.back().state);
    }
    return r;
}

void add_counter_verdicts(check_result& r, std::vector<counter_verdict> counters) {
    if (r.figures.empty()) return;
    std::stable_sort(counters.begin(), counters.end(), [](const counter_verdict& a, const counter_verdict& b) {
        return static_cast<int>(a.state) > static_cast<int>(b.state);
    });
    for (auto& c : counters) {
        r.state = worst(r.state, c.state);
        r.counters.push_back(std::move(c));
    }
}

check_result unknown_result(const check_target& target, std::string message) {
    check_result r;
    r.target = target;
    r.state = check_state::unknown;
    r.message = std::move(message);
    return r;
}

std::string perfdata_item(std::string_view label, double value, std::string_view warn, std::string_view crit,
                          std::string_view min, std::string_view max) {
    if (label.empty() || label.find_first_of("='") != std::string_view::npos)
        throw spec_error(fmt::format("perfdata label \"{}\" must be non-empty and hold neither '=' nor a single quote",
                                     label));
    const bool quote = label.find_first_of(" \t") != std::string_view::npos;
    return fmt::format("{}{}{}={};{};{};{};{}", quote ? "'" : "", label, quote ? "'" : "",
                       std::isfinite(value) ? perf_number(value) : "U", warn, crit, min, max);
}

namespace {

/// One perfdata item per figure, in the order of r.figures.
std::vector<std::string> perfdata_of(const check_result& r) {
    // Figures of one kind (and rail) at several sizes get the size in their label.
    std::map<std::pair<int, std::string>, std::size_t> per_kind;
    for (const figure_verdict& v : r.figures) ++per_kind[{static_cast<int>(v.figure.kind), v.figure.rail}];
    std::vector<std::string> perf;
    for (const figure_verdict& v : r.figures) {
        const check_figure& f = v.figure;
        const bool bw = f.kind == figure_kind::bandwidth;
        std::string label = bw ? "bw_gbit" : "lat_us";
        if (!f.rail.empty()) label += "_" + f.rail;
        if (per_kind[{static_cast<int>(f.kind), f.rail}] > 1) label += "_" + format_size_short(f.size_bytes);
        auto range = [&](const std::optional<double>& at) {
            return at ? perf_number(*at) + (bw ? ":" : "") : std::string();
        };
        perf.push_back(perfdata_item(label, positive_finite(f.value) ? f.value : std::nan(""), range(v.warn_at),
                                     range(v.crit_at), "0", ""));
    }
    for (const counter_verdict& c : r.counters) perf.push_back(perfdata_item(c.label, c.value, "", "", "0", ""));
    return perf;
}

/// The single-line form: every figure and all perfdata on one line.
std::string single_line(const check_result& r, const std::vector<std::string>& perf) {
    const std::string what = describe(r.target);
    std::string text = fmt::format("MESHPERF {} - {}", to_string(r.state), what);
    std::vector<std::string> parts;
    if (!r.message.empty()) parts.push_back(r.message);
    for (const figure_verdict& v : r.figures) parts.push_back(figure_text(v));
    for (const counter_verdict& c : r.counters) parts.push_back(fmt::format("{} ({})", c.text, to_string(c.state)));
    if (!parts.empty()) text += what.empty() ? "" : ": ";
    for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
    text = one_line(std::move(text));
    if (!perf.empty()) {
        text += " |";
        for (const std::string& p : perf) text += " " + p;
    }
    return text;
}

/// `text` cut to at most `max` bytes, on a UTF-8 boundary, ending in "..." when cut.
std::string cut(std::string text, std::size_t max) {
    if (text.size() <= max) return text;
    std::size_t n = max >= 3 ? max - 3 : 0;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    text.resize(n);
    return text + "...";
}

struct plugin_output {
    std::string first;                ///< the status line, shorter than nagios_first_line_max
    std::vector<std::string> more;    ///< long text and perfdata lines after it
};

plugin_output render(const check_result& r) {
    const auto perf = perfdata_of(r);
    plugin_output out;
    out.first = single_line(r, perf);
    if (out.first.size() < nagios_first_line_max) return out;

    // Too long for the status line: the worst figure (the first at the overall state) with
    // a count of the others, its perfdata; every figure and the other perfdata below.
    std::size_t worst_at = 0;
    for (std::size_t i = 0; i < r.figures.size(); ++i)
        if (r.figures[i].state == r.state) {
            worst_at = i;
            break;
        }
    const std::string what = describe(r.target);
    const std::string head = fmt::format("MESHPERF {} - {}{}", to_string(r.state), what, what.empty() ? "" : ": ");
    std::string summary;
    if (!r.message.empty()) summary = r.message;
    // A counter verdict that is worse than every figure leads the status line.
    const bool figure_at_state = std::any_of(r.figures.begin(), r.figures.end(),
                                             [&](const figure_verdict& v) { return v.state == r.state; });
    if (!figure_at_state && !r.counters.empty() && r.counters.front().state == r.state)
        summary = fmt::format("{}{}", r.counters.front().text,
                              r.counters.size() > 1 ? fmt::format(" (and {} more counters)", r.counters.size() - 1) : "");
    std::string worst_full, worst_short, others;
    if (!r.figures.empty()) {
        const figure_verdict& w = r.figures[worst_at];
        worst_full = figure_text(w);
        worst_short = positive_finite(w.figure.value)
                          ? fmt::format("{} {} at {}", message_figure(w.figure.value), unit_of(w.figure.kind), format_size(w.figure.size_bytes))
                          : fmt::format("{} at {}: no valid figure", to_string(w.figure.kind), format_size(w.figure.size_bytes));
        if (w.state != check_state::ok) worst_short += fmt::format(" ({})", to_string(w.state));
        if (r.figures.size() > 1) {
            std::size_t count[4] = {0, 0, 0, 0};
            for (std::size_t i = 0; i < r.figures.size(); ++i)
                if (i != worst_at) ++count[static_cast<int>(r.figures[i].state)];
            std::string by_state;
            for (check_state st : {check_state::critical, check_state::warning, check_state::unknown, check_state::ok})
                if (count[static_cast<int>(st)])
                    by_state += fmt::format("{}{} {}", by_state.empty() ? "" : ", ", count[static_cast<int>(st)], to_string(st));
            others = fmt::format("; {} other figure{} ({}), details below", r.figures.size() - 1, r.figures.size() == 2 ? "" : "s",
                                 by_state);
        }
    }
    const std::string first_perf = r.figures.empty() ? std::string() : " | " + perf[worst_at];
    const std::size_t room = nagios_first_line_max - 1 - first_perf.size();
    auto compose = [&](const std::string& worst) {
        std::string t = summary;
        if (!worst.empty()) t += (t.empty() ? "" : "; ") + worst;
        return one_line(head + t + others);
    };
    std::string text = compose(worst_full);
    if (text.size() > room) text = compose(worst_short);
    out.first = cut(text, room) + first_perf;

    if (!r.message.empty()) out.more.push_back(one_line(r.message));
    for (const figure_verdict& v : r.figures) {
        const check_figure& f = v.figure;
        std::string line = fmt::format("{}: ", to_string(v.state));
        if (!f.rail.empty()) line += fmt::format("rail {}: ", f.rail);  // which rail each detail line is of
        line += positive_finite(f.value)
                    ? fmt::format("{} {} at {}", message_figure(f.value), unit_of(f.kind), format_size(f.size_bytes))
                    : fmt::format("{} at {}: no valid figure", to_string(f.kind), format_size(f.size_bytes));
        if (!v.reason.empty()) line += ": " + v.reason;
        out.more.push_back(one_line(std::move(line)));
    }
    for (const counter_verdict& c : r.counters) out.more.push_back(one_line(fmt::format("{}: {}", to_string(c.state), c.text)));
    // Plugin guidelines: "LONG TEXT LINE N | PERFDATA LINE 2", then more perfdata lines.
    bool first_extra = true;
    for (std::size_t i = 0; i < perf.size(); ++i) {
        if (i == worst_at) continue;
        if (first_extra && !out.more.empty()) out.more.back() += " | " + perf[i];
        else out.more.push_back(perf[i]);
        first_extra = false;
    }
    return out;
}

}  // namespace

std::string nagios_line(const check_result& r) { return render(r).first; }

std::string nagios_output(const check_result& r) {
    const auto out = render(r);
    std::string text = out.first;
    for (const auto& l : out.more) text += "\n" + l;
    return text;
}

json to_json(const check_result& r) {
    json j;
    j["state"] = std::string(to_string(r.state));
    j["exit_code"] = exit_code(r.state);
    j["target"] = {{"peer", r.target.peer}, {"transport", r.target.transport}, {"initiator", r.target.initiator}};
    j["message"] = r.message;
    j["figures"] = json::array();
    auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    for (const figure_verdict& v : r.figures) {
        const check_figure& f = v.figure;
        j["figures"].push_back({{"test", std::string(to_string(f.kind))},
                                {"size_bytes", f.size_bytes},
                                {f.kind == figure_kind::bandwidth ? "gbit_per_s" : "lat_us",
                                 std::isfinite(f.value) ? json(f.value) : json(nullptr)},
                                {"state", std::string(to_string(v.state))},
                                {"reason", v.reason},
                                {"warn_at", opt(v.warn_at)},
                                {"crit_at", opt(v.crit_at)}});
        if (!f.rail.empty()) j["figures"].back()["rail"] = f.rail;
    }
    j["counters"] = json::array();
    for (const counter_verdict& c : r.counters)
        j["counters"].push_back({{"state", std::string(to_string(c.state))}, {"text", c.text}, {"label", c.label}, {"value", c.value}});
    const auto out = render(r);
    j["line"] = out.first;
    j["output"] = nagios_output(r);
    return j;
}

}  // namespace meshperf::core
