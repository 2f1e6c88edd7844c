#include "core/placement.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/run_spec.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::core {

using nlohmann::json;

namespace {

// A CPU or node number beyond this is not a Linux one (NR_CPUS is at most 8192).
constexpr std::uint64_t max_cpu_number = 65535;
// A side never reports more CPUs than a host has; a peer that does is not believed.
constexpr std::size_t max_listed = 8192;

std::vector<int> sorted_unique(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

std::vector<int> int_list(const json& j, const char* field) {
    if (!j.is_array()) throw spec_error(fmt::format("placement field '{}' must be an array of numbers", field));
    if (j.size() > max_listed) throw spec_error(fmt::format("placement field '{}' lists more than {} entries", field, max_listed));
    std::vector<int> out;
    for (const auto& v : j) out.push_back(static_cast<int>(json_unsigned(v, field, max_cpu_number)));
    return sorted_unique(std::move(out));
}

const char* source_name(cpu_source s) {
    switch (s) {
        case cpu_source::spec: return "spec";
        case cpu_source::automatic: return "default";
        case cpu_source::none: break;
    }
    return "none";
}

cpu_source parse_source(const json& j) {
    if (!j.is_string()) throw spec_error("placement field 'pinned_by' must be a string");
    const auto s = j.get<std::string>();
    if (s == "spec") return cpu_source::spec;
    if (s == "default") return cpu_source::automatic;
    if (s == "none") return cpu_source::none;
    throw spec_error(fmt::format("placement field 'pinned_by' is '{}': expected spec, default or none", s));
}

bool overlap(const std::vector<int>& a, const std::vector<int>& b) {
    return std::any_of(a.begin(), a.end(), [&](int c) { return std::find(b.begin(), b.end(), c) != b.end(); });
}

std::string numbered(const char* one, const std::vector<int>& v) {
    return fmt::format("{}{} {}", one, v.size() == 1 ? "" : "s", format_cpu_list(v));
}

}  // namespace

point_placement make_point_placement(side_placement initiator, std::optional<side_placement> peer,
                                     std::optional<bool> same_host) {
    point_placement p{std::move(initiator), std::move(peer), same_host, std::nullopt};
    if (p.peer && p.same_host)
        p.shared_cpu = *p.same_host ? std::optional<bool>(overlap(p.initiator.cpus, p.peer->cpus)) : std::nullopt;
    return p;
}

json to_json(const side_placement& s) {
    return {{"cpus", s.cpus}, {"numa_nodes", s.numa_nodes}, {"pinned", s.pinned}, {"pinned_by", source_name(s.source)}};
}

json to_json(const point_placement& p) {
    auto opt = [](const std::optional<bool>& b) { return b ? json(*b) : json(nullptr); };
    return {{"initiator", to_json(p.initiator)},
            {"peer", p.peer ? to_json(*p.peer) : json(nullptr)},
            {"same_host", opt(p.same_host)},
            {"shared_cpu", opt(p.shared_cpu)}};
}

side_placement side_placement_from_json(const json& j) {
    if (!j.is_object()) throw spec_error("a side's placement must be a JSON object");
    side_placement s;
    if (j.contains("cpus")) s.cpus = int_list(j["cpus"], "cpus");
    if (j.contains("numa_nodes")) s.numa_nodes = int_list(j["numa_nodes"], "numa_nodes");
    if (j.contains("pinned")) {
        if (!j["pinned"].is_boolean()) throw spec_error("placement field 'pinned' must be true or false");
        s.pinned = j["pinned"].get<bool>();
    }
    if (j.contains("pinned_by")) s.source = parse_source(j["pinned_by"]);
    return s;
}

point_placement point_placement_from_json(const json& j) {
    if (!j.is_object()) throw spec_error("a point's placement must be a JSON object");
    auto opt = [&](const char* key) -> std::optional<bool> {
        if (!j.contains(key) || j[key].is_null()) return std::nullopt;
        if (!j[key].is_boolean()) throw spec_error(fmt::format("placement field '{}' must be true, false or null", key));
        return j[key].get<bool>();
    };
    point_placement p;
    p.initiator = side_placement_from_json(j.value("initiator", json::object()));
    if (j.contains("peer") && !j["peer"].is_null()) p.peer = side_placement_from_json(j["peer"]);
    p.same_host = opt("same_host");
    p.shared_cpu = opt("shared_cpu");
    return p;
}

std::string format_cpu_list(const std::vector<int>& v) {
    const auto s = sorted_unique(v);
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i;
        while (j + 1 < s.size() && s[j + 1] == s[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += j == i ? fmt::format("{}", s[i]) : fmt::format("{}-{}", s[i], s[j]);
        i = j + 1;
    }
    return out;
}

std::string describe(const side_placement& s) {
    if (s.cpus.empty()) return "CPU unknown";
    std::string notes;
    if (!s.pinned) notes = "not pinned";
    if (!s.numa_nodes.empty()) notes += (notes.empty() ? "" : "; ") + std::string("NUMA ") + format_cpu_list(s.numa_nodes);
    return numbered("CPU", s.cpus) + (notes.empty() ? "" : " (" + notes + ")");
}

std::string describe(const point_placement& p) {
    std::string out = "initiator " + describe(p.initiator) + ", peer ";
    if (!p.peer) return out + "unknown (an older meshperfd that does not report it)";
    out += describe(*p.peer);
    if (!p.same_host) return out + ", hosts not compared";
    if (!*p.same_host) return out + ", on different hosts";
    if (p.shared_cpu.value_or(false)) {
        std::vector<int> both;
        for (int c : p.initiator.cpus)
            if (std::find(p.peer->cpus.begin(), p.peer->cpus.end(), c) != p.peer->cpus.end()) both.push_back(c);
        return out + fmt::format(", sharing {} on one host", numbered("CPU", both));
    }
    return out + ", separate CPUs on one host";
}

cpu_option parse_cpu_option(std::string_view text) {
    const auto comma = text.find(',');
    const auto usage = "use --cpu A (both sides on A) or --cpu A,B (initiator on A, peer on B), each a CPU or a range "
                       "such as 0-3";
    if (text.empty()) throw spec_error(fmt::format("--cpu is empty: {}", usage));
    if (comma != std::string_view::npos && text.find(',', comma + 1) != std::string_view::npos)
        throw spec_error(fmt::format("--cpu '{}' names more than two sides: {}", text, usage));
    auto side = [&](std::string_view part) {
        if (part.empty()) throw spec_error(fmt::format("--cpu '{}' has an empty side: {}", text, usage));
        return parse_cpu_list(part);
    };
    cpu_option o;
    o.initiator = side(text.substr(0, comma));
    o.peer = comma == std::string_view::npos ? o.initiator : side(text.substr(comma + 1));
    return o;
}

std::vector<int> choose_cpus(const cpu_choice_input& in) {
    const auto allowed = sorted_unique(in.allowed);
    if (allowed.empty()) return {};
    std::vector<int> candidates;
    if (in.nic_node)
        for (int c : allowed)
            if (auto it = in.numa_node_of.find(c); it != in.numa_node_of.end() && it->second == *in.nic_node) candidates.push_back(c);
    if (candidates.empty()) candidates = allowed;

    std::vector<int> pool = candidates;
    if (!in.other_side.empty()) {
        auto without_other = [&](const std::vector<int>& from) {
            std::vector<int> out;
            for (int c : from)
                if (std::find(in.other_side.begin(), in.other_side.end(), c) == in.other_side.end()) out.push_back(c);
            return out;
        };
        auto free = without_other(candidates);
        if (free.empty()) free = without_other(allowed);
        if (!free.empty()) pool = std::move(free);
        else if (candidates.size() >= 2) pool.assign(candidates.begin() + static_cast<std::ptrdiff_t>(candidates.size() / 2), candidates.end());
        // else: a single candidate, which both sides share
    }
    const auto n = std::clamp<std::size_t>(in.threads, 1, pool.size());
    pool.resize(n);
    return pool;
}

}  // namespace meshperf::core
