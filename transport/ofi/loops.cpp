// The latency and bandwidth loops over one endpoint (loops.hpp). Nothing here allocates or
// throws inside a loop; a failure is raised once the loop has ended.
#include "transport/ofi/loops.hpp"

#include "transport/message_pattern.hpp"
#include "transport/ofi/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <rdma/fi_errno.h>

namespace meshperf::transport::ofi {
namespace {

using clock = std::chrono::steady_clock;

/// Look at the clock once every this many idle polls (+1).
constexpr unsigned idle_check_mask = 0x3ff;
/// How long the posted receives' cancellations may take to complete at a point's end.
constexpr auto cancel_drain_limit = std::chrono::milliseconds{1000};

std::string where(const endpoint& ep) { return fmt::format("{} on {}", ep.description().provider, ep.description().domain); }

[[noreturn]] void raise_completion(const endpoint& ep, std::string_view what) {
    throw ofi_error(ep.last_error_code(), fmt::format("{}: {} failed: {}", where(ep), what, ep.last_error()));
}

[[noreturn]] void raise_post(const endpoint& ep, int rc, std::string_view what) {
    throw ofi_error(-rc, fmt::format("{}: posting a {} failed: {}", where(ep), what, error_text(-rc)));
}

[[noreturn]] void raise_timeout(const endpoint& ep, std::chrono::milliseconds limit, std::string_view what) {
    throw ofi_error(FI_ETIMEDOUT, fmt::format("{}: {} within {} ms: the peer is gone or frozen", where(ep), what, limit.count()));
}

/// Sets the point's message size and, with verify, the reference pattern; fills every send
/// slot with it (the hook then flips one byte of each).
std::vector<std::byte> prepare(endpoint& ep, const point_params& p) {
    ep.set_message_size(p.size);
    std::vector<std::byte> reference(p.size);
    fill_message_pattern(reference, p.pattern_seed);
    for (std::size_t s = 0; s < ep.slots(); ++s) {
        std::copy(reference.begin(), reference.end(), ep.tx(s));
        if (p.corrupt_sent_for_test) ep.tx(s)[(p.size - 1) / 2] ^= std::byte{0x5a};
    }
    if (!p.verify) reference.clear();
    return reference;
}

/// Checks a received message: one of the wrong length is corrupt (its length is reported as
/// the bad offset), one of the right length is compared byte for byte.
void check(const std::byte* got, std::size_t len, const std::vector<std::byte>& want, verify_report& r) noexcept {
    ++r.checked;
    if (len == want.size() && std::equal(want.begin(), want.end(), got)) return;
    if (r.corrupt++ != 0) return;
    r.first_bad_offset = len;
    if (len == want.size())
        r.first_bad_offset = static_cast<std::uint64_t>(std::mismatch(want.begin(), want.end(), got).first - want.begin());
}

/// Posts with progress: a provider that answers FI_EAGAIN is polled (completions handed to
/// `seen`) until it takes the operation. Returns 0 or the failing code.
template <class Post, class Seen>
int post_with_progress(endpoint& ep, Post post, Seen seen, std::chrono::milliseconds limit) {
    const auto t0 = clock::now();
    unsigned idle = 0;
    for (;;) {
        const int rc = post();
        if (rc != -FI_EAGAIN) return rc;
        endpoint::completion c[16];
        const long n = ep.poll(c, 16);
        if (n < 0) return static_cast<int>(n);
        for (long i = 0; i < n; ++i) seen(c[i]);
        if ((++idle & idle_check_mask) == 0 && clock::now() - t0 > limit) return -FI_ETIMEDOUT;
    }
}

/// Cancels the `posted` receives of slots [0, n) still outstanding and waits for their
/// completions (successful late arrivals are dropped), so nothing of this point stays
/// posted on the endpoint. Throws ofi_error when they do not all complete in time.
void cancel_receives(endpoint& ep, std::vector<bool>& posted) {
    std::size_t left = 0;
    for (std::size_t s = 0; s < posted.size(); ++s)
        if (posted[s]) {
            ep.cancel_recv(s);
            ++left;
        }
    const auto t0 = clock::now();
    while (left) {
        endpoint::completion c[16];
        const long n = ep.poll(c, 16);
        if (n < 0) {
            if (ep.failed_receive() && ep.failed_slot() < posted.size() && posted[ep.failed_slot()]) {
                posted[ep.failed_slot()] = false;
                --left;
            }
            continue;
        }
        for (long i = 0; i < n; ++i)
            if (c[i].receive && c[i].slot < posted.size() && posted[c[i].slot]) {
                posted[c[i].slot] = false;
                --left;
            }
        if (left && clock::now() - t0 > cancel_drain_limit)
            throw ofi_error(FI_ETIMEDOUT, fmt::format("{}: {} posted receives were not cancelled within {} ms", where(ep), left,
                                                      cancel_drain_limit.count()));
    }
}

}  // namespace

latency_active::latency_active(endpoint& ep, const point_params& p) : ep_(ep), p_(p), reference_(prepare(ep, p)) {}

std::size_t latency_active::run(const std::atomic<bool>& stop, std::span<std::uint64_t> rtt_ns) {
    std::size_t done = 0;
    const auto ignore = [](const endpoint::completion&) {};
    while (done < rtt_ns.size() && !stop.load(std::memory_order_relaxed)) {
        if (const int rc = post_with_progress(ep_, [&] { return ep_.post_recv(0, p_.size, p_.tag); }, ignore, p_.peer_timeout))
            raise_post(ep_, rc, "receive for the reply");
        const auto t0 = clock::now();
        bool sent = false, replied = false;
        std::size_t reply_len = 0;
        const auto seen = [&](const endpoint::completion& c) {
            if (c.receive) {
                replied = true;
                reply_len = c.len;
            } else {
                sent = true;
            }
        };
        if (const int rc = post_with_progress(ep_, [&] { return ep_.post_send(0, p_.size, p_.tag); }, seen, p_.peer_timeout))
            raise_post(ep_, rc, "ping");
        unsigned idle = 0;
        while (!(sent && replied)) {
            endpoint::completion c[4];
            const long n = ep_.poll(c, 4);
            if (n < 0) raise_completion(ep_, "a round trip");
            for (long i = 0; i < n; ++i) seen(c[i]);
            if (n == 0 && (++idle & idle_check_mask) == 0 && clock::now() - t0 > p_.peer_timeout)
                raise_timeout(ep_, p_.peer_timeout, "no reply came");
        }
        rtt_ns[done++] = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count());
        if (p_.verify) check(ep_.rx(0), reply_len, reference_, verify_);
    }
    return done;
}

latency_passive::latency_passive(endpoint& ep, const point_params& p) : ep_(ep), p_(p), reference_(prepare(ep, p)) {
    if (const int rc = ep_.post_recv(0, p_.size, p_.tag)) raise_post(ep_, rc, "receive for the first ping");
}

void latency_passive::run(const std::atomic<bool>& stop) {
    std::vector<bool> posted{true};
    bool sending = false;
    const auto seen = [&](const endpoint::completion& c) {
        if (!c.receive) {
            sending = false;
            return;
        }
        posted[0] = false;
        if (p_.verify) check(ep_.rx(0), c.len, reference_, verify_);
    };
    while (!stop.load(std::memory_order_relaxed)) {
        endpoint::completion c[4];
        const long n = ep_.poll(c, 4);
        if (n < 0) raise_completion(ep_, "answering a ping");
        for (long i = 0; i < n; ++i) {
            seen(c[i]);
            if (!c[i].receive || posted[0]) continue;
            // The next ping's receive goes up before this reply leaves, so it never arrives unexpected.
            if (const int rc = post_with_progress(ep_, [&] { return ep_.post_recv(0, p_.size, p_.tag); }, seen, p_.peer_timeout))
                raise_post(ep_, rc, "receive for the next ping");
            posted[0] = true;
            const auto t0 = clock::now();
            while (sending) {  // the previous reply's slot is free again
                endpoint::completion d[4];
                const long m = ep_.poll(d, 4);
                if (m < 0) raise_completion(ep_, "a reply");
                for (long k = 0; k < m; ++k) seen(d[k]);
                if (sending && clock::now() - t0 > p_.peer_timeout) raise_timeout(ep_, p_.peer_timeout, "a reply did not complete");
            }
            if (const int rc = post_with_progress(ep_, [&] { return ep_.post_send(0, p_.size, p_.tag); }, seen, p_.peer_timeout))
                raise_post(ep_, rc, "reply");
            sending = true;
        }
    }
    const auto t0 = clock::now();
    while (sending) {
        endpoint::completion d[4];
        const long m = ep_.poll(d, 4);
        if (m < 0) raise_completion(ep_, "the last reply");
        for (long k = 0; k < m; ++k) seen(d[k]);
        if (sending && clock::now() - t0 > p_.peer_timeout) raise_timeout(ep_, p_.peer_timeout, "the last reply did not complete");
    }
    cancel_receives(ep_, posted);
}

bandwidth_active::bandwidth_active(endpoint& ep, const point_params& p) : ep_(ep), p_(p) { prepare(ep, p); }

void bandwidth_active::run(const std::atomic<bool>& stop) {
    const std::size_t window = std::clamp<std::size_t>(p_.window, 1, ep_.slots());
    std::vector<std::size_t> free_slots(window);
    for (std::size_t s = 0; s < window; ++s) free_slots[s] = window - 1 - s;
    std::uint64_t posted = 0, completed = 0;
    auto last_progress = clock::now();
    unsigned idle = 0;
    const auto reap = [&](bool draining) {
        endpoint::completion c[16];
        const long n = ep_.poll(c, 16);
        if (n < 0) raise_completion(ep_, "a send");
        for (long i = 0; i < n; ++i)
            if (!c[i].receive) {
                free_slots.push_back(c[i].slot);
                ++completed;
            }
        if (n > 0) {
            counters_.bytes.store(completed * p_.size, std::memory_order_relaxed);
            last_progress = clock::now();
        } else if ((++idle & idle_check_mask) == 0 && clock::now() - last_progress > p_.peer_timeout) {
            raise_timeout(ep_, p_.peer_timeout, draining ? "sends did not complete" : "no send completed");
        }
    };
    while (!stop.load(std::memory_order_relaxed)) {
        while (!free_slots.empty()) {
            const int rc = ep_.post_send(free_slots.back(), p_.size, p_.tag);
            if (rc == -FI_EAGAIN) break;
            if (rc) raise_post(ep_, rc, "send");
            free_slots.pop_back();
            counters_.messages.store(++posted, std::memory_order_relaxed);
        }
        reap(false);
    }
    while (completed < posted) reap(true);
}

bandwidth_passive::bandwidth_passive(endpoint& ep, const point_params& p) : ep_(ep), p_(p), reference_(prepare(ep, p)) {
    for (std::size_t s = 0; s < ep_.slots(); ++s)
        if (const int rc = ep_.post_recv(s, p_.size, p_.tag)) raise_post(ep_, rc, "receive");
}

void bandwidth_passive::run(const std::atomic<bool>& stop) {
    std::vector<bool> posted(ep_.slots(), true);
    std::uint64_t received = 0;
    std::optional<clock::time_point> stopped_at;
    auto last_arrival = clock::now();
    for (;;) {
        endpoint::completion c[16];
        const long n = ep_.poll(c, 16);
        if (n < 0) raise_completion(ep_, "a receive");
        for (long i = 0; i < n; ++i) {
            if (!c[i].receive) continue;
            ++received;
            if (p_.verify) check(ep_.rx(c[i].slot), c[i].len, reference_, verify_);
            counters_.messages.store(received, std::memory_order_relaxed);
            counters_.bytes.fetch_add(c[i].len, std::memory_order_relaxed);
            const int rc = ep_.post_recv(c[i].slot, p_.size, p_.tag);
            if (rc) raise_post(ep_, rc, "receive");
        }
        if (n > 0) last_arrival = clock::now();
        if (!stop.load(std::memory_order_acquire)) continue;
        const auto t = clock::now();
        if (!stopped_at) stopped_at = t;
        const auto expected = expected_.load(std::memory_order_acquire);
        if (expected == unknown ? t - last_arrival > std::chrono::milliseconds{1} : received >= expected) break;
        if (t - *stopped_at > p_.peer_timeout)
            throw ofi_error(FI_ETIMEDOUT, fmt::format("{}: {} of {} announced messages did not arrive within {} ms", where(ep_),
                                                      expected - received, expected, p_.peer_timeout.count()));
    }
    cancel_receives(ep_, posted);
}

}  // namespace meshperf::transport::ofi
