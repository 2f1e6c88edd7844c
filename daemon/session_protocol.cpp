#include "daemon/session_protocol.hpp"

#include <cstdlib>

namespace meshperf::daemon {

int session_protocol_version() {
    // MESHPERF_SESSION_PROTOCOL exists so tests can stand up a daemon of another version.
    static const int version = [] {
        const char* v = std::getenv("MESHPERF_SESSION_PROTOCOL");
        return v && *v ? std::atoi(v) : 1;
    }();
    return version;
}

}  // namespace meshperf::daemon
