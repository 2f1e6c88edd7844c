#include "transport/rnic_loopback.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace meshperf::transport {

using nlohmann::json;

json to_json(const rnic_loopback_reading& r) {
    json j = {{"device", r.device}, {"port", r.port}, {"bytes", r.bytes}, {"seconds", r.seconds},
              {"device_fault", r.device_fault}};
    j["port_rate_gbit"] = r.port_rate_gbit ? json(*r.port_rate_gbit) : json(nullptr);
    j["gbit_per_s"] = r.gbit_per_s ? json(*r.gbit_per_s) : json(nullptr);
    j["error"] = r.error.empty() ? json(nullptr) : json(r.error);
    return j;
}

rnic_loopback_reading rnic_loopback_reading_from_json(const json& j) {
    if (!j.is_object() || !j.contains("device") || !j.at("device").is_string())
        throw core::spec_error("an RNIC loopback reading must be an object with a text \"device\"");
    rnic_loopback_reading r;
    r.device = j.at("device").get<std::string>();
    r.port = static_cast<unsigned>(core::json_unsigned(j.value("port", json(1)), "port"));
    const auto number = [&](const char* key) -> std::optional<double> {
        const auto it = j.find(key);
        if (it == j.end() || it->is_null()) return std::nullopt;
        if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
            throw core::spec_error(fmt::format("RNIC loopback reading: \"{}\" must be a number >= 0", key));
        return it->get<double>();
    };
    r.port_rate_gbit = number("port_rate_gbit");
    r.gbit_per_s = number("gbit_per_s");
    r.seconds = number("seconds").value_or(0);
    r.bytes = core::json_unsigned(j.value("bytes", json(0)), "bytes");
    if (const auto e = j.find("error"); e != j.end() && e->is_string()) r.error = e->get<std::string>();
    r.device_fault = j.value("device_fault", false);
    return r;
}

}  // namespace meshperf::transport
