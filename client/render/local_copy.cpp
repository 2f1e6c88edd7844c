#include "client/render/local_copy.hpp"

#include "client/render/table.hpp"
#include "core/sizes.hpp"

#include <fmt/format.h>

namespace meshperf::client {

using nlohmann::json;

namespace {

std::string render_copy(const json& r) {
    std::string out = fmt::format("\n{} ({} -> {})\n", r.at("copy").get<std::string>(), r.at("src").get<std::string>(),
                                  r.at("dst").get<std::string>());
    std::vector<std::vector<std::string>> rows{{"size", "GB/s", "min", "max", "copies/batch", "verified"}};
    for (const auto& p : r.at("points")) {
        const bool verify = p.at("verify").get<bool>();
        rows.push_back({core::format_size(p.at("size_bytes").get<std::uint64_t>()),
                        fmt::format("{:.2f}", p.at("gb_per_s").get<double>()), fmt::format("{:.2f}", p.at("gb_per_s_min").get<double>()),
                        fmt::format("{:.2f}", p.at("gb_per_s_max").get<double>()),
                        std::to_string(p.at("copies_per_batch").get<unsigned>()),
                        verify ? (p.at("verified").get<bool>() ? "yes" : "NO") : "-"});
    }
    out += format_table(rows);
    if (r.value("cancelled", false)) out += "  (stopped before every size was measured)\n";
    for (const auto& w : r.value("warnings", json::array())) out += "  warning: " + w.get<std::string>() + "\n";
    return out;
}

std::string render_matrix(const json& m) {
    if (m.contains("waived") && m["waived"].is_string()) return "\np2p matrix: " + m["waived"].get<std::string>() + "\n";
    std::string out = "\np2p matrix (GB/s at the largest size, row = source)\n";
    const int n = m.at("device_count").get<int>();
    std::vector<std::vector<std::string>> rows{{"src\\dst"}};
    for (int d = 0; d < n; ++d) rows[0].push_back(fmt::format("cuda:{}", d));
    for (int s = 0; s < n; ++s) {
        std::vector<std::string> row{fmt::format("cuda:{}", s)};
        for (int d = 0; d < n; ++d) {
            std::string cell = "-";
            for (const auto& r : m.at("pairs"))
                if (r.at("src") == fmt::format("cuda:{}", s) && r.at("dst") == fmt::format("cuda:{}", d) && !r.at("points").empty())
                    cell = fmt::format("{:.1f}", r["points"].back().at("gb_per_s").get<double>());
            row.push_back(cell);
        }
        rows.push_back(row);
    }
    return out + format_table(rows);
}

}  // namespace

std::string render_local_table(const json& doc) {
    std::string out;
    if (doc.contains("host") && doc["host"].is_string()) out += fmt::format("copy sweeps on {}\n", doc["host"].get<std::string>());
    for (const auto& r : doc.at("copies")) out += render_copy(r);
    for (const auto& m : doc.at("p2p")) out += render_matrix(m);
    if (doc.contains("stopped") && doc["stopped"].is_string()) out += "\nstopped: " + doc["stopped"].get<std::string>() + "\n";
    return out;
}

bool local_verify_failed(const json& doc) {
    const auto failed = [](const json& r) { return r.is_object() && r.value("verify_failed", false); };
    for (const auto& r : doc.value("copies", json::array()))
        if (failed(r)) return true;
    for (const auto& m : doc.value("p2p", json::array()))
        for (const auto& r : m.value("pairs", json::array()))
            if (failed(r)) return true;
    return false;
}

}  // namespace meshperf::client
