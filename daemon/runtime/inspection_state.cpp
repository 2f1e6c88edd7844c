#include "daemon/runtime/inspection_state.hpp"

namespace meshperf::daemon {

void inspection_state::record(snapshot s) {
    std::lock_guard lock(m_);
    last_ = std::move(s);
    ++count_;
}

std::optional<inspection_state::snapshot> inspection_state::last() const {
    std::lock_guard lock(m_);
    return last_;
}

std::uint64_t inspection_state::count() const {
    std::lock_guard lock(m_);
    return count_;
}

}  // namespace meshperf::daemon
