#pragma once
/// The one way meshperf writes a JSON document as text: strings that are not valid UTF-8
/// (an interface or host name may hold any byte but '/' and NUL) are written with U+FFFD in
/// place of each bad byte, as the daemon's API writes them, instead of nlohmann's
/// type_error.316 ending the program with nothing printed.
#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::core {

/// `j` as text: compact with indent < 0, else pretty with that indent; never throws for
/// bytes that are not UTF-8.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace meshperf::core
