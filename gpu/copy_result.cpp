#include "gpu/copy_result.hpp"

#include "core/error.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace meshperf::gpu {

std::string_view to_string(copy_kind k) {
    switch (k) {
    case copy_kind::h2d: return "h2d";
    case copy_kind::d2h: return "d2h";
    case copy_kind::d2d: return "d2d";
    case copy_kind::p2p: return "p2p";
    }
    return "h2d";
}

std::vector<copy_kind> parse_copy_kinds(std::string_view text) {
    std::vector<copy_kind> kinds;
    std::size_t pos = 0;
    if (text.empty()) throw core::spec_error("empty copy list: give one or more of h2d, d2h, d2d, p2p");
    while (pos <= text.size()) {
        const auto comma = text.find(',', pos);
        const auto item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        copy_kind k{};
        if (item == "h2d") k = copy_kind::h2d;
        else if (item == "d2h") k = copy_kind::d2h;
        else if (item == "d2d") k = copy_kind::d2d;
        else if (item == "p2p") k = copy_kind::p2p;
        else
            throw core::spec_error(fmt::format("unknown copy '{}' in '{}': use h2d, d2h, d2d or p2p, comma-separated",
                                               item, text));
        if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return kinds;
}

bool copy_result::verify_failed() const noexcept {
    return std::any_of(points.begin(), points.end(), [](const copy_point& p) { return p.mismatched_bytes != 0; });
}

unsigned copies_per_batch(double seconds_per_copy, double min_batch_seconds, unsigned max_copies) noexcept {
    if (max_copies == 0) max_copies = 1;
    if (!std::isfinite(seconds_per_copy) || seconds_per_copy <= 0) return max_copies;
    const double n = std::ceil(min_batch_seconds / seconds_per_copy);
    if (!(n >= 1)) return 1;
    return n >= max_copies ? max_copies : static_cast<unsigned>(n);
}

double gb_per_s(double bytes, double seconds) noexcept { return seconds > 0 ? core::gbyte_per_s(bytes, seconds) : 0.0; }

copy_point summarize_batches(std::uint64_t size_bytes, std::vector<double> rates, unsigned per_batch) {
    if (rates.empty()) throw std::invalid_argument("summarize_batches: no batches");
    std::sort(rates.begin(), rates.end());
    const std::size_t n = rates.size();
    copy_point p;
    p.size_bytes = size_bytes;
    p.gb_per_s = n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
    p.gb_per_s_min = rates.front();
    p.gb_per_s_max = rates.back();
    p.seconds_per_copy = p.gb_per_s > 0 ? core::seconds_at_gbyte_per_s(static_cast<double>(size_bytes), p.gb_per_s) : 0;
    p.batches = static_cast<unsigned>(n);
    p.copies_per_batch = per_batch;
    return p;
}

void check_sane(const copy_point& p) {
    const auto bad = [&](std::string_view what) {
        throw core::insane_figure(fmt::format("copy of {} bytes: {} (rate {} GB/s, min {}, max {}, {} s per copy)",
                                              p.size_bytes, what, p.gb_per_s, p.gb_per_s_min, p.gb_per_s_max,
                                              p.seconds_per_copy));
    };
    if (p.size_bytes == 0) bad("size is zero");
    for (double v : {p.gb_per_s, p.gb_per_s_min, p.gb_per_s_max, p.seconds_per_copy})
        if (!std::isfinite(v) || v <= 0) bad("a figure is not a positive finite number");
    if (!(p.gb_per_s_min <= p.gb_per_s && p.gb_per_s <= p.gb_per_s_max)) bad("median outside [min, max]");
    if (p.batches == 0 || p.copies_per_batch == 0) bad("no timed copies");
    const double expect = core::seconds_at_gbyte_per_s(static_cast<double>(p.size_bytes), p.gb_per_s);
    if (std::fabs(expect - p.seconds_per_copy) > 1e-3 * expect) bad("seconds per copy disagrees with size / rate");
}

}  // namespace meshperf::gpu
