// The TCP transport's registry entry: always available; its sweep plug-ins are the data
// streams of tcp_points; a collective's data moves over the mesh's own sockets, so it has no
// links to open.
#include "daemon/transports/registry.hpp"
#include "daemon/transports/tcp/tcp_points.hpp"

namespace meshperf::daemon {

transport_entry tcp_transport() {
    transport_entry e;
    e.name = "tcp";
    e.inventory = [] { return transport_inventory{true, "", nlohmann::json::object()}; };
    e.sweep.initiator = make_tcp_initiator_transport;
    e.sweep.responder = make_tcp_responder_transport;
    return e;
}

}  // namespace meshperf::daemon
