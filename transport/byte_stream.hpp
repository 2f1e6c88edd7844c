#pragma once
/// A connected byte stream with deadlines: a plain socket, or a TLS connection over one.
/// The peer session (frame_channel) and the HTTP client read and write through it, so they
/// do not care whether the control plane is encrypted. Blocking; one thread at a time.
#include "transport/socket.hpp"

#include <memory>
#include <string>
#include <system_error>

namespace meshperf::transport {

/// A TLS failure (handshake refused, certificate not accepted, protocol error). what() is a
/// whole sentence that says what to do; code() is EPROTO.
class tls_error : public std::system_error {
public:
    explicit tls_error(std::string message)
        : std::system_error(std::make_error_code(std::errc::protocol_error)), message_(std::move(message)) {}
    const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

class byte_stream {
public:
    virtual ~byte_stream() = default;
    /// Writes all bytes before the deadline. Throws std::system_error (ETIMEDOUT on the
    /// deadline, EPIPE/ECONNRESET when the peer is gone; tls_error for TLS failures).
    virtual void send_all(const void* data, std::size_t len, clock::time_point deadline) = 0;
    /// Reads up to len bytes, waiting until the deadline for at least one. Returns 0 at end
    /// of stream. Throws std::system_error (ETIMEDOUT on the deadline; the stream stays
    /// usable after a timeout).
    virtual std::size_t recv_some(void* data, std::size_t len, clock::time_point deadline) = 0;
    /// The socket underneath, for addresses and readiness (never read or write it directly).
    virtual int fd() const = 0;
    /// True when the bytes travel encrypted.
    virtual bool encrypted() const = 0;
    /// For a plain stream: gives the socket up (the stream is empty afterwards). A TLS
    /// stream cannot hand its socket over and throws std::logic_error.
    virtual socket_fd release_socket() = 0;
};

/// A stream over a plain, connected socket.
std::unique_ptr<byte_stream> make_plain_stream(socket_fd fd);

}  // namespace meshperf::transport
