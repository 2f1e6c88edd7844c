// The host TCP loops (transport/tcp/stream_loops) fed real mismatches over a socketpair:
// --verify must turn a flipped byte into loop_verify_failed in each loop that checks
// (receive_loop, echo_loop, pinger), and count what it did check when nothing is wrong.
// Each check is paired with the same data unverified, so the test shows the check is what
// catches the byte, not some other failure.
#include "transport/tcp/pattern.hpp"
#include "transport/tcp/stream_loops.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace stream_loops_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::transport::tcp;

namespace {

struct socket_pair {
    int fd[2] = {-1, -1};
    socket_pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0); }
    ~socket_pair() {
        for (int f : fd)
            if (f >= 0) ::close(f);
    }
};

// `count` messages of `size` pattern bytes, byte `bad` of the stream flipped (npos: none).
std::vector<char> messages(std::size_t size, std::size_t count, std::size_t bad = std::string::npos) {
    const auto p = make_pattern_buffer(size);
    std::vector<char> out;
    for (std::size_t i = 0; i < count; ++i) out.insert(out.end(), p.begin(), p.begin() + static_cast<long>(size));
    if (bad < out.size()) out[bad] ^= 0x5a;
    return out;
}

void write_all_and_close(int& fd, const std::vector<char>& data) {
    std::size_t off = 0;
    while (off < data.size()) {
        const auto n = ::write(fd, data.data() + off, data.size() - off);
        if (n <= 0) break;  // the reader gave up (verify failed): nothing more to send
        off += static_cast<std::size_t>(n);
    }
    ::close(fd);
    fd = -1;
}

// receive_loop over a stream of `data`, in chunks smaller than a message so the pattern
// position must follow the stream offset. Returns the loop's code; bytes counted into *bytes.
int receive(const std::vector<char>& data, std::size_t message, bool verify, std::uint64_t* bytes) {
    socket_pair sp;
    std::thread writer([&] { write_all_and_close(sp.fd[0], data); });
    receive_plan plan{333, verify, 0, message};
    std::vector<char> buffer(plan.chunk);
    const auto pattern = make_pattern_buffer(plan.chunk);
    receive_counters counters;
    const int rc = receive_loop(sp.fd[1], plan, buffer, pattern, counters);
    ::shutdown(sp.fd[1], SHUT_RDWR);
    writer.join();
    *bytes = counters.bytes.load();
    return rc;
}

}  // namespace

TEST_CASE("receive_loop: a flipped byte in the third message fails --verify, and only --verify") {
    const std::size_t size = 1000, bad = 2 * size + 417;
    std::uint64_t bytes = 0;
    CHECK(receive(messages(size, 5), size, true, &bytes) == loop_ok);
    CHECK(bytes == 5 * size);
    CHECK(receive(messages(size, 5, bad), size, true, &bytes) == loop_verify_failed);
    CHECK(bytes <= bad);  // nothing past the bad chunk was counted as received
    CHECK(receive(messages(size, 5, bad), size, false, &bytes) == loop_ok);  // unchecked: the byte passes
    CHECK(bytes == 5 * size);
    CHECK(std::string(describe_loop_error(loop_verify_failed)).find("data corrupted") != std::string::npos);
}

TEST_CASE("echo_loop: a flipped byte fails --verify; clean messages are counted as verified") {
    const std::size_t size = 64;
    for (bool corrupt : {false, true}) {
        CAPTURE(corrupt);
        socket_pair sp;
        const auto data = messages(size, 4, corrupt ? size + 5 : std::string::npos);
        std::thread pinger_end([&] {
            // Send each message and read its echo, as a pinger would, until the echo side stops.
            std::vector<char> back(size);
            for (std::size_t i = 0; i < 4; ++i) {
                if (::write(sp.fd[0], data.data() + i * size, size) != static_cast<ssize_t>(size)) break;
                if (::recv(sp.fd[0], back.data(), size, MSG_WAITALL) != static_cast<ssize_t>(size)) break;
            }
            ::shutdown(sp.fd[0], SHUT_WR);
        });
        std::vector<char> rx(size);
        std::uint64_t verified = 0;
        const int rc = echo_loop(sp.fd[1], size, true, false, rx, make_pattern_buffer(size), &verified);
        ::shutdown(sp.fd[1], SHUT_RDWR);
        pinger_end.join();
        CHECK(rc == (corrupt ? loop_verify_failed : loop_ok));
        CHECK(verified == (corrupt ? size : 4 * size));  // the first message was clean; the second was not
    }
}

TEST_CASE("pinger: an echo that comes back different fails --verify") {
    const std::size_t size = 200;
    for (bool corrupt_echo : {false, true}) {
        CAPTURE(corrupt_echo);
        socket_pair sp;
        std::thread echo_end([&] {
            std::vector<char> m(size);
            for (int i = 0; i < 10; ++i) {
                if (::recv(sp.fd[1], m.data(), size, MSG_WAITALL) != static_cast<ssize_t>(size)) break;
                if (corrupt_echo && i == 3) m[size - 1] ^= 0x01;  // the path flips one bit of the fourth echo
                if (::write(sp.fd[1], m.data(), size) != static_cast<ssize_t>(size)) break;
            }
        });
        pinger p(sp.fd[0], size, true, false);
        std::vector<double> rtt(10);
        const int rc = p.run(10, rtt.data());
        ::shutdown(sp.fd[0], SHUT_RDWR);
        echo_end.join();
        CHECK(rc == (corrupt_echo ? loop_verify_failed : loop_ok));
        CHECK(p.round_trips() == (corrupt_echo ? 3u : 10u));
    }
}

TEST_CASE("pinger: its corrupting test hook reaches the wire, and an echo side with --verify stops it") {
    const std::size_t size = 100;
    socket_pair sp;
    pinger p(sp.fd[0], size, true, false);
    p.corrupt_sent_for_test();
    int echo_rc = 0;
    std::thread echo_end([&] {
        std::vector<char> rx(size);
        echo_rc = echo_loop(sp.fd[1], size, true, false, rx, make_pattern_buffer(size));
        ::shutdown(sp.fd[1], SHUT_RDWR);
    });
    const int rc = p.run(5, nullptr);
    ::shutdown(sp.fd[0], SHUT_RDWR);  // ends the echo side even if it let the bad byte through
    echo_end.join();
    CHECK(echo_rc == loop_verify_failed);
    CHECK(rc == loop_peer_closed);  // the echo side hung up on the corrupt message
    CHECK(p.round_trips() == 0);
}

}  // namespace stream_loops_test
