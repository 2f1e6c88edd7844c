#include "client/collective/spec_options.hpp"

#include "client/support/daemon_client.hpp"
#include "client/support/hosts_file.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "transport/socket.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// The comma items of a size list, as written (empty items kept: the size parser names them).
std::vector<std::string> size_items(std::string_view text) {
    std::vector<std::string> out;
    for (std::size_t start = 0; start <= text.size();) {
        const auto comma = text.find(',', start);
        const auto end = comma == std::string_view::npos ? text.size() : comma;
        out.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

/// "1024 -> 1020, 2048 -> 2040, ... (20 sizes)": the first changes, and how many.
std::string changes_text(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& changed) {
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < changed.size() && i < 3; ++i)
        shown.push_back(fmt::format("{} -> {}", changed[i].first, changed[i].second));
    const auto more = changed.size() > 3 ? fmt::format(", ... ({} sizes)", changed.size()) : std::string{};
    return fmt::format("{}{}", fmt::join(shown, ", "), more);
}

/// The size step of the run and the ops that need it (not every op of the list: incast
/// needs none, broadcast one element), from the options alone (before the spec is validated,
/// so a bad op or dtype is refused there with core's sentence).
std::pair<std::uint64_t, std::string> step_of(const collective_options& o, unsigned ranks) {
    core::collective_spec s;
    s.ops = core::parse_collective_op_list(o.ops);
    s.element = core::parse_dtype(o.dtype);
    s.hosts.resize(ranks);
    const auto step = core::size_step(s);
    std::vector<std::string_view> names;
    for (auto op : s.ops)
        if (core::size_step(op, ranks, s.element) == step) names.push_back(core::to_string(op));
    if (names.empty())  // a step that no single op needs alone (their common multiple)
        for (auto op : s.ops)
            if (core::size_step(op, ranks, s.element) > 1) names.push_back(core::to_string(op));
    return {step, fmt::format("{} over {} ranks of {}", fmt::join(names, ", "), ranks, core::to_string(s.element))};
}

}  // namespace

std::string normalize_host(std::string_view host) { return transport::parse_endpoint(host).to_string(); }

std::vector<std::uint64_t> collective_sizes(std::string_view text, std::uint64_t step, std::string_view why_step,
                                            std::vector<std::string>& notes) {
    std::vector<std::uint64_t> sizes;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> changed;
    for (const auto& item : size_items(text)) {
        const auto expanded = core::parse_size_list_as_written(item).as_written;
        if (item.find("..") == std::string::npos || step <= 1) {
            sizes.insert(sizes.end(), expanded.begin(), expanded.end());
            continue;
        }
        for (auto size : expanded) {
            const auto rounded = size < step ? step : size / step * step;
            if (rounded != size) changed.emplace_back(size, rounded);
            sizes.push_back(rounded);
        }
    }
    if (!changed.empty())
        notes.push_back(fmt::format("note: --sizes {}: the sizes of its ranges rounded to a multiple of {} B, as {} needs: {}",
                                    text, step, why_step, changes_text(changed)));
    auto list = core::make_size_list(std::move(sizes));
    if (list.reordered())
        notes.push_back(fmt::format("note: --sizes {} measured {}: {}", text, core::size_order_change(list),
                                    core::format_size_list(list.sizes)));
    return std::move(list.sizes);
}

built_collective_spec build_collective_spec(const collective_options& o, const option_given& given) {
    built_collective_spec out;
    const auto hosts = read_host_words(o.hosts);
    try {
        const auto [step, why] = step_of(o, static_cast<unsigned>(hosts.size()));
        json j{{"hosts", hosts},
               {"ops", o.ops},
               {"sizes", collective_sizes(o.sizes, step, why, out.notes)},
               {"transport", o.transport},
               {"memory", o.memory},
               {"dtype", o.dtype},
               {"verify", o.verify},
               {"warmup_iterations", o.warmup},
               {"predict", o.predict}};
        if (given("--algo")) j["algo"] = o.algo;
        if (given("--rdma-device")) j["rdma_device"] = o.rdma_device;
        if (given("--port")) j["rdma_port"] = o.rdma_port;
        if (given("--gid-index")) j["gid_index"] = o.gid_index;
        if (given("--coordinator")) j["coordinator"] = o.coordinator;
        if (given("--iterations") || !given("--duration")) j["iterations"] = o.iterations;
        if (given("--duration")) j["duration_s"] = o.duration;
        out.spec = core::collective_spec_from_json(j, normalize_host);
        if (given("--model")) {
            out.spec.model_file = o.model;
            core::validate(out.spec, normalize_host);
        }
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
    return out;
}

}  // namespace meshperf::client
