#include "transport/rdma/memlock.hpp"

#include "transport/rdma/error.hpp"

#include <cerrno>
#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace meshperf::transport::rdma {

namespace {
std::string format_bytes(std::uint64_t b) {
    if (b >= (1ull << 30) && b % (1ull << 30) == 0) return fmt::format("{} GiB", b >> 30);
    if (b >= (1ull << 20) && b % (1ull << 20) == 0) return fmt::format("{} MiB", b >> 20);
    if (b >= (1ull << 10) && b % (1ull << 10) == 0) return fmt::format("{} KiB", b >> 10);
    return fmt::format("{} bytes", b);
}
}  // namespace

std::optional<std::uint64_t> memlock_limit() noexcept {
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
    return static_cast<std::uint64_t>(rl.rlim_cur);
}

bool can_pin_unlimited() noexcept {
    // capget directly: no libcap dependency for one bit.
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &header, data) != 0) return false;
    return (data[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32))) != 0;
}

std::string memlock_advice() {
    const auto limit = memlock_limit();
    if (!limit || can_pin_unlimited()) return {};
    return fmt::format(
        "RLIMIT_MEMLOCK is {}, too low to register RDMA buffers: set LimitMEMLOCK=infinity "
        "in the meshperfd unit (systemd), or run `ulimit -l unlimited` in the shell that "
        "starts it (or raise memlock in /etc/security/limits.conf)",
        format_bytes(*limit));
}

void check_memlock(std::uint64_t bytes, std::string_view what) {
    const auto limit = memlock_limit();
    if (!limit || bytes <= *limit || can_pin_unlimited()) return;
    throw_errno(ENOMEM, fmt::format("{}: pinning {} of buffers: {}", what, format_bytes(bytes),
                                    memlock_advice()));
}

}  // namespace meshperf::transport::rdma
