/// Fuzz target: whole requests on a real meshperfd connection, aimed at the upgrade paths
/// (GET /v1/session and GET /v1/stream). Unlike http_request, which calls the server's pure
/// helpers, this drives the daemon's own connection handler: start_http_server serves two
/// daemons in this process on 127.0.0.1 (kernel-chosen ports, one I/O thread), one without
/// and one with a bearer token. Each input is written to a new loopback connection, the
/// client's end is shut, whatever the server answers is read until it closes (bounded), and
/// then the server must still answer GET /healthz on a new connection; a session the input
/// opened must release the measurement gate once its connection is gone.
///
/// Input: byte 0 chooses the daemon (bit 0: the one with a token) and the size of the writes
/// the rest arrives in (bits 1-7: 0 = one write, else that many bytes per write); the rest
/// is the bytes on the connection and must begin with "GET /v1/s" (others are rejected, so
/// the fuzzer stays on the upgrade paths; keep-alive requests may follow the first).
///
/// Nothing can leave loopback: both daemons' limits allow no stream at all, so every run
/// spec (POST /v1/runs, a session's hello) is refused before anything connects anywhere.
#include "daemon/api/http_server.hpp"
#include "daemon/runtime/host_facts.hpp"
#include "daemon/store/result_store.hpp"
#include "daemon/runs/run_manager.hpp"
#include "tests/fuzz/fuzz_checks.hpp"
#include "transport/socket.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <system_error>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace daemon = meshperf::daemon;
namespace transport = meshperf::transport;
using meshperf::fuzz::property_failed;
using namespace std::chrono_literals;

/// The token of the daemon that requires one (seed inputs send it).
constexpr const char* fuzz_token = "fuzz-token";
/// A data-stream token both daemons expect streams for, so the accepting path is reached.
constexpr const char* expected_stream_token = "fuzz-stream-token";
constexpr std::size_t expected_streams = 2;
/// Bounds of one input's exchange. The server's idle timeout (2 s) ends any connection it
/// holds, so a connection still open after `answer_limit` is a hang.
constexpr auto answer_limit = 5s;
constexpr auto gate_limit = 8s;

/// One daemon served in this process.
struct served_daemon {
    daemon::daemon_context ctx;
    std::unique_ptr<daemon::result_store> store;
    std::unique_ptr<daemon::run_manager> runs;
    std::uint16_t port = 0;
};

/// Both daemons and the I/O thread that serves them; built once, kept for the process.
struct harness {
    asio::io_context io{1};
    served_daemon open, with_token;
    std::thread io_thread;
};

void set_up(served_daemon& d, asio::io_context& io, const std::string& token) {
    char dir[] = "/tmp/meshperf-fuzz-upgrade-XXXXXX";
    if (!::mkdtemp(dir)) property_failed("cannot make a state directory in /tmp");
    d.ctx.host = daemon::local_host_info("127.0.0.1:0");
    d.ctx.limits.max_streams = 0;  // no run spec is valid: nothing is ever measured
    d.ctx.limits.max_qps = 0;
    d.ctx.token = token;
    d.ctx.instance_id = "fuzz-instance";  // a session that carries it is "from itself" (409)
    // Failures stay cheap, yet the throttled answer (429) is still reachable.
    d.ctx.auth_throttle.first_delay = 1ms;
    d.ctx.auth_throttle.max_delay = 2ms;
    d.ctx.streams.open(expected_stream_token, expected_streams);
    d.store = std::make_unique<daemon::result_store>(dir);
    d.runs = std::make_unique<daemon::run_manager>(d.ctx, *d.store);
    daemon::http_limits limits;
    limits.idle_timeout_s = 2;
    d.port = daemon::start_http_server(io, asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), 0), d.ctx, *d.runs,
                                       *d.store, limits);
}

harness& the_harness() {
    // Never destroyed: detached session threads may outlive any static destructor.
    static harness* h = [] {
        std::signal(SIGPIPE, SIG_IGN);
        auto* made = new harness;
        set_up(made->open, made->io, "");
        set_up(made->with_token, made->io, fuzz_token);
        made->io_thread = std::thread([made] { made->io.run(); });
        return made;
    }();
    return *h;
}

transport::socket_fd connect_to(const served_daemon& d) {
    try {
        return transport::connect_tcp({"127.0.0.1", d.port}, 2s);
    } catch (const std::system_error& e) {
        std::fprintf(stderr, "connect to the in-process meshperfd: %s\n", e.what());
        property_failed("the in-process meshperfd no longer accepts connections");
    }
}

/// Writes `bytes` in pieces of `chunk` (0: at once) and shuts the client's end. A server
/// that refuses early may reset the connection meanwhile: that is an answer, not a fault.
void send_request(int fd, std::string_view bytes, std::size_t chunk) {
    const auto deadline = transport::clock::now() + answer_limit;
    try {
        if (chunk == 0) chunk = bytes.size();
        for (std::size_t at = 0; at < bytes.size(); at += chunk)
            transport::send_all(fd, bytes.data() + at, std::min(chunk, bytes.size() - at), deadline);
    } catch (const std::system_error&) {
        return;
    }
    ::shutdown(fd, SHUT_WR);
}

/// Reads the server's answer until it closes the connection or hands it over (101). False
/// when it did neither within answer_limit.
bool read_answer(int fd, std::string& answer) {
    const auto deadline = transport::clock::now() + answer_limit;
    char buf[4096];
    while (true) {
        // An upgraded connection stays open while its session or stream lives.
        const auto switched = answer.find(" 101 Switching Protocols\r\n");
        if (switched != std::string::npos && answer.find("\r\n\r\n", switched) != std::string::npos) return true;
        std::size_t n = 0;
        try {
            n = transport::recv_some(fd, buf, sizeof buf, deadline);
        } catch (const std::system_error& e) {
            return e.code() != std::errc::timed_out;  // reset by the server: it closed
        }
        if (n == 0) return true;
        if (answer.size() < 256 * 1024) answer.append(buf, n);
    }
}

/// GET /healthz on a new connection must answer 200 "ok".
void check_still_serving(const served_daemon& d) {
    auto fd = connect_to(d);
    send_request(fd.get(), "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 0);
    std::string answer;
    if (!read_answer(fd.get(), answer)) property_failed("GET /healthz got no complete answer after this input");
    if (answer.rfind("HTTP/1.1 200 ", 0) != 0 || answer.find("\r\n\r\nok\n") == std::string::npos) {
        std::fprintf(stderr, "GET /healthz answered: %.200s\n", answer.c_str());
        property_failed("the daemon stopped serving GET /healthz after this input");
    }
}

/// A session the input opened ends when its connection is gone, and frees the gate.
void check_gate_released(served_daemon& d) {
    const auto deadline = transport::clock::now() + gate_limit;
    while (!d.ctx.gate.holder().empty()) {
        if (transport::clock::now() > deadline) property_failed("a session still holds the measurement gate after its connection closed");
        std::this_thread::sleep_for(1ms);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return -1;
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (bytes.rfind("GET /v1/s", 0) != 0) return -1;
    auto& h = the_harness();
    auto& d = (data[0] & 1) ? h.with_token : h.open;
    {
        auto fd = connect_to(d);
        send_request(fd.get(), bytes, data[0] >> 1);
        std::string answer;
        if (!read_answer(fd.get(), answer))
            property_failed("the server neither closed nor handed over the connection within 5 s of the request's end");
    }
    check_still_serving(d);
    check_gate_released(d);
    // Streams this input delivered are closed; the next input finds the same expectations.
    d.ctx.streams.close(expected_stream_token);
    d.ctx.streams.open(expected_stream_token, expected_streams);
    return 0;
}
