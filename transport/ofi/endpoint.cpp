// One FI_EP_RDM endpoint: fi_getinfo (bound to the address under test), fabric, domain,
// completion queue, address vector, endpoint, and the buffers registered as mr_mode asks.
#include "transport/ofi/endpoint.hpp"

#include "core/error.hpp"
#include "transport/ofi/error.hpp"
#include "transport/ofi/providers.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <new>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

namespace meshperf::transport::ofi {
namespace {

/// Bytes of one operation context: fi_context2 (FI_CONTEXT2 mode), which also serves FI_CONTEXT.
constexpr std::size_t context_bytes = sizeof(fi_context2);
static_assert(context_bytes <= endpoint::operation_context_bytes);
constexpr std::size_t page = 4096;

bool ip_addressed(std::uint32_t format) {
    return format == FI_SOCKADDR_IN || format == FI_SOCKADDR_IN6 || format == FI_SOCKADDR;
}

void close_fid(fid* f) noexcept {
    if (f) fi_close(f);
}

/// fi_getinfo bound to `local_ip` (FI_SOURCE), so that a provider with an interface per
/// address opens the one under test. A provider whose endpoints are not addressed by IP (shm:
/// its source address would name its shared-memory region) has nothing to bind: it is taken
/// as it answers without the address.
fi_info* get_info(const endpoint_options& o) {
    fi_info* hints = make_hints(o.provider, o.kind, o.ordered);
    fi_info* info = nullptr;
    int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info);
    const char* node = o.local_ip.empty() ? nullptr : o.local_ip.c_str();
    if (rc == 0 && node && ip_addressed(info->addr_format)) {
        fi_freeinfo(info);
        info = nullptr;
        rc = fi_getinfo(FI_VERSION(1, 17), node, nullptr, FI_SOURCE, hints, &info);
    }
    fi_freeinfo(hints);
    if (rc != 0)
        throw ofi_error(-rc, fmt::format("libfabric provider '{}' has no reliable-datagram endpoint{} for {} messages: {} "
                                         "(see `fi_info -p {}`)",
                                         o.provider, node ? fmt::format(" on {}", o.local_ip) : std::string(),
                                         o.kind == message_kind::tagged ? "tagged" : "untagged", error_text(-rc), o.provider));
    return info;
}

const char* protocol_name(std::uint32_t p) {
    const char* s = fi_tostr(&p, FI_TYPE_PROTOCOL);
    return s ? s : "unknown";
}

}  // namespace

nlohmann::json to_json(const endpoint_description& d) {
    nlohmann::json j = {{"provider", d.provider},          {"fabric", d.fabric},     {"domain", d.domain},
                        {"endpoint_type", d.endpoint_type}, {"protocol", d.protocol}, {"mr_mode", d.mr_mode},
                        {"max_msg_size", d.max_msg_size},   {"inject_size", d.inject_size}};
    if (!d.device.empty()) j["device"] = d.device;
    return j;
}

std::string to_text(const endpoint_description& d) {
    return fmt::format("{} on {} (fabric {}, {}, {}, mr_mode [{}])", d.provider, d.domain, d.fabric, d.endpoint_type, d.protocol,
                       fmt::join(d.mr_mode, " "));
}

endpoint::endpoint(const endpoint_options& o)
    : max_slots_(std::max<std::size_t>(o.max_slots, 1)), max_bytes_(std::max<std::uint64_t>(o.max_message_bytes, 1)), kind_(o.kind) {
    pool_bytes_ = std::max<std::uint64_t>(2 * max_bytes_, std::min<std::uint64_t>(max_slots_ * max_bytes_, o.pool_cap_bytes));
    pool_bytes_ = (pool_bytes_ + page - 1) / page * page;
    info_ = get_info(o);
    try {
        description_.provider = info_->fabric_attr->prov_name ? info_->fabric_attr->prov_name : o.provider;
        description_.fabric = info_->fabric_attr->name ? info_->fabric_attr->name : "";
        description_.domain = info_->domain_attr->name ? info_->domain_attr->name : "";
        description_.endpoint_type = "FI_EP_RDM";
        description_.device = device_of_domain(description_.domain);
        description_.protocol = protocol_name(info_->ep_attr->protocol);
        description_.mr_mode = mr_mode_names(static_cast<std::uint64_t>(info_->domain_attr->mr_mode));
        description_.max_msg_size = info_->ep_attr->max_msg_size;
        description_.inject_size = info_->tx_attr->inject_size;
        if (max_bytes_ > info_->ep_attr->max_msg_size)
            throw ofi_error(FI_EMSGSIZE, fmt::format("{}: messages of {} bytes exceed the provider's max_msg_size {}",
                                                     description_.provider, max_bytes_, info_->ep_attr->max_msg_size));
        plan_ = plan_registration(static_cast<std::uint64_t>(info_->domain_attr->mr_mode), false, false);

        const std::string where = fmt::format("{} on {}", description_.provider, description_.domain);
        check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), where + ": fi_fabric");
        check(fi_domain(fabric_, info_, &domain_, nullptr), where + ": fi_domain");
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        cq_attr.size = 2 * max_slots_ + 16;
        if (o.wait_fd) {
            cq_attr.wait_obj = FI_WAIT_FD;
            if (fi_cq_open(domain_, &cq_attr, &cq_, nullptr) == 0) {
                if (fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) wait_fd_ = -1;
            } else {
                cq_ = nullptr;  // the provider has no such wait object: a CQ to poll
            }
        }
        cq_attr.wait_obj = FI_WAIT_NONE;
        if (!cq_) check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), where + ": fi_cq_open");
        fi_av_attr av_attr{};
        av_attr.count = std::max<std::size_t>(o.peers, 1);
        check(fi_av_open(domain_, &av_attr, &av_, nullptr), where + ": fi_av_open");
        check(fi_endpoint(domain_, info_, &ep_, nullptr), where + ": fi_endpoint");
        check(fi_ep_bind(ep_, &av_->fid, 0), where + ": fi_ep_bind (address vector)");
        check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), where + ": fi_ep_bind (completion queue)");
        check(fi_enable(ep_), where + ": fi_enable");

        const std::size_t bytes = 2 * pool_bytes_;
        buffer_.reset(new (std::align_val_t{page}) std::byte[bytes]);
        std::memset(buffer_.get(), 0, bytes);
        contexts_.reset(new unsigned char[2 * max_slots_ * context_bytes]());
        set_message_size(max_bytes_);
        if (plan_.register_local) {
            check(fi_mr_reg(domain_, buffer_.get(), bytes, FI_SEND | FI_RECV, 0, plan_.provider_keys ? 0 : 1, 0, &mr_, nullptr),
                  where + fmt::format(": fi_mr_reg of {} bytes", bytes));
            if (plan_.bind_to_endpoint) {
                check(fi_mr_bind(mr_, &ep_->fid, 0), where + ": fi_mr_bind");
                check(fi_mr_enable(mr_), where + ": fi_mr_enable");
            }
            desc_ = fi_mr_desc(mr_);
        }
        char name[256];
        std::size_t len = sizeof name;
        check(fi_getname(&ep_->fid, name, &len), where + ": fi_getname");
        address_.assign(name, len);
    } catch (...) {
        release();
        throw;
    }
}

endpoint::~endpoint() { release(); }

void endpoint::aligned_delete::operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{page}); }

void endpoint::release() noexcept {
    close_fid(ep_ ? &ep_->fid : nullptr);
    close_fid(mr_ ? &mr_->fid : nullptr);
    close_fid(av_ ? &av_->fid : nullptr);
    close_fid(cq_ ? &cq_->fid : nullptr);
    close_fid(domain_ ? &domain_->fid : nullptr);
    close_fid(fabric_ ? &fabric_->fid : nullptr);
    ep_ = nullptr;
    mr_ = nullptr;
    av_ = nullptr;
    cq_ = nullptr;
    domain_ = nullptr;
    fabric_ = nullptr;
    if (info_) fi_freeinfo(info_);
    info_ = nullptr;
}

void endpoint::set_message_size(std::uint64_t size) {
    if (size == 0 || size > max_bytes_)
        throw core::spec_error(fmt::format("message size {} is outside this endpoint's 1..{} bytes", size, max_bytes_));
    stride_ = (size + 63) / 64 * 64;  // each slot on its own cache lines
    slots_ = static_cast<std::size_t>(std::clamp<std::uint64_t>(pool_bytes_ / stride_, 1, max_slots_));
}

void endpoint::connect(const std::string& peer_address) { peer_ = add_peer(peer_address); }

std::uint64_t endpoint::add_peer(const std::string& peer_address) {
    // fi_av_insert reads as many bytes as the provider's address format has: a peer's address
    // of another length (another provider, or a hostile peer) is refused before it.
    if (peer_address.size() != address_.size())
        throw ofi_error(FI_EINVAL, fmt::format("{} on {}: the peer's address is {} bytes where this provider's are {}",
                                               description_.provider, description_.domain, peer_address.size(), address_.size()));
    fi_addr_t addr = FI_ADDR_UNSPEC;
    const int n = fi_av_insert(av_, peer_address.data(), 1, &addr, 0, nullptr);
    if (n != 1)
        throw ofi_error(n < 0 ? -n : FI_EINVAL, fmt::format("{} on {}: fi_av_insert of the peer's address ({} bytes): {}",
                                                            description_.provider, description_.domain, peer_address.size(),
                                                            n < 0 ? error_text(-n) : "not inserted"));
    return addr;
}

int endpoint::send_to(std::uint64_t peer, const void* buf, std::size_t len, std::uint64_t tag, void* context) noexcept {
    return static_cast<int>(fi_tsend(ep_, buf, len, desc_, peer, tag, context));
}

int endpoint::recv_tagged(void* buf, std::size_t len, std::uint64_t tag, void* context) noexcept {
    return static_cast<int>(fi_trecv(ep_, buf, len, desc_, FI_ADDR_UNSPEC, tag, 0, context));
}

bool endpoint::may_sleep() noexcept {
    if (wait_fd_ < 0) return false;
    fid* f = &cq_->fid;
    return fi_trywait(fabric_, &f, 1) == FI_SUCCESS;
}

void endpoint::cancel(void* context) noexcept { fi_cancel(&ep_->fid, context); }

int endpoint::post_send(std::size_t slot, std::size_t len, std::uint64_t tag) noexcept {
    void* ctx = contexts_.get() + slot * context_bytes;
    const ssize_t rc = kind_ == message_kind::tagged ? fi_tsend(ep_, tx(slot), len, desc_, peer_, tag, ctx)
                                                     : fi_send(ep_, tx(slot), len, desc_, peer_, ctx);
    return static_cast<int>(rc);
}

int endpoint::post_recv(std::size_t slot, std::size_t len, std::uint64_t tag) noexcept {
    void* ctx = contexts_.get() + (max_slots_ + slot) * context_bytes;
    const ssize_t rc = kind_ == message_kind::tagged ? fi_trecv(ep_, rx(slot), len, desc_, FI_ADDR_UNSPEC, tag, 0, ctx)
                                                     : fi_recv(ep_, rx(slot), len, desc_, FI_ADDR_UNSPEC, ctx);
    return static_cast<int>(rc);
}

void endpoint::cancel_recv(std::size_t slot) noexcept {
    fi_cancel(&ep_->fid, contexts_.get() + (max_slots_ + slot) * context_bytes);
}

bool endpoint::locate(void* context, std::size_t& slot, bool& receive) const noexcept {
    const auto* p = static_cast<const unsigned char*>(context);
    const auto* base = contexts_.get();
    if (p < base || p >= base + 2 * max_slots_ * context_bytes) return false;
    const std::size_t k = static_cast<std::size_t>(p - base) / context_bytes;
    receive = k >= max_slots_;
    slot = receive ? k - max_slots_ : k;
    return true;
}

long endpoint::poll(completion* out, std::size_t max) noexcept {
    fi_cq_tagged_entry e[16];
    const ssize_t n = fi_cq_read(cq_, e, std::min<std::size_t>(max, 16));
    if (n == -FI_EAGAIN) return 0;
    if (n == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        if (fi_cq_readerr(cq_, &err, 0) < 0) {
            last_error_code_ = FI_EOTHER;
            last_error_ = "fi_cq_readerr failed";
            return -FI_EOTHER;
        }
        last_error_code_ = err.err;
        last_error_ = completion_error_text(cq_, err);
        failed_slot_ = 0;
        failed_receive_ = (err.flags & FI_RECV) != 0;
        failed_context_ = err.op_context;
        locate(err.op_context, failed_slot_, failed_receive_);
        return -static_cast<long>(err.err ? err.err : FI_EOTHER);
    }
    if (n < 0) {
        last_error_code_ = static_cast<int>(-n);
        last_error_ = fmt::format("fi_cq_read: {}", error_text(static_cast<int>(-n)));
        return n;
    }
    long k = 0;
    for (ssize_t i = 0; i < n; ++i) {
        completion c;
        c.context = e[i].op_context;
        c.receive = (e[i].flags & FI_RECV) != 0;
        locate(e[i].op_context, c.slot, c.receive);
        c.len = e[i].len;
        out[k++] = c;
    }
    return k;
}

}  // namespace meshperf::transport::ofi
