// transport/ofi/mr_policy: what each provider's mr_mode asks, read from hand-made fi_info
// structures as fi_getinfo would return them (the mr_mode bits of efa, cxi, verbs, tcp, shm).
#include "transport/ofi/mr_policy.hpp"

#include <doctest/doctest.h>
#include <memory>
#include <rdma/fabric.h>

namespace mr_policy_test {  // one per test file: the unit tests are built in batches (unity build)

using meshperf::transport::ofi::mr_mode_names;
using meshperf::transport::ofi::plan_registration;
using meshperf::transport::ofi::supported_mr_mode;

/// An fi_info as a provider answers it, with only its domain's mr_mode set.
std::unique_ptr<fi_info, void (*)(fi_info*)> info_with(int mr_mode) {
    std::unique_ptr<fi_info, void (*)(fi_info*)> info(fi_allocinfo(), fi_freeinfo);
    REQUIRE(info);
    info->domain_attr->mr_mode = mr_mode;
    return info;
}

std::uint64_t mode(const fi_info& i) { return static_cast<std::uint64_t>(i.domain_attr->mr_mode); }

TEST_SUITE("ofi mr_mode") {

TEST_CASE("tcp and udp (no bits): nothing registered for send/receive, offsets and chosen keys for RMA") {
    const auto i = info_with(0);
    const auto p = plan_registration(mode(*i), false, false);
    CHECK_FALSE(p.register_local);
    CHECK_FALSE(p.register_remote);
    CHECK_FALSE(p.bind_to_endpoint);
    const auto rma = plan_registration(mode(*i), true, false);
    CHECK(rma.register_remote);
    CHECK_FALSE(rma.remote_virtual_address);
    CHECK_FALSE(rma.provider_keys);
    CHECK(mr_mode_names(mode(*i)).empty());
}

TEST_CASE("efa (LOCAL, VIRT_ADDR, ALLOCATED, PROV_KEY, HMEM): local registration, device memory too") {
    const auto i = info_with(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_HMEM);
    const auto host = plan_registration(mode(*i), false, false);
    CHECK(host.register_local);
    CHECK(host.provider_keys);
    CHECK_FALSE(host.bind_to_endpoint);
    const auto rma = plan_registration(mode(*i), true, true);
    CHECK(rma.register_local);
    CHECK(rma.remote_virtual_address);
    CHECK(mr_mode_names(mode(*i)) ==
          std::vector<std::string>{"FI_MR_LOCAL", "FI_MR_VIRT_ADDR", "FI_MR_ALLOCATED", "FI_MR_PROV_KEY", "FI_MR_HMEM"});
}

TEST_CASE("cxi (ENDPOINT, ALLOCATED, PROV_KEY): regions bound to the endpoint once registered") {
    const auto i = info_with(FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY);
    CHECK_FALSE(plan_registration(mode(*i), false, false).bind_to_endpoint);  // nothing registered: nothing to bind
    const auto rma = plan_registration(mode(*i), true, false);
    CHECK(rma.bind_to_endpoint);
    CHECK(rma.provider_keys);
    CHECK_FALSE(rma.remote_virtual_address);
}

TEST_CASE("HMEM alone asks registration only for device memory") {
    const auto i = info_with(FI_MR_HMEM);
    CHECK_FALSE(plan_registration(mode(*i), false, false).register_local);
    CHECK(plan_registration(mode(*i), false, true).register_local);
}

TEST_CASE("the old FI_MR_BASIC mode means virtual addresses and provider keys") {
    const auto i = info_with(FI_MR_BASIC);
    const auto p = plan_registration(mode(*i), true, false);
    CHECK(p.remote_virtual_address);
    CHECK(p.provider_keys);
    CHECK(mr_mode_names(mode(*i)) == std::vector<std::string>{"FI_MR_BASIC"});
}

TEST_CASE("the hints offer what the plan honours, and never RAW or MMU_NOTIFY") {
    const auto host = supported_mr_mode(false);
    CHECK((host & FI_MR_LOCAL));
    CHECK((host & FI_MR_ENDPOINT));
    CHECK_FALSE((host & FI_MR_HMEM));
    CHECK((supported_mr_mode(true) & FI_MR_HMEM));
    CHECK_FALSE((host & (FI_MR_RAW | FI_MR_MMU_NOTIFY)));
}

}  // TEST_SUITE

}  // namespace mr_policy_test
