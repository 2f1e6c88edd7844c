#include "daemon/runtime/measurement_gate.hpp"

namespace meshperf::daemon {

measurement_gate::lease measurement_gate::try_acquire(const std::string& who, std::string& holder) {
    std::lock_guard lock(m_);
    if (!holder_.empty()) {
        holder = holder_;
        return lease{};
    }
    holder_ = who.empty() ? std::string("(unnamed)") : who;
    return lease{this};
}

void measurement_gate::free() noexcept {
    std::lock_guard lock(m_);
    holder_.clear();
}

std::string measurement_gate::holder() const {
    std::lock_guard lock(m_);
    return holder_;
}

}  // namespace meshperf::daemon
