#include "core/json_fields.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

namespace meshperf::core {

std::uint64_t json_unsigned(const nlohmann::json& value, std::string_view field, std::uint64_t max) {
    if (value.is_number_unsigned()) {
        const auto v = value.get<std::uint64_t>();
        if (v <= max) return v;
    } else if (value.is_number_integer()) {  // stored signed: negative here
        const auto v = value.get<std::int64_t>();
        if (v >= 0 && static_cast<std::uint64_t>(v) <= max) return static_cast<std::uint64_t>(v);
    }
    throw spec_error(fmt::format("'{}' must be an integer in 0..{}, not {}", field, max, value.dump()));
}

std::int64_t json_signed(const nlohmann::json& value, std::string_view field) {
    if (value.is_number_unsigned()) {
        const auto v = value.get<std::uint64_t>();
        if (v <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(v);
    } else if (value.is_number_integer()) {
        return value.get<std::int64_t>();
    }
    throw spec_error(fmt::format("'{}' must be a 64-bit integer, not {}", field, value.dump()));
}

namespace {

template <class T, class Read>
std::vector<T> read_list(const nlohmann::json& value, std::string_view field, Read read) {
    if (!value.is_array()) throw spec_error(fmt::format("'{}' must be an array of integers", field));
    std::vector<T> out;
    out.reserve(value.size());
    for (const auto& v : value) out.push_back(read(v, field));
    return out;
}

}  // namespace

std::vector<std::uint64_t> json_unsigned_list(const nlohmann::json& value, std::string_view field) {
    return read_list<std::uint64_t>(value, field, [](const nlohmann::json& v, std::string_view f) { return json_unsigned(v, f); });
}

std::vector<std::int64_t> json_signed_list(const nlohmann::json& value, std::string_view field) {
    return read_list<std::int64_t>(value, field, json_signed);
}

}  // namespace meshperf::core
