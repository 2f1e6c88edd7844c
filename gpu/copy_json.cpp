#include "gpu/copy_json.hpp"

namespace meshperf::gpu {

nlohmann::json to_json(const copy_point& p) {
    return {{"size_bytes", p.size_bytes},
            {"gb_per_s", p.gb_per_s},
            {"gb_per_s_min", p.gb_per_s_min},
            {"gb_per_s_max", p.gb_per_s_max},
            {"seconds_per_copy", p.seconds_per_copy},
            {"batches", p.batches},
            {"copies_per_batch", p.copies_per_batch},
            {"verify", p.verify},
            {"verified", p.verified()},
            {"mismatched_bytes", p.mismatched_bytes}};
}

nlohmann::json to_json(const copy_result& r) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : r.points) points.push_back(to_json(p));
    return {{"copy", std::string(to_string(r.kind))},
            {"src", r.src},
            {"dst", r.dst},
            {"peer_access", r.peer_access},
            {"cancelled", r.cancelled},
            {"verify_failed", r.verify_failed()},
            {"points", std::move(points)},
            {"warnings", r.warnings}};
}

nlohmann::json to_json(const copy_matrix& m) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& r : m.pairs) pairs.push_back(to_json(r));
    return {{"device_count", m.device_count},
            {"waived", m.waived.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.waived)},
            {"pairs", std::move(pairs)}};
}

nlohmann::json to_json(const all_gpu_copy& a) {
    nlohmann::json points = nlohmann::json::array(), per_gpu = nlohmann::json::array();
    for (const auto& p : a.points)
        points.push_back({{"size_bytes", p.size_bytes}, {"gb_per_s_sum", p.gb_per_s_sum}, {"gb_per_s_min", p.gb_per_s_min},
                          {"slowest", p.slowest}});
    for (const auto& r : a.per_gpu) per_gpu.push_back(to_json(r));
    return {{"copy", std::string(to_string(a.kind))},
            {"devices", a.per_gpu.size()},
            {"verify_failed", a.verify_failed()},
            {"points", std::move(points)},
            {"per_gpu", std::move(per_gpu)}};
}

nlohmann::json to_json(const local_sweep& s) {
    nlohmann::json doc = {{"schema", "meshperf.local/1"}, {"copies", nlohmann::json::array()}, {"p2p", nlohmann::json::array()}};
    for (const auto& r : s.copies) doc["copies"].push_back(to_json(r));
    for (const auto& m : s.p2p) doc["p2p"].push_back(to_json(m));
    if (!s.all_gpus.empty()) {
        doc["all_gpus"] = nlohmann::json::array();
        for (const auto& a : s.all_gpus) doc["all_gpus"].push_back(to_json(a));
    }
    return doc;
}

}  // namespace meshperf::gpu
