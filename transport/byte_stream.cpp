#include "transport/byte_stream.hpp"

namespace meshperf::transport {
namespace {

class plain_stream final : public byte_stream {
public:
    explicit plain_stream(socket_fd fd) : fd_(std::move(fd)) {}
    void send_all(const void* data, std::size_t len, clock::time_point deadline) override {
        transport::send_all(fd_.get(), data, len, deadline);
    }
    std::size_t recv_some(void* data, std::size_t len, clock::time_point deadline) override {
        return transport::recv_some(fd_.get(), data, len, deadline);
    }
    int fd() const override { return fd_.get(); }
    bool encrypted() const override { return false; }
    socket_fd release_socket() override { return std::move(fd_); }

private:
    socket_fd fd_;
};

}  // namespace

std::unique_ptr<byte_stream> make_plain_stream(socket_fd fd) { return std::make_unique<plain_stream>(std::move(fd)); }

}  // namespace meshperf::transport
