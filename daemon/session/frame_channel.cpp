#include "daemon/session/frame_channel.hpp"

#include <fmt/format.h>
#include <system_error>

namespace meshperf::daemon {

frame_channel::frame_channel(std::unique_ptr<transport::byte_stream> stream, std::string leftover, std::string peer_name)
    : stream_(std::move(stream)), buf_(std::move(leftover)), peer_(std::move(peer_name)) {}

frame_channel::frame_channel(transport::socket_fd fd, std::string leftover, std::string peer_name)
    : frame_channel(transport::make_plain_stream(std::move(fd)), std::move(leftover), std::move(peer_name)) {}

void frame_channel::send(core::frame_type type, const nlohmann::json& body, clock::time_point deadline) {
    // Error texts may quote outside input: invalid UTF-8 is replaced, never thrown on.
    const auto frame = core::encode_frame(type, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    try {
        stream_->send_all(frame.data(), frame.size(), deadline);
    } catch (const transport::tls_error& e) {
        throw session_error(fmt::format("lost the session with {} while sending {}: {}", peer_,
                                        core::frame_type_name(static_cast<std::uint16_t>(type)), e.what()));
    } catch (const std::system_error& e) {
        throw session_error(fmt::format("lost the session with {} while sending {}: {}", peer_,
                                        core::frame_type_name(static_cast<std::uint16_t>(type)), e.code().message()));
    }
}

std::optional<session_message> frame_channel::decode_buffered() {
    const auto f = core::decode_frame(buf_);
    if (f.status == core::decode_status::need_more) return std::nullopt;
    if (f.status == core::decode_status::bad) throw session_error(fmt::format("{} sent a bad frame: {}", peer_, f.error));
    session_message m{static_cast<core::frame_type>(f.type), {}};
    try {
        m.body = nlohmann::json::parse(f.payload);
    } catch (const nlohmann::json::exception&) {
        throw session_error(fmt::format("{} sent a {} frame whose body is not JSON", peer_, core::frame_type_name(f.type)));
    }
    buf_.erase(0, f.consumed);
    if (m.type == core::frame_type::error)
        throw peer_reported_error(m.body.is_object() && m.body.contains("message") && m.body["message"].is_string()
                                ? m.body["message"].get<std::string>()
                                : fmt::format("{} reported an error", peer_),
                                  m.body);
    return m;
}

std::optional<session_message> frame_channel::try_receive(clock::time_point deadline) {
    while (true) {
        if (auto m = decode_buffered()) return m;
        char tmp[65536];
        std::size_t n = 0;
        try {
            n = stream_->recv_some(tmp, sizeof tmp, deadline);
        } catch (const transport::tls_error& e) {
            throw session_error(fmt::format("lost the session with {}: {}", peer_, e.what()));
        } catch (const std::system_error& e) {
            if (e.code().value() == ETIMEDOUT) return std::nullopt;
            throw session_error(fmt::format("lost the session with {}: {}", peer_, e.code().message()));
        }
        if (n == 0) throw session_error(fmt::format("{} closed the session", peer_));
        buf_.append(tmp, n);
    }
}

session_message frame_channel::receive(clock::time_point deadline) {
    if (auto m = try_receive(deadline)) return std::move(*m);
    throw session_error(fmt::format("{} did not answer in time", peer_));
}

}  // namespace meshperf::daemon
