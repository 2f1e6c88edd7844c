#include "transport/ofi/mr_policy.hpp"

#include <rdma/fabric.h>

namespace meshperf::transport::ofi {

std::uint64_t supported_mr_mode(bool device_memory) {
    std::uint64_t m = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    if (device_memory) m |= FI_MR_HMEM;
    return m;
}

registration_plan plan_registration(std::uint64_t mr_mode, bool rma, bool device_memory) {
    registration_plan p;
    // FI_MR_BASIC (the old mode) is VIRT_ADDR | ALLOCATED | PROV_KEY with remote buffers only;
    // FI_MR_SCALABLE is offsets with requested keys: the defaults.
    if (mr_mode & FI_MR_BASIC) mr_mode |= FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    p.register_local = (mr_mode & FI_MR_LOCAL) || (device_memory && (mr_mode & FI_MR_HMEM));
    p.register_remote = rma;
    p.bind_to_endpoint = (p.register_local || p.register_remote) && (mr_mode & FI_MR_ENDPOINT);
    p.remote_virtual_address = rma && (mr_mode & FI_MR_VIRT_ADDR);
    p.provider_keys = (mr_mode & FI_MR_PROV_KEY) != 0;
    return p;
}

std::vector<std::string> mr_mode_names(std::uint64_t mr_mode) {
    static const struct {
        std::uint64_t bit;
        const char* name;
    } bits[] = {{FI_MR_LOCAL, "FI_MR_LOCAL"},         {FI_MR_RAW, "FI_MR_RAW"},
                {FI_MR_VIRT_ADDR, "FI_MR_VIRT_ADDR"}, {FI_MR_ALLOCATED, "FI_MR_ALLOCATED"},
                {FI_MR_PROV_KEY, "FI_MR_PROV_KEY"},   {FI_MR_MMU_NOTIFY, "FI_MR_MMU_NOTIFY"},
                {FI_MR_RMA_EVENT, "FI_MR_RMA_EVENT"}, {FI_MR_ENDPOINT, "FI_MR_ENDPOINT"},
                {FI_MR_HMEM, "FI_MR_HMEM"},           {FI_MR_COLLECTIVE, "FI_MR_COLLECTIVE"}};
    std::vector<std::string> out;
    if (mr_mode == FI_MR_BASIC) return {"FI_MR_BASIC"};
    if (mr_mode == FI_MR_SCALABLE) return {"FI_MR_SCALABLE"};
    for (const auto& b : bits)
        if (mr_mode & b.bit) out.emplace_back(b.name);
    return out;
}

}  // namespace meshperf::transport::ofi
