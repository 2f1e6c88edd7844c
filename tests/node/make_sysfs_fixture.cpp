// make_sysfs_fixture DIR [--narrow-gpu BDF] [--slow-nic BDF] [--acs-bridge BDF]
//                        [--down-rail NETDEV] [--narrow-uplink BDF] [--nic-driver-version V]
//                        [--short-config]
// Builds the DGX-H100-like sysfs tree of sysfs_fixture.hpp under DIR, for the integration
// test's `meshperfd --sysfs-root DIR`. Prints nothing; exit 2 for bad arguments.
#include "sysfs_fixture.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

int main(int argc, char** argv) {
    meshperf::test_fixture::fixture_options o;
    const char* dir = nullptr;
    for (int i = 1; i < argc; ++i) {
        const auto value = [&](std::string& out) {
            if (i + 1 >= argc) return false;
            out = argv[++i];
            return true;
        };
        bool ok = true;
        if (!std::strcmp(argv[i], "--narrow-gpu")) ok = value(o.narrow_gpu);
        else if (!std::strcmp(argv[i], "--slow-nic")) ok = value(o.slow_nic);
        else if (!std::strcmp(argv[i], "--acs-bridge")) ok = value(o.acs_bridge);
        else if (!std::strcmp(argv[i], "--down-rail")) ok = value(o.down_rail);
        else if (!std::strcmp(argv[i], "--narrow-uplink")) ok = value(o.narrow_uplink);
        else if (!std::strcmp(argv[i], "--nic-driver-version")) ok = value(o.nic_driver_version);
        else if (!std::strcmp(argv[i], "--short-config")) o.root_config = false;
        else if (argv[i][0] != '-' && !dir) dir = argv[i];
        else ok = false;
        if (!ok) {
            std::fprintf(stderr, "make_sysfs_fixture: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!dir) {
        std::fprintf(stderr, "usage: make_sysfs_fixture DIR [--narrow-gpu BDF] [--slow-nic BDF] [--acs-bridge BDF] "
                             "[--down-rail NETDEV] [--narrow-uplink BDF] [--nic-driver-version V] [--short-config]\n");
        return 2;
    }
    try {
        meshperf::test_fixture::build_dgx_h100(dir, o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_sysfs_fixture: %s\n", e.what());
        return 1;
    }
    return 0;
}
