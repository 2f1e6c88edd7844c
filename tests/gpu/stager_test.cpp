// The staging bookkeeping (gpu/stager.hpp) with a fake engine standing in for CUDA: "device
// memory" is host memory and copies are queued like operations on one stream. Two modes
// catch the two ways overlap goes wrong:
//   eager    copies run when enqueued: a slot refilled before the caller is done with it
//            shows up as wrong data;
//   deferred copies run only when waited for: a slot handed out (or reused) before its copy
//            was waited for shows up as wrong data.
#include "gpu/stager.hpp"

#include <cstring>
#include <deque>
#include <doctest/doctest.h>
#include <vector>

using namespace meshperf::gpu;

namespace {

class fake_engine {
public:
    fake_engine(std::size_t chunk_bytes, unsigned chunks, bool eager)
        : chunk_(chunk_bytes), chunks_(chunks), eager_(eager), host_(chunk_bytes * chunks, std::byte{0xee}) {}
    std::size_t chunk_bytes() const { return chunk_; }
    unsigned chunks() const { return chunks_; }
    std::byte* slot(unsigned i) { return host_.data() + i * chunk_; }
    void begin() { ++begins; }
    void copy_to_host(unsigned s, const void* src, std::size_t n) { push({slot(s), src, n, s}); }
    void copy_to_device(void* dst, unsigned s, std::size_t n) { push({dst, slot(s), n, s}); }
    void wait(unsigned s) {
        // Run queued operations in order up to and including the last one for slot s.
        std::size_t last = pending_.size();
        for (std::size_t i = 0; i < pending_.size(); ++i)
            if (pending_[i].slot == s) last = i;
        if (last == pending_.size()) return;
        for (std::size_t i = 0; i <= last; ++i) run(pending_.front()), pending_.pop_front();
    }
    void wait_all() {
        while (!pending_.empty()) run(pending_.front()), pending_.pop_front();
    }
    std::size_t max_in_flight = 0;
    unsigned begins = 0;

private:
    struct op {
        void* dst;
        const void* src;
        std::size_t n;
        unsigned slot;
    };
    void push(op o) {
        if (eager_) return run(o);
        pending_.push_back(o);
        max_in_flight = std::max(max_in_flight, pending_.size());
    }
    static void run(const op& o) { std::memcpy(o.dst, o.src, o.n); }

    std::size_t chunk_;
    unsigned chunks_;
    bool eager_;
    std::vector<std::byte> host_;
    std::deque<op> pending_;
};

std::vector<std::byte> message(std::size_t n, unsigned seed) {
    std::vector<std::byte> m(n);
    for (std::size_t i = 0; i < n; ++i) m[i] = std::byte(static_cast<unsigned char>((i * 131 + seed * 7 + i / 251) & 0xff));
    return m;
}

// Sends a message through the stager and returns what the "socket" got.
std::vector<std::byte> send_through(basic_stager<fake_engine>& st, const std::vector<std::byte>& device) {
    std::vector<std::byte> wire;
    st.start_send(device.data(), device.size());
    for (auto c = st.next_send_chunk(); !c.empty(); c = st.next_send_chunk()) {
        CHECK(c.size() <= st.chunk_bytes());
        wire.insert(wire.end(), c.begin(), c.end());
    }
    return wire;
}

// Receives wire bytes through the stager into "device memory".
std::vector<std::byte> receive_through(basic_stager<fake_engine>& st, const std::vector<std::byte>& wire) {
    std::vector<std::byte> device(wire.size(), std::byte{0});
    st.start_receive(device.data(), device.size());
    std::size_t off = 0;
    for (auto c = st.next_receive_chunk(); !c.empty(); c = st.next_receive_chunk()) {
        std::memcpy(c.data(), wire.data() + off, c.size());
        off += c.size();
        st.commit_receive_chunk();
    }
    st.finish_receive();
    CHECK(off == wire.size());
    return device;
}

}  // namespace

TEST_CASE("staging: messages of every shape arrive intact, eager and deferred") {
    for (bool eager : {true, false}) {
        for (unsigned chunks : {1u, 2u, 4u}) {
            for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{999}, std::size_t{1000},
                                  std::size_t{1001}, std::size_t{4000}, std::size_t{12345}}) {
                CAPTURE(eager);
                CAPTURE(chunks);
                CAPTURE(n);
                basic_stager<fake_engine> tx(std::size_t{1000}, chunks, eager);
                basic_stager<fake_engine> rx(std::size_t{1000}, chunks, eager);
                const auto src = message(n, static_cast<unsigned>(n + chunks));
                const auto wire = send_through(tx, src);
                CHECK(wire == src);
                CHECK(receive_through(rx, wire) == src);
            }
        }
    }
}

TEST_CASE("staging: sender keeps chunks() copies in flight") {
    basic_stager<fake_engine> tx(std::size_t{100}, 4u, false);
    const auto src = message(2000, 3);
    tx.start_send(src.data(), src.size());
    CHECK(tx.engine().max_in_flight == 4);  // all slots filled before the first hand-out
    std::vector<std::byte> wire;
    for (auto c = tx.next_send_chunk(); !c.empty(); c = tx.next_send_chunk()) wire.insert(wire.end(), c.begin(), c.end());
    CHECK(wire == src);
    CHECK(tx.engine().max_in_flight == 4);  // never more than there are slots
}

TEST_CASE("staging: one stager carries many messages back to back") {
    basic_stager<fake_engine> tx(std::size_t{64}, 3u, false);
    basic_stager<fake_engine> rx(std::size_t{64}, 3u, false);
    for (unsigned m = 0; m < 20; ++m) {
        const auto src = message(37 * m + 5, m);
        CHECK(receive_through(rx, send_through(tx, src)) == src);
    }
    CHECK(tx.engine().begins == 20);
}

TEST_CASE("staging: misuse is a logic error, not corruption") {
    basic_stager<fake_engine> st(std::size_t{10}, 2u, true);
    CHECK_THROWS_AS(st.next_send_chunk(), std::logic_error);
    CHECK_THROWS_AS(st.next_receive_chunk(), std::logic_error);
    std::vector<std::byte> dev(25);
    st.start_receive(dev.data(), dev.size());
    CHECK_THROWS_AS(st.commit_receive_chunk(), std::logic_error);  // nothing handed out yet
    auto c = st.next_receive_chunk();
    CHECK(c.size() == 10);
    CHECK_THROWS_AS(st.next_receive_chunk(), std::logic_error);  // not committed
    st.commit_receive_chunk();
    CHECK_THROWS_AS(st.finish_receive(), std::logic_error);  // chunks missing
    CHECK_THROWS_AS(basic_stager<fake_engine>(std::size_t{0}, 2u, true), std::invalid_argument);
    CHECK_THROWS_AS(basic_stager<fake_engine>(std::size_t{10}, 0u, true), std::invalid_argument);
}

TEST_CASE("staging: abandon ends a message part-way; the next message is whole") {
    basic_stager<fake_engine> tx(std::size_t{100}, 3u, false);
    basic_stager<fake_engine> rx(std::size_t{100}, 3u, false);
    const auto src = message(1000, 9);
    tx.start_send(src.data(), src.size());
    CHECK(tx.next_send_chunk().size() == 100);
    tx.abandon();  // the socket failed after one chunk
    CHECK_THROWS_AS(tx.next_send_chunk(), std::logic_error);
    std::vector<std::byte> dev(1000, std::byte{0});
    rx.start_receive(dev.data(), dev.size());
    auto c = rx.next_receive_chunk();
    std::memcpy(c.data(), src.data(), c.size());
    rx.commit_receive_chunk();
    (void)rx.next_receive_chunk();  // handed out, never filled: the stream ended
    rx.abandon();
    CHECK(std::memcmp(dev.data(), src.data(), 100) == 0);  // the committed chunk reached the device
    CHECK(dev[100] == std::byte{0});                         // nothing after it
    CHECK(receive_through(rx, send_through(tx, src)) == src);
}
