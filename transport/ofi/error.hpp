#pragma once
/// Errors of the libfabric transport: every failure is an ofi_error whose message names the
/// provider, the step and libfabric's own words (fi_strerror; for a failed completion,
/// fi_cq_strerror with the provider's detail).
#include <stdexcept>
#include <string>

struct fid_cq;
struct fi_cq_err_entry;

namespace meshperf::transport::ofi {

/// A setup or data-path failure of the libfabric transport. code(): the positive FI_E*
/// (errno-like) value, 0 when none applies.
class ofi_error : public std::runtime_error {
public:
    ofi_error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
    int code() const noexcept { return code_; }

private:
    int code_;
};

/// Throws ofi_error for a negative libfabric return code: "<what>: <fi_strerror>".
void check(long rc, const std::string& what);

/// The words of a failed completion read with fi_cq_readerr: fi_strerror of its error and,
/// where the provider has one, its fi_cq_strerror detail.
std::string completion_error_text(fid_cq* cq, const fi_cq_err_entry& e);

/// "Operation timed out" and such: fi_strerror of a positive FI_E* code.
std::string error_text(int code);

}  // namespace meshperf::transport::ofi
