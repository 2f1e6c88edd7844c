#include "transport/tls.hpp"

#include "core/error.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <filesystem>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdexcept>
#include <sys/stat.h>
#include <system_error>

namespace meshperf::transport {
namespace {

/// The oldest queued OpenSSL error as text ("error:0A000086:SSL routines::certificate verify
/// failed" → "certificate verify failed"), and clears the queue.
std::string openssl_reason() {
    std::string reason;
    while (const auto e = ERR_get_error()) {
        if (reason.empty()) {
            const char* r = ERR_reason_error_string(e);
            reason = r ? r : fmt::format("OpenSSL error {:x}", e);
        }
    }
    return reason.empty() ? "unknown TLS error" : reason;
}

[[noreturn]] void throw_tls(const std::string& message) { throw tls_error(message); }

void require_readable_file(const std::string& path, const char* option) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw core::spec_error(fmt::format("{} {}: no such file (give a PEM file)", option, path));
}

bool is_ip_literal(const std::string& host) {
    unsigned char buf[16];
    return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

/// A client-side TLS connection on a non-blocking socket; every wait is a poll with the
/// caller's deadline, so a silent server cannot hang the caller.
class openssl_stream final : public byte_stream {
public:
    openssl_stream(socket_fd fd, SSL* ssl) : fd_(std::move(fd)), ssl_(ssl) {}
    ~openssl_stream() override {
        // Best effort close_notify; never waits.
        if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
        SSL_free(ssl_);
        ERR_clear_error();
    }

    void send_all(const void* data, std::size_t len, clock::time_point deadline) override {
        const auto* p = static_cast<const char*>(data);
        while (len > 0) {
            std::size_t written = 0;
            const int rc = SSL_write_ex(ssl_, p, len, &written);
            if (rc == 1) { p += written; len -= written; continue; }
            wait_or_throw(SSL_get_error(ssl_, rc), deadline, "send");
        }
    }

    std::size_t recv_some(void* data, std::size_t len, clock::time_point deadline) override {
        while (true) {
            std::size_t got = 0;
            const int rc = SSL_read_ex(ssl_, data, len, &got);
            if (rc == 1) return got;
            const int err = SSL_get_error(ssl_, rc);
            if (err == SSL_ERROR_ZERO_RETURN) return 0;
            wait_or_throw(err, deadline, "receive");
        }
    }

    int fd() const override { return fd_.get(); }
    bool encrypted() const override { return true; }
    socket_fd release_socket() override { throw std::logic_error("a TLS stream cannot hand over its socket"); }

    /// Waits for the readiness OpenSSL asked for, or throws what the error means.
    void wait_or_throw(int ssl_error, clock::time_point deadline, const char* what) {
        if (ssl_error == SSL_ERROR_WANT_READ) {
            if (!wait_readable(fd_.get(), deadline)) throw std::system_error(ETIMEDOUT, std::generic_category(), what);
            return;
        }
        if (ssl_error == SSL_ERROR_WANT_WRITE) {
            if (!wait_writable(fd_.get(), deadline)) throw std::system_error(ETIMEDOUT, std::generic_category(), what);
            return;
        }
        if (ssl_error == SSL_ERROR_SYSCALL) {
            const int e = errno != 0 ? errno : ECONNRESET;
            ERR_clear_error();
            throw std::system_error(e, std::generic_category(), what);
        }
        throw_tls(fmt::format("TLS {}: {}", what, openssl_reason()));
    }

    SSL* ssl() const { return ssl_; }

private:
    socket_fd fd_;
    SSL* ssl_;
};

}  // namespace

tls_context::tls_context(role r, const tls_files& files) : role_(r) {
    ctx_ = SSL_CTX_new(r == role::server ? TLS_server_method() : TLS_client_method());
    if (!ctx_) throw std::runtime_error("SSL_CTX_new: " + openssl_reason());
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    // A peer that closes without close_notify ends the stream like a plain socket would.
    SSL_CTX_set_options(ctx_, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    try {
        if (r == role::server && (files.cert_file.empty() || files.key_file.empty()))
            throw core::spec_error("TLS needs both --tls-cert and --tls-key on the daemon (PEM files)");
        if (files.cert_file.empty() != files.key_file.empty())
            throw core::spec_error("give --tls-cert and --tls-key together (a certificate and its private key)");
        if (!files.cert_file.empty()) {
            require_readable_file(files.cert_file, "--tls-cert");
            require_readable_file(files.key_file, "--tls-key");
            struct stat st{};
            if (::stat(files.key_file.c_str(), &st) == 0 && (st.st_mode & S_IROTH))
                throw core::spec_error(fmt::format("--tls-key {} is readable by others (mode {:04o}): chmod 600 it (or 640 "
                                                   "with the service's group)", files.key_file, st.st_mode & 07777));
            if (SSL_CTX_use_certificate_chain_file(ctx_, files.cert_file.c_str()) != 1)
                throw core::spec_error(fmt::format("--tls-cert {}: not a PEM certificate ({})", files.cert_file, openssl_reason()));
            if (SSL_CTX_use_PrivateKey_file(ctx_, files.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
                const auto reason = openssl_reason();
                if (reason.find("mismatch") == std::string::npos)
                    throw core::spec_error(fmt::format("--tls-key {}: not a PEM private key ({})", files.key_file, reason));
                throw core::spec_error(fmt::format("--tls-key {} does not belong to the certificate in {}", files.key_file,
                                                   files.cert_file));
            }
            if (SSL_CTX_check_private_key(ctx_) != 1)
                throw core::spec_error(fmt::format("--tls-key {} does not belong to the certificate in {}", files.key_file,
                                                   files.cert_file));
        }
        if (!files.ca_file.empty()) {
            require_readable_file(files.ca_file, "--tls-ca");
            if (SSL_CTX_load_verify_locations(ctx_, files.ca_file.c_str(), nullptr) != 1)
                throw core::spec_error(fmt::format("--tls-ca {}: no PEM certificate in it ({})", files.ca_file, openssl_reason()));
        } else if (r == role::client) {
            SSL_CTX_set_default_verify_paths(ctx_);
        }
        if (r == role::client) {
            SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
            require_peer_cert_ = true;
        } else if (!files.ca_file.empty()) {
            SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
            require_peer_cert_ = true;
        }
    } catch (...) {
        SSL_CTX_free(ctx_);
        ERR_clear_error();
        throw;
    }
}

tls_context::~tls_context() { SSL_CTX_free(ctx_); }

std::unique_ptr<byte_stream> tls_connect(socket_fd fd, const tls_context& ctx, const std::string& host,
                                         clock::time_point deadline) {
    set_blocking(fd.get(), false);
    SSL* ssl = SSL_new(ctx.native());
    if (!ssl) throw_tls("SSL_new: " + openssl_reason());
    const int raw_fd = fd.get();
    auto stream = std::make_unique<openssl_stream>(std::move(fd), ssl);
    SSL_set_fd(ssl, raw_fd);
    if (is_ip_literal(host)) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
    } else {
        SSL_set_tlsext_host_name(ssl, host.c_str());
        SSL_set1_host(ssl, host.c_str());
    }
    while (true) {
        const int rc = SSL_connect(ssl);
        if (rc == 1) break;
        const int err = SSL_get_error(ssl, rc);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
            stream->wait_or_throw(err, deadline, "handshake");
            continue;
        }
        if (const auto v = SSL_get_verify_result(ssl); v != X509_V_OK) {
            ERR_clear_error();
            throw_tls(fmt::format("TLS with {}: its certificate is not accepted ({}); give the CA that signed it with "
                                  "--tls-ca, and make sure it names {} in its subjectAltName",
                                  host, X509_verify_cert_error_string(v), host));
        }
        if (err == SSL_ERROR_SYSCALL) {
            ERR_clear_error();
            throw_tls(fmt::format("TLS with {}: the connection closed during the handshake; does that meshperfd have "
                                  "TLS enabled (--tls-cert), and does it want a client certificate (--tls-cert/--tls-key)?",
                                  host));
        }
        throw_tls(fmt::format("TLS with {} failed: {}; does that meshperfd have TLS enabled (--tls-cert)? If it "
                              "asks for a client certificate, give --tls-cert and --tls-key",
                              host, openssl_reason()));
    }
    return stream;
}

}  // namespace meshperf::transport
