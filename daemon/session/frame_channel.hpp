#pragma once
/// Blocking peer-session frames over a socket, with deadlines. Used by the initiator and the
/// responder on their session threads (never on the HTTP I/O thread).
#include "core/frame.hpp"
#include "transport/byte_stream.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace meshperf::daemon {

/// The session broke: the peer closed it, sent garbage, fell silent, or reported an error.
/// what() is a sentence fit for the user.
class session_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The peer sent an error frame: what() is its message, `body` the whole frame body (a
/// collective rank's names the rank it blames in "blame").
class peer_reported_error : public session_error {
public:
    peer_reported_error(const std::string& what, nlohmann::json frame_body)
        : session_error(what), body(std::move(frame_body)) {}
    nlohmann::json body;
};

/// One decoded message: a frame type and its JSON body.
struct session_message {
    core::frame_type type;
    nlohmann::json body;
};

class frame_channel {
public:
    using clock = transport::clock;
    /// Takes the connected stream (plain or TLS) and any bytes already read past the
    /// upgrade. `peer_name` names the other side in error messages.
    frame_channel(std::unique_ptr<transport::byte_stream> stream, std::string leftover, std::string peer_name);
    /// The same over a plain socket.
    frame_channel(transport::socket_fd fd, std::string leftover, std::string peer_name);

    /// Sends one message. Throws session_error when the peer is gone or too slow.
    void send(core::frame_type type, const nlohmann::json& body, clock::time_point deadline);
    /// Receives one message, waiting until the deadline. Throws session_error on timeout,
    /// end of stream, a bad frame, malformed JSON, or peer_reported_error for an error frame.
    session_message receive(clock::time_point deadline);
    /// Like receive, but returns nullopt when nothing arrives before the deadline.
    std::optional<session_message> try_receive(clock::time_point deadline);

    /// The socket underneath (for addresses only: never read or write it).
    int fd() const { return stream_->fd(); }
    /// True when the session travels over TLS.
    bool encrypted() const { return stream_->encrypted(); }
    const std::string& peer_name() const { return peer_; }

private:
    std::optional<session_message> decode_buffered();

    std::unique_ptr<transport::byte_stream> stream_;
    std::string buf_;
    std::string peer_;
};

}  // namespace meshperf::daemon
