#include "transport/rnic_loopback.hpp"

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

}  // namespace meshperf::transport
