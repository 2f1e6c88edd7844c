#include "client/support/connection_pool.hpp"

#include "transport/tls.hpp"

namespace meshperf::client {

connection_pool::connection_pool(std::shared_ptr<const transport::tls_context> tls, std::size_t max_idle)
    : tls_(std::move(tls)), max_idle_(max_idle) {}

connection_pool::~connection_pool() = default;

connection_pool::lease::lease(connection_pool* pool, std::unique_ptr<transport::http_connection> c)
    : pool_(pool), c_(std::move(c)), opened_before_(c_->connections_opened()), requests_before_(c_->requests_sent()) {}

connection_pool::lease::~lease() {
    if (!pool_ || !c_) return;
    const auto opened = c_->connections_opened() - opened_before_;
    const auto requests = c_->requests_sent() - requests_before_;
    pool_->give_back(std::move(c_), opened, requests);
}

connection_pool::lease connection_pool::take(const transport::endpoint_address& to) {
    {
        std::lock_guard lock(m_);
        const auto it = idle_.find(to.to_string());
        if (it != idle_.end() && !it->second.empty()) {
            auto c = std::move(it->second.back());
            it->second.pop_back();
            --idle_count_;
            return lease(this, std::move(c));
        }
    }
    return lease(this, std::make_unique<transport::http_connection>(to, tls_.get(), true));
}

void connection_pool::give_back(std::unique_ptr<transport::http_connection> c, std::uint64_t opened, std::uint64_t requests) {
    std::unique_ptr<transport::http_connection> closing;  // closed outside the lock
    std::lock_guard lock(m_);
    totals_.connections_opened += opened;
    totals_.requests += requests;
    if (!c->is_open() || idle_count_ >= max_idle_) {
        closing = std::move(c);
        return;
    }
    idle_[c->to().to_string()].push_back(std::move(c));
    ++idle_count_;
}

connection_pool::totals connection_pool::counts() const {
    std::lock_guard lock(m_);
    return totals_;
}

}  // namespace meshperf::client
