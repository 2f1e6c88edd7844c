#pragma once
// Connected loopback TCP pairs for the transport/tcp unit tests (doctest's REQUIRE on
// every system call). Header-only: each test file of the unity batches includes it.
#include "transport/socket.hpp"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <utility>
#include <vector>

namespace meshperf::test {

/// n connected loopback TCP pairs: (connecting ends, accepted ends), in order.
inline std::pair<std::vector<transport::socket_fd>, std::vector<transport::socket_fd>> loopback_tcp_pairs(std::size_t n) {
    transport::socket_fd listener(::socket(AF_INET, SOCK_STREAM, 0));
    REQUIRE(listener);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener.get(), 16) == 0);
    REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
    std::vector<transport::socket_fd> left, right;
    for (std::size_t i = 0; i < n; ++i) {
        transport::socket_fd c(::socket(AF_INET, SOCK_STREAM, 0));
        REQUIRE(::connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        left.push_back(std::move(c));
        right.emplace_back(::accept(listener.get(), nullptr, nullptr));
        REQUIRE(right.back());
    }
    return {std::move(left), std::move(right)};
}

/// One connected loopback TCP pair: (connecting end, accepted end).
inline std::pair<transport::socket_fd, transport::socket_fd> loopback_tcp_pair() {
    auto [l, r] = loopback_tcp_pairs(1);
    return {std::move(l[0]), std::move(r[0])};
}

}  // namespace meshperf::test
