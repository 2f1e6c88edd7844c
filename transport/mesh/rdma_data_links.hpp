#pragma once
/// The RDMA links of a collective run as the engine sees them (connections.hpp's data_links):
/// the connected queue pairs (transport/rdma/mesh_links.hpp) and the step runner over them
/// (transport/rdma/mesh_steps.hpp). Built only with RDMA (transport/CMakeLists.txt).
#include "transport/mesh/connections.hpp"

#include <memory>

namespace meshperf::transport::rdma {
class mesh_links;
}

namespace meshperf::transport::mesh {

/// Wraps a rank's connected queue pairs. `qps` must have been connected to every peer and
/// its receives posted (daemon/transports/rdma/rdma_links.cpp does both).
std::shared_ptr<data_links> make_rdma_data_links(std::shared_ptr<rdma::mesh_links> qps);

}  // namespace meshperf::transport::mesh
