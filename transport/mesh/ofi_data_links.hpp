#pragma once
/// The libfabric links of a collective run as the engine sees them (connections.hpp's
/// data_links): one rank's endpoint with every peer's address (transport/ofi/mesh_links.hpp)
/// and the step runner over it (transport/ofi/mesh_steps.hpp). Built only with libfabric
/// (transport/CMakeLists.txt).
#include "transport/mesh/connections.hpp"

#include <memory>

namespace meshperf::transport::ofi {
class mesh_links;
}

namespace meshperf::transport::mesh {

/// Wraps a rank's endpoint, connected to every peer (daemon/transports/ofi/ofi_links.cpp).
std::shared_ptr<data_links> make_ofi_data_links(std::shared_ptr<ofi::mesh_links> links);

}  // namespace meshperf::transport::mesh
