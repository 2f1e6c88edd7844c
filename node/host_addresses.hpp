#pragma once
/// This host's interface addresses (getifaddrs), for the rail selection. The only part of
/// node/ that asks the kernel anything but sysfs.
#include "node/inventory.hpp"

#include <vector>

namespace meshperf::node {

/// Every IPv4 and IPv6 address of every interface, with its prefix length and the
/// interface's up and loopback flags. Empty when getifaddrs fails.
std::vector<interface_address> host_addresses();

}  // namespace meshperf::node
