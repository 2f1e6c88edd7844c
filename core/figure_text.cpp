#include "core/figure_text.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace meshperf::core {

std::string significant_text(double v, int digits, const std::string& not_finite) {
    if (!std::isfinite(v)) return not_finite;
    if (v == 0) return "0";
    digits = std::clamp(digits, 1, 17);
    const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    const int decimals = std::clamp(digits - 1 - magnitude, 0, 30);
    std::string s = fmt::format("{:.{}f}", v, decimals);
    // Rounding up may add a digit (9.996 -> "10.00"): drop the one decimal too many.
    if (decimals > 0 && std::fabs(std::stod(s)) >= std::pow(10.0, magnitude + 1)) s = fmt::format("{:.{}f}", v, decimals - 1);
    return s;
}

std::string plain_number(double v, int digits, const std::string& not_finite) {
    auto s = significant_text(v, digits, not_finite);
    if (!std::isfinite(v) || s.find('.') == std::string::npos) return s;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

std::string message_figure(double v) {
    const double a = std::fabs(v);
    if (a >= 100) return fmt::format("{:.0f}", v);
    if (a >= 10) return fmt::format("{:.1f}", v);
    if (a >= 1) return fmt::format("{:.2f}", v);
    return fmt::format("{}", plain_number(v, 3));
}

}  // namespace meshperf::core
