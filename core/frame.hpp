#pragma once
/// Peer-session frame codec. After the HTTP upgrade, daemons exchange frames:
///
///     offset 0  4 bytes  magic "MPF1"
///     offset 4  2 bytes  frame type (big-endian)
///     offset 6  2 bytes  reserved, must be 0
///     offset 8  4 bytes  payload length (big-endian), at most max_frame_payload
///     offset 12 payload  UTF-8 JSON object
///
/// Pure byte handling: no I/O. The decoder never reads past the input and rejects garbage
/// at the first byte that cannot belong to a valid frame.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace meshperf::core {

inline constexpr std::size_t frame_header_size = 12;
inline constexpr std::uint32_t max_frame_payload = 1u << 20;

/// Session message types. Values are part of the protocol: never renumber.
enum class frame_type : std::uint16_t {
    hello = 1,         ///< initiator -> peer: protocol version, run spec, initiator host
    hello_ok = 2,      ///< peer -> initiator: peer host info
    point_begin = 3,   ///< initiator -> peer: test, size, point index, stream tokens
    point_ready = 4,   ///< peer -> initiator: peer is waiting for the data streams
    progress = 5,      ///< either way: receiver counters snapshot
    point_stop = 6,    ///< initiator -> peer: stop sending
    point_done = 7,    ///< peer -> initiator: peer's side of the point (figures, CPU, verify)
    error = 8,         ///< either way: a fatal error with a message; the session ends
    bye = 9,           ///< initiator -> peer: the run is over
    endpoint = 10,     ///< either way: transport endpoint details (RDMA QPN, PSN, GID, rkey, address)
    point_go = 11,     ///< initiator -> peer: every data stream is connected; start the loops
    heartbeat = 12,    ///< initiator -> peer: still here, during and at the end of a point (liveness, not progress)
};

/// Name of a frame type for messages ("hello", "point_done", or "type 77").
std::string frame_type_name(std::uint16_t type);

/// Encodes one frame. Throws std::length_error when the payload exceeds max_frame_payload.
std::string encode_frame(frame_type type, std::string_view payload);

/// Outcome of decode_frame.
enum class decode_status {
    need_more,  ///< the input holds a valid prefix of a frame; read more bytes
    ok,         ///< a whole frame was decoded
    bad,        ///< the input is not a frame; close the session
};

struct decoded_frame {
    decode_status status = decode_status::need_more;
    std::uint16_t type = 0;
    std::string_view payload;  ///< points into the input (valid while it lives)
    std::size_t consumed = 0;  ///< bytes to drop from the input after an ok frame
    std::string error;         ///< why a frame is bad
};

/// Decodes the first frame in input. Unknown types decode as ok (the caller rejects them
/// with a message naming the type); a wrong magic, a non-zero reserved field or an
/// oversized length are bad.
decoded_frame decode_frame(std::span<const char> input);

}  // namespace meshperf::core
