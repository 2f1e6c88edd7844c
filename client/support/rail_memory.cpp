#include "client/support/rail_memory.hpp"

#include "core/error.hpp"

#include <array>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// NCCL's path words, closest first; an unknown word ranks after them.
int path_rank(const std::string& path) {
    static constexpr std::array<const char*, 5> order{"PIX", "PXB", "PHB", "NODE", "SYS"};
    for (std::size_t i = 0; i < order.size(); ++i)
        if (path == order[i]) return static_cast<int>(i);
    return static_cast<int>(order.size());
}

struct chosen_gpu {
    int cuda_index = -1;
    std::string bus_id, path;
};

std::string text_field(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The GPU nearest rail `rail` in one side's /v1/info rails list (`who` names the side).
chosen_gpu nearest_gpu(const json& rails, const std::string& rail, const std::string& who) {
    const json* entry = nullptr;
    if (rails.is_array())
        for (const auto& r : rails)
            if (r.is_object() && text_field(r, "name") == rail) entry = &r;
    if (!entry) throw core::spec_error(fmt::format("--memory cuda:auto: {} does not list rail {} in GET /v1/info", who, rail));
    const auto list = entry->find("nearest_gpus");
    std::optional<chosen_gpu> best, without_index;
    if (list != entry->end() && list->is_array())
        for (const auto& g : *list) {
            if (!g.is_object()) continue;
            chosen_gpu c{-1, text_field(g, "pci_bus_id"), text_field(g, "path")};
            if (const auto i = g.find("cuda_index"); i != g.end() && i->is_number_integer() && i->get<int>() >= 0)
                c.cuda_index = i->get<int>();
            if (c.cuda_index < 0) {
                if (!without_index) without_index = c;
                continue;
            }
            if (!best || path_rank(c.path) < path_rank(best->path) ||
                (path_rank(c.path) == path_rank(best->path) && c.cuda_index < best->cuda_index))
                best = c;
        }
    if (best) return *best;
    if (without_index)
        throw core::spec_error(fmt::format("--memory cuda:auto: the GPU nearest rail {} of {} ({}) has no CUDA index there (CUDA "
                                           "cannot be used on that node: see `meshperf info`'s gpu); give host or cuda:N memory",
                                           rail, who, without_index->bus_id));
    throw core::spec_error(fmt::format("--memory cuda:auto: {} has no GPU near rail {} (its GET /v1/info lists none in the "
                                       "rail's nearest_gpus): select rails that have one with --rails NAME,..., or give host or "
                                       "cuda:N memory",
                                       who, rail));
}

std::string describe(const chosen_gpu& g) {
    return fmt::format("cuda:{} ({}, {})", g.cuda_index, g.bus_id.empty() ? "bus id unknown" : g.bus_id,
                       g.path.empty() ? "path unknown" : g.path);
}

}  // namespace

std::vector<std::string> assign_nearest_gpus(std::vector<core::rail_pair>& rails, const json& initiator_rails,
                                             const json& peer_rails, nearest_gpu_request want, const std::string& initiator_name,
                                             const std::string& peer_name) {
    std::vector<std::string> lines;
    if (!want.initiator && !want.peer) return lines;
    for (auto& r : rails) {
        std::string line = fmt::format("rail {} -> {}:", r.name, r.peer_name);
        if (want.initiator) {
            const auto g = nearest_gpu(initiator_rails, r.name, initiator_name);
            r.local_memory = fmt::format("cuda:{}", g.cuda_index);
            line += fmt::format(" initiator {}", describe(g));
        }
        if (want.peer) {
            const auto g = nearest_gpu(peer_rails, r.peer_name, peer_name);
            r.peer_memory = fmt::format("cuda:{}", g.cuda_index);
            line += fmt::format("{} peer {}", want.initiator ? "," : "", describe(g));
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

}  // namespace meshperf::client
