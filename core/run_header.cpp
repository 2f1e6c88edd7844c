#include "core/run_header.hpp"

namespace meshperf::core {

using nlohmann::json;

void write_run_header(json& j, const run_header& h, const char* schema) {
    j["schema"] = schema;
    j["id"] = h.id;
    j["state"] = std::string(h.state.text());
    j["created_at"] = h.created_at;
    j["finished_at"] = h.finished_at.empty() ? json(nullptr) : json(h.finished_at);
    j["error"] = h.error.empty() ? json(nullptr) : json(h.error);
    j["warnings"] = h.warnings;
}

}  // namespace meshperf::core
