#include "daemon/session/tls_session_stream.hpp"

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <future>
#include <stdexcept>
#include <system_error>

namespace meshperf::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using transport::clock;
using error_code = boost::system::error_code;

class tls_session_stream final : public transport::byte_stream {
public:
    explicit tls_session_stream(std::shared_ptr<tls_tcp_stream> s)
        : s_(std::move(s)), fd_(beast::get_lowest_layer(*s_).socket().native_handle()) {}

    ~tls_session_stream() override {
        // Closed on the I/O thread, which owns the stream; the shared_ptr keeps it alive.
        asio::post(s_->get_executor(), [s = s_] {
            error_code ec;
            beast::get_lowest_layer(*s).socket().shutdown(asio::socket_base::shutdown_both, ec);
            beast::get_lowest_layer(*s).close();
        });
    }

    void send_all(const void* data, std::size_t len, clock::time_point deadline) override {
        run([&](auto done) { asio::async_write(*s_, asio::buffer(data, len), std::move(done)); }, deadline, "send");
    }

    std::size_t recv_some(void* data, std::size_t len, clock::time_point deadline) override {
        return run([&](auto done) { s_->async_read_some(asio::buffer(data, len), std::move(done)); }, deadline, "receive");
    }

    int fd() const override { return fd_; }
    bool encrypted() const override { return true; }
    transport::socket_fd release_socket() override {
        throw std::logic_error("a TLS session stream cannot hand over its socket");
    }

private:
    /// Starts `start(handler)` on the I/O thread with a deadline timer and waits for it.
    template <class Start>
    std::size_t run(Start&& start, clock::time_point deadline, const char* what) {
        struct outcome {
            std::promise<std::pair<error_code, std::size_t>> done;
            std::atomic<bool> timed_out{false};
        };
        auto o = std::make_shared<outcome>();
        auto result = o->done.get_future();
        asio::post(s_->get_executor(), [s = s_, o, deadline, &start] {
            auto timer = std::make_shared<asio::steady_timer>(s->get_executor(), deadline);
            timer->async_wait([s, o](const error_code& ec) {
                if (ec) return;
                o->timed_out = true;
                error_code ignored;
                beast::get_lowest_layer(*s).socket().cancel(ignored);
            });
            start([timer, o](const error_code& ec, std::size_t n) {
                timer->cancel();
                o->done.set_value({ec, n});
            });
        });
        // `start` is referenced by the posted handler until it has run; the wait below
        // outlives it.
        const auto [ec, n] = result.get();
        if (!ec) return n;
        if (ec == asio::error::operation_aborted && o->timed_out) throw std::system_error(ETIMEDOUT, std::generic_category(), what);
        if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) return 0;
        if (ec.category() == asio::error::get_ssl_category())
            throw transport::tls_error(std::string("TLS ") + what + ": " + ec.message());
        throw std::system_error(ec.value(), std::generic_category(), what);
    }

    std::shared_ptr<tls_tcp_stream> s_;
    int fd_;
};

}  // namespace

std::unique_ptr<transport::byte_stream> make_tls_session_stream(std::shared_ptr<tls_tcp_stream> stream) {
    beast::get_lowest_layer(*stream).expires_never();
    return std::make_unique<tls_session_stream>(std::move(stream));
}

}  // namespace meshperf::daemon
