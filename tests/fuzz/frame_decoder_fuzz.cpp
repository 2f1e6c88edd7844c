/// Fuzz target: the peer-session byte stream. Bytes arrive in chunks and are decoded as
/// daemon/session/frame_channel.cpp does (append, decode_frame until need_more, drop what an ok frame
/// consumed, stop at a bad frame); each payload is parsed as JSON, and its body goes through
/// the pure functions the initiator and responder apply to it (run spec of a hello, host of
/// a hello_ok, point_begin fields, progress snapshots into a flow_tracker, the figures of a
/// point_done, an error's message). The session code turns any std::exception into a session
/// error, so those are expected; memory errors, undefined behaviour, aborts and broken
/// properties are not.
#include "core/json_fields.hpp"
#include "core/error.hpp"
#include "core/flow_tracker.hpp"
#include "core/frame.hpp"
#include "core/result.hpp"
#include "core/run_spec.hpp"
#include "tests/fuzz/fuzz_checks.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using meshperf::fuzz::property_failed;
using nlohmann::json;
namespace core = meshperf::core;

/// What one session does with message bodies, with the state the initiator keeps per point.
struct session_model {
    core::flow_tracker forward{2, 0.1};  // the initiator's tracker of a two-stream point
    core::run_spec spec;

    void interpret(std::uint16_t type, const json& body) {
        (void)core::frame_type_name(type);
        switch (static_cast<core::frame_type>(type)) {
            case core::frame_type::hello:  // responder
                spec = core::run_spec_from_json(body.at("spec"));
                (void)body.value("run_id", "?");
                break;
            case core::frame_type::hello_ok:  // initiator
                (void)core::host_info_from_json(body.value("host", json::object()));
                break;
            case core::frame_type::point_begin: {  // responder
                (void)core::parse_test_kind(body.at("test").get<std::string>());
                (void)core::json_unsigned(body.at("size"), "size");
                (void)body.at("token").get<std::string>();
                (void)core::json_unsigned(body.at("index"), "index", UINT32_MAX);
                break;
            }
            case core::frame_type::progress:  // initiator: handle_progress
                if (body.contains("t_s") && body.contains("bytes"))
                    forward.add(body["t_s"].get<double>(), core::json_unsigned_list(body["bytes"], "bytes"));
                if (forward.intervals() >= 1) {
                    (void)forward.relative_half_width();
                    (void)forward.figures("initiator->peer", 65536);
                }
                break;
            case core::frame_type::point_done: {  // initiator: assemble
                (void)body.value("cpu_s", 0.0);
                (void)body.value("wall_s", 0.0);
                const auto size = body.contains("size") ? core::json_unsigned(body["size"], "size") : std::uint64_t{65536};
                (void)core::fixed_count_figures("initiator->peer", size, core::json_unsigned_list(body.at("measured_bytes"), "measured_bytes"),
                                                core::json_signed_list(body.at("begin_ns"), "begin_ns"),
                                                core::json_signed_list(body.at("end_ns"), "end_ns"));
                break;
            }
            case core::frame_type::error:  // frame_channel: the error's message ends the session
                if (body.is_object() && body.contains("message") && body["message"].is_string())
                    (void)body["message"].get<std::string>();
                break;
            default:
                break;
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    // The first byte chooses how the bytes arrive: recv() may return any split.
    const std::size_t chunk = 1 + (data[0] & 0x3f) * ((data[0] & 0x40) ? 64 : 1);
    std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::string buf;
    session_model session;
    while (true) {
        const auto f = core::decode_frame(buf);
        if (f.status == core::decode_status::bad) {
            if (f.error.empty()) property_failed("a bad frame without a reason");
            return 0;
        }
        if (f.status == core::decode_status::need_more) {
            if (rest.empty()) return 0;
            const auto n = std::min(chunk, rest.size());
            buf.append(rest.substr(0, n));
            rest.remove_prefix(n);
            continue;
        }
        if (f.consumed != core::frame_header_size + f.payload.size() || f.consumed > buf.size() ||
            f.payload.size() > core::max_frame_payload)
            property_failed("decode_frame's ok frame does not fit its input");
        // An ok frame re-encodes to the bytes it came from.
        if (core::encode_frame(static_cast<core::frame_type>(f.type), f.payload) != std::string_view(buf).substr(0, f.consumed))
            property_failed("encode_frame(decode_frame(x)) != x");
        const auto body = json::parse(f.payload, nullptr, false);
        if (body.is_discarded()) return 0;  // session_error: "sent a ... frame whose body is not JSON"
        try {
            session.interpret(f.type, body);
        } catch (const std::exception&) {
            return 0;  // the session ends with an error message
        }
        buf.erase(0, f.consumed);
    }
}
