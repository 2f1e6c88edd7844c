#pragma once
/// RLIMIT_MEMLOCK: registered memory is pinned, and the kernel refuses to pin more than the
/// limit unless the process has CAP_IPC_LOCK. These helpers turn that refusal into a
/// message that says how to fix it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace meshperf::transport::rdma {

/// Soft RLIMIT_MEMLOCK in bytes; nullopt when unlimited.
std::optional<std::uint64_t> memlock_limit() noexcept;

/// True when the process may pin memory beyond RLIMIT_MEMLOCK (CAP_IPC_LOCK effective).
bool can_pin_unlimited() noexcept;

/// How to raise the limit, for messages: "RLIMIT_MEMLOCK is 64 KiB: set
/// LimitMEMLOCK=infinity in the meshperfd unit, or run `ulimit -l unlimited` ...".
/// Empty when the limit does not apply (unlimited, or CAP_IPC_LOCK).
std::string memlock_advice();

/// Throws rdma_error(ENOMEM) naming `what` when pinning `bytes` more is sure to exceed the
/// limit (the request alone is larger than it). A later refusal by the kernel, when other
/// pinned memory adds up past the limit, is reported by the registration itself.
void check_memlock(std::uint64_t bytes, std::string_view what);

}  // namespace meshperf::transport::rdma
