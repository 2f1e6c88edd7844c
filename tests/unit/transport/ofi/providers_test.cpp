// transport/ofi/providers: the provider two daemons share, provider names, and the device
// behind a domain on a sysfs fixture.
#include "core/error.hpp"
#include "transport/ofi/providers.hpp"
#include "tests/unit/scratch_dir.hpp"

#include <doctest/doctest.h>
#include <filesystem>

namespace providers_test {  // one per test file: the unit tests are built in batches (unity build)

namespace ofi = meshperf::transport::ofi;
using doctest::Contains;
using meshperf::core::spec_error;

TEST_SUITE("ofi providers") {

TEST_CASE("a layered provider is named by its core provider") {
    CHECK(ofi::core_provider("tcp;ofi_rxm") == "tcp");
    CHECK(ofi::core_provider("verbs;ofi_rxm") == "verbs");
    CHECK(ofi::core_provider("efa") == "efa");
}

TEST_CASE("names come best first: efa, cxi, verbs, tcp, then the rest by name") {
    std::vector<ofi::provider_domain> d;
    for (const char* p : {"shm", "tcp;ofi_rxm", "udp;ofi_rxd", "efa", "tcp;ofi_rxm", "verbs;ofi_rxm", "net"})
        d.push_back({.provider = p});
    CHECK(ofi::provider_names(d) == std::vector<std::string>{"efa", "verbs", "tcp", "net", "shm", "udp"});
}

TEST_CASE("the default is the best provider both have; shm, udp and sockets only when asked") {
    CHECK(ofi::choose_provider("", {"efa", "tcp", "shm"}, {"tcp", "efa"}) == "efa");
    CHECK(ofi::choose_provider("", {"cxi", "tcp"}, {"verbs", "tcp"}) == "tcp");
    CHECK(ofi::choose_provider("shm", {"tcp", "shm"}, {"shm"}) == "shm");
    CHECK(ofi::choose_provider("tcp;ofi_rxm", {"tcp"}, {"tcp"}) == "tcp");
    CHECK_THROWS_WITH_AS(ofi::choose_provider("", {"shm", "udp"}, {"shm"}),
                         Contains("the initiator has [shm, udp], the peer has [shm]"), spec_error);
    CHECK_THROWS_WITH_AS(ofi::choose_provider("efa", {"efa", "tcp"}, {"tcp"}),
                         Contains("libfabric provider 'efa' is not on both daemons: the initiator has [efa, tcp], the peer "
                                  "has [tcp]"),
                         spec_error);
}

TEST_CASE("the device behind a domain, where sysfs names it") {
    const auto root = meshperf::unit_test::scratch_dir("ofi-sysfs");
    std::filesystem::create_directories(root / "class/infiniband/rdmap16s27");
    std::filesystem::create_directories(root / "class/infiniband/mlx5_0");
    std::filesystem::create_directories(root / "class/cxi/cxi0");
    CHECK(ofi::device_of_domain("rdmap16s27-rdm", root) == "rdmap16s27");  // EFA's RDM domain
    CHECK(ofi::device_of_domain("mlx5_0", root) == "mlx5_0");              // verbs
    CHECK(ofi::device_of_domain("mlx5_0-xrc", root) == "mlx5_0");
    CHECK(ofi::device_of_domain("cxi0", root) == "cxi0");                  // Slingshot
    CHECK(ofi::device_of_domain("lo", root).empty());                      // tcp: a netdev, not a device
    CHECK(ofi::device_of_domain("../../etc", root).empty());
    CHECK(ofi::device_of_domain("", root).empty());
    std::filesystem::remove_all(root);
}

}  // TEST_SUITE

}  // namespace providers_test
