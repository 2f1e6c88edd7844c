#pragma once
/// One libfabric reliable-datagram endpoint (FI_EP_RDM) of one stream: its fabric, domain,
/// completion queue, address vector, the peer's address, and its registered buffers (a
/// window of send slots and receive slots). Opens no socket of its own: the peer's address
/// (fi_getname) travels over the session. Thread model: one thread uses an endpoint at a time
/// (FI_THREAD_DOMAIN, every endpoint in a domain of its own).
#include "transport/ofi/hints.hpp"
#include "transport/ofi/mr_policy.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

struct fi_info;
struct fid_fabric;
struct fid_domain;
struct fid_cq;
struct fid_av;
struct fid_ep;
struct fid_mr;

namespace meshperf::transport::ofi {

struct endpoint_options {
    /// The provider to open ("tcp", "shm", "efa": the core provider's name; a layered one such
    /// as "tcp;ofi_rxm" is accepted as well). Required.
    std::string provider;
    /// The address the endpoint binds to (the path under test): passed to fi_getinfo as the
    /// source node, so a provider with many interfaces opens the one holding it. Empty for
    /// providers not addressed by IP (shm).
    std::string local_ip;
    message_kind kind = message_kind::tagged;
    /// Most send slots (and receive slots) a point may use: its window.
    std::size_t max_slots = 1;
    /// The largest message of the run. Each direction's buffer pool holds at least two of
    /// them, and max_slots smaller ones up to pool_cap_bytes.
    std::uint64_t max_message_bytes = 1;
    std::uint64_t pool_cap_bytes = 16u << 20;
    /// Peers its address vector will hold (a collective's endpoint talks to every rank).
    std::size_t peers = 1;
    /// Tagged messages from one sender are matched in the order sent (FI_ORDER_SAS), as a
    /// collective's chunks need.
    bool ordered = false;
    /// Ask for a completion queue with a file descriptor to sleep on (FI_WAIT_FD); where the
    /// provider has none, wait_fd() is -1 and the caller polls.
    bool wait_fd = false;
};

/// What fi_getinfo chose, for results and logs.
struct endpoint_description {
    std::string provider, fabric, domain, endpoint_type, protocol;
    /// The RDMA-class device behind the domain (EFA, verbs) whose port 1 counters a point
    /// reads, or the CXI device; empty for tcp, shm and such.
    std::string device;
    std::vector<std::string> mr_mode;
    std::uint64_t max_msg_size = 0;
    std::uint64_t inject_size = 0;
};
nlohmann::json to_json(const endpoint_description&);
/// "tcp;ofi_rxm on lo (fabric 127.0.0.1/32, FI_EP_RDM, FI_PROTO_RXM)".
std::string to_text(const endpoint_description&);

class endpoint {
public:
    /// Opens everything and registers the buffers as the provider's mr_mode asks. Throws
    /// ofi_error naming the step and libfabric's words; ENODATA when no provider matches.
    explicit endpoint(const endpoint_options&);
    ~endpoint();
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    /// This endpoint's address (fi_getname), for the peer's address vector.
    const std::string& address() const { return address_; }
    /// Inserts the peer's address; every message of post_send then goes to it. Throws ofi_error.
    void connect(const std::string& peer_address);
    /// Inserts one more peer's address and returns its handle for send_to. Throws ofi_error,
    /// also for an address of another length than this endpoint's own (another provider).
    std::uint64_t add_peer(const std::string& peer_address);
    const endpoint_description& description() const { return description_; }
    const registration_plan& registration() const { return plan_; }

    /// Sets the message size of the next point: slots() become as many as its pool holds
    /// (at most max_slots). Throws core::spec_error for a size over max_message_bytes.
    void set_message_size(std::uint64_t size);
    /// Slots of the current message size, in each direction.
    std::size_t slots() const { return slots_; }
    std::uint64_t max_message_bytes() const { return max_bytes_; }
    std::byte* tx(std::size_t slot) { return buffer_.get() + slot * stride_; }
    std::byte* rx(std::size_t slot) { return buffer_.get() + pool_bytes_ + slot * stride_; }

    // The data path: never throws, never blocks; returns 0, -FI_EAGAIN (progress the CQ and
    // post again) or another negative FI_E* code. A completion's op_context identifies the
    // slot (slot_of).
    int post_send(std::size_t slot, std::size_t len, std::uint64_t tag) noexcept;
    int post_recv(std::size_t slot, std::size_t len, std::uint64_t tag) noexcept;
    /// Cancels a posted receive; its completion arrives as an FI_ECANCELED error.
    void cancel_recv(std::size_t slot) noexcept;

    // The same over the caller's own buffers and operation contexts (collectives, whose
    // buffers are the size's, to many peers): `context` points to at least
    // operation_context_bytes the caller keeps until the completion; a completion of it
    // comes back with `context` set and `slot` meaningless. Tagged messages only.
    static constexpr std::size_t operation_context_bytes = 64;
    int send_to(std::uint64_t peer, const void* buf, std::size_t len, std::uint64_t tag, void* context) noexcept;
    int recv_tagged(void* buf, std::size_t len, std::uint64_t tag, void* context) noexcept;
    void cancel(void* context) noexcept;

    /// The completion queue's file descriptor (readable when a completion may be there), or -1.
    int wait_fd() const noexcept { return wait_fd_; }
    /// True when nothing is pending and the caller may sleep on wait_fd() (fi_trywait);
    /// false: poll again first.
    bool may_sleep() noexcept;

    /// A completion: which slot, whether it was a receive, and the bytes received.
    struct completion {
        std::size_t slot = 0;
        bool receive = false;
        std::size_t len = 0;
        void* context = nullptr;  ///< the operation's context (the caller's, for send_to / recv_tagged)
    };
    /// Reads up to `max` completions into out. Returns how many (0: none yet); a negative
    /// FI_E* code on a failed completion, whose words error_text() then has (and whose
    /// slot failed_slot() names).
    long poll(completion* out, std::size_t max) noexcept;
    /// The words of the last failed completion or poll, and its code (FI_ECANCELED for a cancel).
    const std::string& last_error() const { return last_error_; }
    int last_error_code() const { return last_error_code_; }
    std::size_t failed_slot() const { return failed_slot_; }
    void* failed_context() const { return failed_context_; }
    bool failed_receive() const { return failed_receive_; }

private:
    void release() noexcept;
    bool locate(void* context, std::size_t& slot, bool& receive) const noexcept;

    std::size_t max_slots_;
    std::size_t slots_ = 1;
    std::uint64_t max_bytes_;
    std::uint64_t pool_bytes_ = 0;  // per direction
    std::uint64_t stride_ = 0;
    message_kind kind_;
    fi_info* info_ = nullptr;
    fid_fabric* fabric_ = nullptr;
    fid_domain* domain_ = nullptr;
    fid_cq* cq_ = nullptr;
    fid_av* av_ = nullptr;
    fid_ep* ep_ = nullptr;
    fid_mr* mr_ = nullptr;
    int wait_fd_ = -1;
    void* desc_ = nullptr;
    /// Page-aligned buffers: freed as allocated (aligned operator delete[]).
    struct aligned_delete {
        void operator()(std::byte* p) const noexcept;
    };
    std::unique_ptr<std::byte[], aligned_delete> buffer_;
    /// One operation context per slot and direction (FI_CONTEXT / FI_CONTEXT2 modes).
    std::unique_ptr<unsigned char[]> contexts_;
    std::uint64_t peer_ = ~0ull;
    std::string address_;
    endpoint_description description_;
    registration_plan plan_;
    std::string last_error_;
    int last_error_code_ = 0;
    std::size_t failed_slot_ = 0;
    void* failed_context_ = nullptr;
    bool failed_receive_ = false;
};

}  // namespace meshperf::transport::ofi
