#pragma once
/// Errors of the RDMA transport: every failure is an rdma_error (a std::system_error) whose
/// message names the device, the step and what to do.
#include <string>
#include <system_error>

namespace meshperf::transport::rdma {

/// A setup or data-path failure of the RDMA transport.
///
/// what() names the step ("rxe0 port 1: QP 0x11 to RTR: Invalid argument"). code() is an
/// errno value in std::generic_category() for verbs calls and setup checks (ENODEV: no RDMA
/// device; ENOMEM: RLIMIT_MEMLOCK; ETIMEDOUT: peer gone), or an ibv_wc_status in
/// wc_category() for a work completion that failed.
class rdma_error : public std::system_error {
public:
    rdma_error(std::error_code ec, const std::string& what) : std::system_error(ec, what) {}
};

/// Category of ibv_wc_status values; message() is ibv_wc_status_str().
const std::error_category& wc_category() noexcept;

/// True for the error that means "this node has no RDMA device at all" (code ENODEV), which
/// a daemon reports as "unavailable" rather than as a failure. An unknown device name is
/// EINVAL: the request is wrong, not the node.
bool is_no_device(const rdma_error&) noexcept;

/// Throws rdma_error{err, generic category} with what.
[[noreturn]] void throw_errno(int err, const std::string& what);

}  // namespace meshperf::transport::rdma
