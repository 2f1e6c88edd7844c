#pragma once
/// What meshperf asks of fi_getinfo, shared by the endpoints and the inventory.
#include <cstdint>
#include <string>

struct fi_info;

namespace meshperf::transport::ofi {

/// Messages are tagged (fi_tsend / fi_trecv, matched by the point's tag) or untagged
/// (fi_send / fi_recv, in order).
enum class message_kind : std::uint8_t { tagged, msg };

/// The hints meshperf gives fi_getinfo: FI_EP_RDM with FI_MSG or FI_TAGGED, FI_CONTEXT
/// modes, the mr_mode bits it honours (mr_policy.hpp), FI_THREAD_DOMAIN, the provider name
/// when given, and FI_ORDER_SAS when `ordered`. Caller frees with fi_freeinfo.
fi_info* make_hints(const std::string& provider, message_kind kind, bool ordered = false);

}  // namespace meshperf::transport::ofi
