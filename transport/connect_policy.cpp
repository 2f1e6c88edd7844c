#include "transport/connect_policy.hpp"

#include <utility>

namespace meshperf::transport {
namespace {

connect_policy& installed() {
    static connect_policy p;
    return p;
}

}  // namespace

void set_connect_policy(connect_policy policy) { installed() = std::move(policy); }

std::optional<std::string> connect_refusal(const std::string& ip) {
    const auto& p = installed();
    if (!p) return std::nullopt;
    return p(ip);
}

}  // namespace meshperf::transport
