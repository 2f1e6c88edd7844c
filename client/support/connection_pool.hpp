#pragma once
/// Connections to daemons kept open between calls, shared by the daemon_clients of one
/// command (the matrix coordinator: every round calls the same daemons again). A call
/// leases a daemon's idle connection, or a new one, and gives it back when done; a
/// connection that cannot carry another request (error, "Connection: close", a stream cut
/// short) is closed rather than kept. At most `max_idle` connections stay open between
/// calls, so the pool never holds more descriptors than the command budgeted for it.
#include "transport/http_connection.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace meshperf::transport {
class tls_context;
}

namespace meshperf::client {

class connection_pool {
public:
    /// `tls` (null: plain HTTP) is every connection's TLS context; the pool keeps it alive.
    connection_pool(std::shared_ptr<const transport::tls_context> tls, std::size_t max_idle);
    ~connection_pool();

    /// A connection for one call, given back to its pool (or closed) when it goes out of scope.
    class lease {
    public:
        lease(connection_pool* pool, std::unique_ptr<transport::http_connection> c);
        lease(lease&&) noexcept = default;
        lease& operator=(lease&&) = delete;
        ~lease();
        transport::http_connection* operator->() const { return c_.get(); }

    private:
        connection_pool* pool_;  ///< null: a one-shot connection, closed after the call
        std::unique_ptr<transport::http_connection> c_;
        std::uint64_t opened_before_ = 0;
        std::uint64_t requests_before_ = 0;
    };

    /// An idle connection to `to` if one is kept, else a new (not yet connected) one.
    lease take(const transport::endpoint_address& to);

    /// Totals over every connection the pool lent: opened (TCP connects, TLS handshakes)
    /// and requests sent.
    struct totals {
        std::uint64_t connections_opened = 0;
        std::uint64_t requests = 0;
    };
    totals counts() const;

private:
    void give_back(std::unique_ptr<transport::http_connection> c, std::uint64_t opened, std::uint64_t requests);

    std::shared_ptr<const transport::tls_context> tls_;
    std::size_t max_idle_;
    mutable std::mutex m_;
    std::map<std::string, std::vector<std::unique_ptr<transport::http_connection>>> idle_;  ///< by host:port
    std::size_t idle_count_ = 0;
    totals totals_;
};

}  // namespace meshperf::client
