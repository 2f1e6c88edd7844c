#include "core/collective/figures.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string>
#include <vector>

namespace meshperf::core {
namespace {

constexpr std::array algo_names{std::string_view{"ring"}, std::string_view{"tree"}, std::string_view{"direct"}};

std::string without_separators(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != '-' && c != '_') out += c;
    return out;
}

}  // namespace

std::string_view to_string(collective_op op) noexcept { return op_traits(op).name; }
std::string_view to_string(collective_algo algo) noexcept { return algo_names[static_cast<std::size_t>(algo)]; }

collective_op parse_collective_op(std::string_view name) {
    const std::string key = without_separators(name);
    std::vector<std::string_view> names;
    for (const auto& t : collective_ops()) {
        if (!key.empty() && key == without_separators(t.name)) return t.op;
        names.push_back(t.name);
    }
    throw spec_error(fmt::format("unknown collective '{}': use one of {}", name, fmt::join(names, ", ")));
}

collective_algo parse_collective_algo(std::string_view name) {
    for (std::size_t i = 0; i < algo_names.size(); ++i)
        if (name == algo_names[i]) return static_cast<collective_algo>(i);
    throw spec_error(fmt::format("unknown algorithm '{}': use one of {}", name, fmt::join(algo_names, ", ")));
}

bool can_run(collective_algo algo, collective_op op) noexcept {
    return std::ranges::find(op_traits(op).algos, algo) != op_traits(op).algos.end();
}

void require_can_run(collective_algo algo, collective_op op) {
    if (can_run(algo, op)) return;
    std::string those;
    for (std::size_t i = 0; i < algo_names.size(); ++i)
        if (can_run(static_cast<collective_algo>(i), op))
            those += fmt::format("{}{}", those.empty() ? "" : " or ", algo_names[i]);
    throw spec_error(fmt::format("--algo {} cannot run {}: use {}", to_string(algo), to_string(op), those));
}

collective_algo default_algo(collective_op op) noexcept { return op_traits(op).algos.front(); }

double busbw_factor(collective_op op, unsigned ranks) {
    if (ranks == 0) throw spec_error("a collective needs at least one rank");
    return op_traits(op).busbw_factor(ranks);
}

double algbw_bytes_per_s(std::uint64_t bytes, double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0)
        throw insane_figure(fmt::format("a collective of {} bytes took {} s: a time must be finite and positive", bytes, seconds));
    return static_cast<double>(bytes) / seconds;
}

double busbw_bytes_per_s(collective_op op, unsigned ranks, std::uint64_t bytes, double seconds) {
    return algbw_bytes_per_s(bytes, seconds) * busbw_factor(op, ranks);
}

double jain_fairness(std::span<const double> rates) {
    if (rates.empty()) throw spec_error("the fairness index needs at least one sender's rate");
    double sum = 0, squares = 0;
    for (double x : rates) {
        if (!std::isfinite(x) || x < 0) throw insane_figure(fmt::format("a sender's rate of {} B/s cannot enter the fairness index", x));
        sum += x;
        squares += x * x;
    }
    if (squares == 0) throw insane_figure("every sender's rate is 0: there is no fairness to compute");
    return sum * sum / (static_cast<double>(rates.size()) * squares);
}

}  // namespace meshperf::core
