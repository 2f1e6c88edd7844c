#include "node/manifest.hpp"

#include "core/error.hpp"
#include "core/toml_nesting.hpp"
#include "transport/small_file.hpp"

#include <cmath>
#include <cpptoml.h>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace meshperf::node {

namespace {

using core::spec_error;

constexpr const char* keys[] = {"gpus",       "rails",      "rail_rate_gbit",      "mtu",
                                 "nic_firmware", "nic_driver", "gpu_driver",        "loopback_floor_gbit",
                                 "h2d_floor_gb_per_s", "d2h_floor_gb_per_s"};

std::string known_keys() {
    std::string out;
    for (const auto* k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
    return out;
}

bool known(const std::string& key) {
    for (const auto* k : keys)
        if (key == k) return true;
    return false;
}

[[noreturn]] void bad(const std::string& origin, const std::string& key, const std::string& what) {
    throw spec_error(fmt::format("{}: {} {}", origin, key, what));
}

int count_in(const std::string& origin, const std::string& key, std::optional<std::int64_t> v, std::int64_t max) {
    if (!v) bad(origin, key, fmt::format("must be an integer 0 to {}", max));
    if (*v < 0 || *v > max) bad(origin, key, fmt::format("must be 0 to {}, not {}", max, *v));
    return static_cast<int>(*v);
}

double rate_in(const std::string& origin, std::optional<double> v, const char* key = "rail_rate_gbit") {
    if (!v || !std::isfinite(*v) || *v <= 0 || *v > 100000)
        bad(origin, key, "must be a number of Gbit/s above 0 (400, 200, 100, 25)");
    return *v;
}

/// nic_driver's one form, "mlx5_core 24.10-1.1.4": the driver's name, one space, its module
/// version (white space around and between is tidied).
std::string driver_in(const std::string& origin, const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (words.size() != 2)
        bad(origin, "nic_driver", fmt::format("must be the driver's name and its module version, \"mlx5_core 24.10-1.1.4\", "
                                              "not \"{}\"", text.size() > 60 ? text.substr(0, 57) + "..." : text));
    return words[0] + " " + words[1];
}

/// A copy floor in GB/s: above 0 and at most 10,000 (an H200's host link moves about 55).
double copy_floor_in(const std::string& origin, std::optional<double> v, const char* key) {
    if (!v || !std::isfinite(*v) || *v <= 0 || *v > 10000) bad(origin, key, "must be a number of GB/s above 0 (50, 25)");
    return *v;
}

/// The manifest field of a copy floor key, or null for another key.
std::optional<double>* copy_floor_field(node_manifest& m, const std::string& key) {
    if (key == "h2d_floor_gb_per_s") return &m.h2d_floor_gb_per_s;
    if (key == "d2h_floor_gb_per_s") return &m.d2h_floor_gb_per_s;
    return nullptr;
}

}  // namespace

node_manifest parse_manifest(std::string_view text, const std::string& origin) {
    std::shared_ptr<cpptoml::table> root;
    core::check_toml_nesting(text, origin);  // cpptoml recurses: a deep file would overflow the stack
    try {
        std::istringstream in{std::string(text)};
        root = cpptoml::parser(in).parse();
    } catch (const cpptoml::parse_exception& e) {
        throw spec_error(fmt::format("{}: not valid TOML: {}", origin, e.what()));
    }
    for (const auto& [key, value] : *root)
        if (!known(key) || value->is_table())
            bad(origin, "'" + key + "'", fmt::format("is not a manifest key (known: {})", known_keys()));
    node_manifest m;
    const auto integer = [&](const char* key) -> std::optional<std::int64_t> {
        const auto v = root->get(key);
        if (auto i = v->as<std::int64_t>()) return i->get();
        return std::nullopt;
    };
    const auto string = [&](const char* key) {
        const auto v = root->get(key)->as<std::string>();
        if (!v) bad(origin, key, "must be a string (quote it: \"28.39.1002\")");
        if (v->get().empty()) bad(origin, key, "is empty: remove the line to skip the check");
        return v->get();
    };
    if (root->contains("gpus")) m.gpus = count_in(origin, "gpus", integer("gpus"), 1024);
    if (root->contains("rails")) m.rails = count_in(origin, "rails", integer("rails"), 1024);
    if (root->contains("mtu")) m.mtu = count_in(origin, "mtu", integer("mtu"), 65536);
    if (root->contains("rail_rate_gbit")) {
        const auto v = root->get("rail_rate_gbit");
        std::optional<double> d;
        if (auto f = v->as<double>()) d = f->get();  // cpptoml gives integers as doubles too
        m.rail_rate_gbit = rate_in(origin, d);
    }
    if (root->contains("loopback_floor_gbit")) {
        std::optional<double> d;
        if (auto f = root->get("loopback_floor_gbit")->as<double>()) d = f->get();
        m.loopback_floor_gbit = rate_in(origin, d, "loopback_floor_gbit");
    }
    for (const char* key : {"h2d_floor_gb_per_s", "d2h_floor_gb_per_s"})
        if (root->contains(key)) {
            std::optional<double> d;
            if (auto f = root->get(key)->as<double>()) d = f->get();
            *copy_floor_field(m, key) = copy_floor_in(origin, d, key);
        }
    if (root->contains("nic_firmware")) m.nic_firmware = string("nic_firmware");
    if (root->contains("nic_driver")) m.nic_driver = driver_in(origin, string("nic_driver"));
    if (root->contains("gpu_driver")) m.gpu_driver = string("gpu_driver");
    return m;
}

node_manifest load_manifest(const std::filesystem::path& file) {
    return parse_manifest(transport::read_small_file(file, transport::max_config_file_bytes, "--expect"), file.string());
}

nlohmann::json to_json(const node_manifest& m) {
    nlohmann::json j = nlohmann::json::object();
    if (m.gpus) j["gpus"] = *m.gpus;
    if (m.rails) j["rails"] = *m.rails;
    if (m.rail_rate_gbit) j["rail_rate_gbit"] = *m.rail_rate_gbit;
    if (m.mtu) j["mtu"] = *m.mtu;
    if (m.nic_firmware) j["nic_firmware"] = *m.nic_firmware;
    if (m.nic_driver) j["nic_driver"] = *m.nic_driver;
    if (m.gpu_driver) j["gpu_driver"] = *m.gpu_driver;
    if (m.loopback_floor_gbit) j["loopback_floor_gbit"] = *m.loopback_floor_gbit;
    if (m.h2d_floor_gb_per_s) j["h2d_floor_gb_per_s"] = *m.h2d_floor_gb_per_s;
    if (m.d2h_floor_gb_per_s) j["d2h_floor_gb_per_s"] = *m.d2h_floor_gb_per_s;
    return j;
}

node_manifest manifest_from_json(const nlohmann::json& j) {
    const std::string origin = "expect";
    if (!j.is_object()) throw spec_error("expect: must be an object with the manifest's keys");
    node_manifest m;
    for (const auto& [key, v] : j.items()) {
        if (!known(key)) bad(origin, "'" + key + "'", fmt::format("is not a manifest key (known: {})", known_keys()));
        if (auto* floor = copy_floor_field(m, key)) {
            *floor = copy_floor_in(origin, v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt, key.c_str());
        } else if (key == "rail_rate_gbit" || key == "loopback_floor_gbit") {
            const auto rate = rate_in(origin, v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt, key.c_str());
            (key == "rail_rate_gbit" ? m.rail_rate_gbit : m.loopback_floor_gbit) = rate;
        } else if (key == "nic_firmware" || key == "gpu_driver" || key == "nic_driver") {
            if (!v.is_string() || v.get<std::string>().empty()) bad(origin, key, "must be a non-empty string");
            if (key == "nic_driver") m.nic_driver = driver_in(origin, v.get<std::string>());
            else (key == "nic_firmware" ? m.nic_firmware : m.gpu_driver) = v.get<std::string>();
        } else {
            // An unsigned beyond int64 (18446744073709551615) would wrap to -1 here: out of range, said as given.
            if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
                bad(origin, key, fmt::format("must be 0 to {}, not {}", key == "mtu" ? 65536 : 1024, v.get<std::uint64_t>()));
            const auto i = v.is_number_integer() ? std::optional<std::int64_t>(v.get<std::int64_t>()) : std::nullopt;
            const int n = count_in(origin, key, i, key == "mtu" ? 65536 : 1024);
            (key == "gpus" ? m.gpus : key == "rails" ? m.rails : m.mtu) = n;
        }
    }
    return m;
}

}  // namespace meshperf::node
