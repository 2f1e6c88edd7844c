#pragma once
/// What a local copy sweep measures (`meshperf local`, POST /v1/local): copy directions,
/// sizes, GPU, verification. Its JSON form is the body of POST /v1/local; the CLI builds it,
/// the daemon reads it back with the same checks, in builds with and without CUDA (so a bad
/// request is a usage error everywhere). Pure; gpu::parse_copy_kinds turns the checked
/// names into gpu::copy_kind (tests/gpu/local_doc_test.cpp checks that both agree).
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace meshperf::core {

/// Most sizes one sweep may list: at about 0.1 s per size and copy direction this keeps a
/// daemon's sweep to minutes, and refuses absurd lists (a 400 on the daemon).
inline constexpr std::size_t max_local_copy_sizes = 64;
/// Highest GPU index a sweep may name (the node's device count is checked where it runs).
inline constexpr int max_local_copy_device = 1023;

/// A copy sweep. Defaults are those of `meshperf local`.
struct local_copy_spec {
    /// Comma list of h2d, d2h, d2d, p2p, as given (a name may repeat).
    std::string copies = "h2d,d2h,d2d";
    std::vector<std::uint64_t> sizes;  ///< bytes, ascending, unique, each 1 B..1 GiB; empty = 4K..1G
    int device = 0;                    ///< GPU for h2d, d2h, d2d (cuda:N)
    bool verify = false;               ///< check the copied bytes
    /// Each copy on every GPU of the node at once (gpu/all_gpu_copies.hpp) instead of on
    /// `device`; p2p is refused with it. JSON "all_gpus", sent only when true.
    bool all_gpus = false;
};

/// Throws spec_error unless copies is a comma list of h2d, d2h, d2d, p2p (no empty item),
/// sizes has 1..max_local_copy_sizes entries,
/// each in 1..max_message_size, ascending and unique, and device is in
/// 0..max_local_copy_device, and all_gpus without p2p. Messages name the field ("field 'sizes': ...").
void validate(const local_copy_spec&);

/// Reads {"copies": "h2d,d2h" | ["h2d", ...], "sizes": "4K..1G" | [4096, ...],
/// "device": 0, "verify": false, "all_gpus": false}; every field is optional (sizes default to 4K..1G). Array
/// sizes are sorted and deduplicated. Throws spec_error with a sentence naming the field:
/// not an object, an unknown field, a wrong type, or what validate() refuses.
local_copy_spec local_copy_spec_from_json(const nlohmann::json&);

/// {"copies": "...", "sizes": [...], "device": N, "verify": b}, and "all_gpus": true when
/// set (a daemon older than it refuses the field rather than sweep one GPU): the body of
/// POST /v1/local.
nlohmann::json to_json(const local_copy_spec&);

}  // namespace meshperf::core
