#include "core/local_copy_spec.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/sizes.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string_view>

namespace meshperf::core {

using nlohmann::json;

namespace {

std::string read_copies(const json& v) {
    const auto bad = [&] {
        return spec_error(fmt::format("field 'copies' must be a string such as \"h2d,d2h,d2d\" or an array of such names, "
                                      "not {}", v.dump()));
    };
    if (v.is_string()) return v.get<std::string>();
    if (!v.is_array() || v.empty()) throw bad();
    std::string out;
    for (const auto& item : v) {
        if (!item.is_string()) throw bad();
        out += (out.empty() ? "" : ",") + item.get<std::string>();
    }
    return out;
}

std::vector<std::uint64_t> read_sizes(const json& v) {
    size_list list;
    try {
        if (v.is_string()) {
            list = parse_size_list_as_written(v.get<std::string>());
        } else if (v.is_array()) {
            list = make_size_list(json_unsigned_list(v, "sizes[]"));
        } else {
            throw spec_error(fmt::format("must be a string such as \"4K..1G\" or an array of byte counts, not {}", v.dump()));
        }
    } catch (const spec_error& e) {
        throw spec_error(fmt::format("field 'sizes': {}", e.what()));
    }
    // Measured as sent or refused (400): the API never reorders silently (docs/api.md).
    require_ascending("sizes", list);
    return std::move(list.sizes);
}

int read_device(const json& v) {
    std::int64_t d = -1;  // nlohmann stores a non-negative JSON integer as unsigned
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u <= static_cast<std::uint64_t>(max_local_copy_device)) d = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        d = v.get<std::int64_t>();
    }
    if (d >= 0 && d <= max_local_copy_device) return static_cast<int>(d);
    throw spec_error(fmt::format("field 'device' must be a GPU index 0..{} (cuda:N), not {}", max_local_copy_device, v.dump()));
}

}  // namespace

void validate(const local_copy_spec& s) {
    if (s.copies.empty()) throw spec_error("field 'copies' is empty: give one or more of h2d, d2h, d2d, p2p");
    for (std::size_t pos = 0; pos <= s.copies.size();) {
        const auto comma = std::min(s.copies.find(',', pos), s.copies.size());
        const auto item = std::string_view(s.copies).substr(pos, comma - pos);
        if (item != "h2d" && item != "d2h" && item != "d2d" && item != "p2p")
            throw spec_error(fmt::format("field 'copies': unknown copy '{}' in '{}': use h2d, d2h, d2d or p2p, comma-separated",
                                         item, s.copies));
        pos = comma + 1;
    }
    if (s.sizes.empty()) throw spec_error("field 'sizes' is empty: give sizes such as \"4K..1G\" or [4096, 1048576]");
    if (s.sizes.size() > max_local_copy_sizes)
        throw spec_error(fmt::format("field 'sizes' lists {} sizes; a copy sweep takes at most {}: use a range such as "
                                     "\"4K..1G\" (powers of two) or fewer sizes",
                                     s.sizes.size(), max_local_copy_sizes));
    for (auto sz : s.sizes)
        if (sz == 0 || sz > max_message_size)
            throw spec_error(fmt::format("field 'sizes': size {} is out of range: sizes run from 1 B to {}", sz,
                                         format_size(max_message_size)));
    if (!std::is_sorted(s.sizes.begin(), s.sizes.end()) || std::adjacent_find(s.sizes.begin(), s.sizes.end()) != s.sizes.end())
        throw spec_error("field 'sizes' must be ascending and unique");
    if (s.device < 0 || s.device > max_local_copy_device)
        throw spec_error(fmt::format("field 'device' must be a GPU index 0..{} (cuda:N), not {}", max_local_copy_device, s.device));
    if (s.all_gpus && ("," + s.copies + ",").find(",p2p,") != std::string::npos)
        throw spec_error("field 'all_gpus' with p2p in 'copies': the GPU-to-GPU matrix already measures every pair; on all "
                         "GPUs at once give h2d, d2h or d2d");
}

local_copy_spec local_copy_spec_from_json(const json& j) {
    if (!j.is_object())
        throw spec_error(fmt::format("a copy sweep request must be a JSON object such as {{\"copies\": \"h2d\", \"sizes\": "
                                     "\"4K..1G\"}}, not {}",
                                     j.type_name()));
    local_copy_spec s;
    for (const auto& [key, v] : j.items()) {
        if (key == "copies") s.copies = read_copies(v);
        else if (key == "sizes") s.sizes = read_sizes(v);
        else if (key == "device") s.device = read_device(v);
        else if (key == "verify") {
            if (!v.is_boolean()) throw spec_error(fmt::format("field 'verify' must be true or false, not {}", v.dump()));
            s.verify = v.get<bool>();
        } else if (key == "all_gpus") {
            if (!v.is_boolean()) throw spec_error(fmt::format("field 'all_gpus' must be true or false, not {}", v.dump()));
            s.all_gpus = v.get<bool>();
        } else {
            throw spec_error(fmt::format("unknown field '{}' in a copy sweep request: the fields are copies, sizes, device, "
                                         "verify and all_gpus", key));
        }
    }
    if (!j.contains("sizes")) s.sizes = parse_size_list("4K..1G");
    validate(s);
    return s;
}

json to_json(const local_copy_spec& s) {
    json j = {{"copies", s.copies}, {"sizes", s.sizes}, {"device", s.device}, {"verify", s.verify}};
    if (s.all_gpus) j["all_gpus"] = true;
    return j;
}

}  // namespace meshperf::core
