#pragma once
/// TLS for the control plane (API calls, peer sessions), on OpenSSL. Measurement data
/// streams never use it: they are plain TCP, opened only for a session that authenticated
/// over the encrypted control connection, and name themselves with that session's one-time
/// token.
///
/// The server side of meshperfd's listener uses Asio's TLS stream over the same SSL_CTX
/// (daemon/http_server); this file is the blocking client side (CLI, daemon opening a peer
/// session) and the certificate set-up both share.
#include "transport/byte_stream.hpp"

#include <memory>
#include <string>

#include <openssl/types.h>

namespace meshperf::transport {

/// PEM files of one side. All empty: TLS off.
struct tls_files {
    std::string cert_file;  ///< this side's certificate chain (leaf first)
    std::string key_file;   ///< its private key (must not be readable by others)
    std::string ca_file;    ///< CA bundle the other side's certificate must chain to
    bool enabled() const { return !cert_file.empty() || !key_file.empty() || !ca_file.empty(); }
};

/// An OpenSSL context (SSL_CTX) loaded from tls_files. Thread-safe to share: connections
/// are created from it concurrently.
class tls_context {
public:
    enum class role { client, server };

    /// Server: certificate and key are required; with a CA file, every client must present a
    /// certificate that CA signed (mutual TLS). Client: with a CA file the server's
    /// certificate must chain to it (else to the system's trust store) and name the host
    /// connected to; certificate and key, when given, are presented to servers that ask.
    /// TLS 1.2 or newer. Throws core::spec_error naming the file and what is wrong.
    tls_context(role r, const tls_files& files);
    ~tls_context();
    tls_context(const tls_context&) = delete;
    tls_context& operator=(const tls_context&) = delete;

    /// The OpenSSL context; owned by this object.
    SSL_CTX* native() const { return ctx_; }
    role which() const { return role_; }
    /// True when the other side must present a certificate this side verifies.
    bool requires_peer_certificate() const { return require_peer_cert_; }

private:
    SSL_CTX* ctx_ = nullptr;
    role role_;
    bool require_peer_cert_ = false;
};

/// Runs the client handshake on a connected socket and checks the server's certificate
/// against `host` (a DNS name or an IP literal, as the user wrote it). Throws
/// std::system_error (ETIMEDOUT past the deadline) or tls_error with a sentence ("TLS with 10.0.0.2:7470 failed: certificate verify failed (self-signed
/// certificate); give the cluster CA with --tls-ca").
std::unique_ptr<byte_stream> tls_connect(socket_fd fd, const tls_context& ctx, const std::string& host,
                                         clock::time_point deadline);

/// The first byte of a TLS connection (a handshake record), which no HTTP request starts
/// with: how one port tells TLS from plain connections.
inline constexpr unsigned char tls_handshake_record = 0x16;

}  // namespace meshperf::transport
