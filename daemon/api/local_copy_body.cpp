// The body of POST /v1/local, read the same way by both builds of the route.
#include "core/error.hpp"
#include "daemon/api/local_copy_route.hpp"

#include <nlohmann/json.hpp>

namespace meshperf::daemon {

core::local_copy_spec read_local_copy_body(const std::string& body) {
    const auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded())
        throw core::spec_error("the request body is not valid JSON: send an object such as "
                               "{\"copies\": \"h2d,d2h,d2d\", \"sizes\": \"4K..1G\", \"device\": 0}");
    return core::local_copy_spec_from_json(j);
}

}  // namespace meshperf::daemon
