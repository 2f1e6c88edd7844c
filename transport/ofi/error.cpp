#include "transport/ofi/error.hpp"

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

namespace meshperf::transport::ofi {

void check(long rc, const std::string& what) {
    if (rc >= 0) return;
    const int code = static_cast<int>(-rc);
    throw ofi_error(code, fmt::format("{}: {}", what, error_text(code)));
}

std::string error_text(int code) { return fi_strerror(code); }

std::string completion_error_text(fid_cq* cq, const fi_cq_err_entry& e) {
    std::string text = error_text(e.err);
    char detail[256] = {};
    const char* prov = cq ? fi_cq_strerror(cq, e.prov_errno, e.err_data, detail, sizeof detail) : nullptr;
    if (prov && *prov) text += fmt::format(" (provider: {})", prov);
    return text;
}

}  // namespace meshperf::transport::ofi
