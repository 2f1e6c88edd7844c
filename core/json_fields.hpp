#pragma once
/// Integer fields of JSON that another program sent (a peer's session messages, a client's
/// request), read without undefined behaviour. nlohmann's get<integer>() casts a stored
/// float (1e300, -9.2e18) straight to the integer type, which is undefined when out of
/// range; these check first. Pure functions; throw core::spec_error naming the field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace meshperf::core {

/// An integer in 0..max. Floats (even 3.0), negatives, strings and values above max throw.
std::uint64_t json_unsigned(const nlohmann::json& value, std::string_view field,
                            std::uint64_t max = UINT64_MAX);
/// An integer in INT64_MIN..INT64_MAX. Floats, strings and larger unsigned values throw.
std::int64_t json_signed(const nlohmann::json& value, std::string_view field);
/// An array of json_unsigned / json_signed values.
std::vector<std::uint64_t> json_unsigned_list(const nlohmann::json& value, std::string_view field);
std::vector<std::int64_t> json_signed_list(const nlohmann::json& value, std::string_view field);

}  // namespace meshperf::core
