#include "transport/rdma/error.hpp"

#include <infiniband/verbs.h>

namespace meshperf::transport::rdma {

namespace {
class wc_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "ibv_wc_status"; }
    std::string message(int status) const override {
        return ibv_wc_status_str(static_cast<ibv_wc_status>(status));
    }
};
}  // namespace

const std::error_category& wc_category() noexcept {
    static const wc_category_impl category;
    return category;
}

bool is_no_device(const rdma_error& e) noexcept {
    return e.code() == std::errc::no_such_device;
}

void throw_errno(int err, const std::string& what) {
    throw rdma_error(std::error_code(err, std::generic_category()), what);
}

}  // namespace meshperf::transport::rdma
