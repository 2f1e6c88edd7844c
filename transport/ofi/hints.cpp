#include "transport/ofi/hints.hpp"

#include "transport/ofi/mr_policy.hpp"

#include <cstring>
#include <new>
#include <rdma/fabric.h>

namespace meshperf::transport::ofi {

fi_info* make_hints(const std::string& provider, message_kind kind, bool ordered) {
    fi_info* h = fi_allocinfo();
    if (!h) throw std::bad_alloc();
    h->ep_attr->type = FI_EP_RDM;
    h->caps = kind == message_kind::tagged ? FI_TAGGED : FI_MSG;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = static_cast<int>(supported_mr_mode(false));
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    if (ordered) h->tx_attr->msg_order = h->rx_attr->msg_order = FI_ORDER_SAS;
    if (!provider.empty()) h->fabric_attr->prov_name = strdup(provider.c_str());
    return h;
}

}  // namespace meshperf::transport::ofi
