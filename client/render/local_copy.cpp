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

/// One direction on every GPU at once: per size the sum, the slowest GPU, and each GPU.
std::string render_all_gpus(const json& a) {
    const auto& per_gpu = a.at("per_gpu");
    std::string out = fmt::format("\n{} on all {} GPUs at once (GB/s; each GPU's median batch while every GPU copies the size)\n",
                                  a.at("copy").get<std::string>(), per_gpu.size());
    std::vector<std::vector<std::string>> rows{{"size", "sum", "slowest"}};
    const bool h2d = a.at("copy") == "h2d";
    for (const auto& r : per_gpu) rows[0].push_back(r.at(h2d ? "dst" : "src").get<std::string>());
    const auto& points = a.at("points");
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto& p = points[i];
        std::vector<std::string> row{core::format_size(p.at("size_bytes").get<std::uint64_t>()),
                                     fmt::format("{:.2f}", p.at("gb_per_s_sum").get<double>()),
                                     fmt::format("{} {:.2f}", p.at("slowest").get<std::string>(), p.at("gb_per_s_min").get<double>())};
        for (const auto& r : per_gpu) {
            const auto& rp = r.at("points");
            row.push_back(i < rp.size() ? fmt::format("{:.2f}", rp[i].at("gb_per_s").get<double>()) : "-");
        }
        rows.push_back(std::move(row));
    }
    out += format_table(rows);
    for (const auto& r : per_gpu) {
        if (r.value("cancelled", false)) out += fmt::format("  {}: stopped before every size was measured\n", r.value("dst", ""));
        for (const auto& w : r.value("warnings", json::array())) out += "  warning: " + w.get<std::string>() + "\n";
    }
    return out;
}

}  // namespace

std::string render_local_table(const json& doc) {
    std::string out;
    if (doc.contains("host") && doc["host"].is_string()) out += fmt::format("copy sweeps on {}\n", doc["host"].get<std::string>());
    for (const auto& r : doc.at("copies")) out += render_copy(r);
    for (const auto& m : doc.at("p2p")) out += render_matrix(m);
    for (const auto& a : doc.value("all_gpus", json::array())) out += render_all_gpus(a);
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
    for (const auto& a : doc.value("all_gpus", json::array()))
        if (failed(a)) return true;
    return false;
}

}  // namespace meshperf::client
