#pragma once
/// The chunk bookkeeping of moving GPU memory through pinned host chunks for a socket loop
/// (as NCCL's socket transport does), independent of CUDA: an Engine does the copies.
/// staging.hpp instantiates it with CUDA; tests use an engine with deferred memcpy.
///
/// Engine requirements (all called from the one data thread):
///   std::size_t chunk_bytes() const;  unsigned chunks() const;
///   std::byte* slot(unsigned i);                        // host chunk i
///   void begin();                                       // once per message, before copies
///   void copy_to_host(unsigned slot, const void* src, std::size_t n);   // enqueue
///   void copy_to_device(void* dst, unsigned slot, std::size_t n);       // enqueue
///   void wait(unsigned slot);       // until the last copy enqueued for slot is done
///   void wait_all();                // until every enqueued copy is done
#include <cstddef>
#include <span>
#include <stdexcept>
#include <utility>

namespace meshperf::gpu {

template <typename Engine>
class basic_stager {
public:
    /// Constructs the engine from args (for CUDA: device, chunk_bytes, chunks).
    template <typename... Args>
    explicit basic_stager(Args&&... args) : engine_(std::forward<Args>(args)...) {
        if (engine_.chunk_bytes() == 0 || engine_.chunks() == 0)
            throw std::invalid_argument("staging needs a positive chunk size and at least one chunk");
    }

    std::size_t chunk_bytes() const noexcept { return engine_.chunk_bytes(); }
    unsigned chunks() const noexcept { return engine_.chunks(); }
    Engine& engine() noexcept { return engine_; }

    // ---- Sender: device -> host -> socket --------------------------------------------

    /// Begins a message of bytes at device address src: enqueues the copies of the first
    /// chunks() chunks, which run while the caller sends.
    void start_send(const void* src, std::size_t bytes) {
        engine_.begin();
        mode_ = mode::send;
        base_ = const_cast<void*>(src);
        bytes_ = bytes;
        total_ = (bytes + chunk_bytes() - 1) / chunk_bytes();
        issued_ = handed_ = committed_ = 0;
        while (issued_ < total_ && issued_ < chunks()) issue_to_host();
    }

    /// Waits for the next chunk's copy and returns its host bytes; an empty span once the
    /// message is done. The span is valid until the next call, which takes the slot back
    /// (the caller has sent it by then) and enqueues a later chunk's copy into it.
    std::span<const std::byte> next_send_chunk() {
        if (mode_ != mode::send) throw std::logic_error("next_send_chunk without start_send");
        if (handed_ > 0 && issued_ < total_) issue_to_host();  // the slot handed out last is free
        if (handed_ == total_) {
            mode_ = mode::idle;
            return {};
        }
        const unsigned slot = slot_of(handed_);
        engine_.wait(slot);
        return {engine_.slot(slot), length_of(handed_++)};
    }

    // ---- Receiver: socket -> host -> device --------------------------------------------

    /// Begins receiving a message of bytes into device address dst.
    void start_receive(void* dst, std::size_t bytes) {
        engine_.begin();
        mode_ = mode::receive;
        base_ = dst;
        bytes_ = bytes;
        total_ = (bytes + chunk_bytes() - 1) / chunk_bytes();
        issued_ = handed_ = committed_ = 0;
    }

    /// Returns the host chunk to fill next (all of it: read until it is full), waiting until
    /// that slot's earlier copy to the device is done; an empty span when every chunk of the
    /// message was handed out. Call commit_receive_chunk() after filling it.
    std::span<std::byte> next_receive_chunk() {
        if (mode_ != mode::receive) throw std::logic_error("next_receive_chunk without start_receive");
        if (committed_ != handed_) throw std::logic_error("next_receive_chunk before commit_receive_chunk");
        if (handed_ == total_) return {};
        const unsigned slot = slot_of(handed_);
        engine_.wait(slot);
        return {engine_.slot(slot), length_of(handed_++)};
    }

    /// Enqueues the copy of the chunk just filled to its place in device memory.
    void commit_receive_chunk() {
        if (mode_ != mode::receive || committed_ == handed_)
            throw std::logic_error("commit_receive_chunk without a chunk from next_receive_chunk");
        engine_.copy_to_device(static_cast<std::byte*>(base_) + committed_ * chunk_bytes(), slot_of(committed_),
                               length_of(committed_));
        ++committed_;
    }

    /// Waits until every chunk of the message is in device memory. Throws std::logic_error
    /// when chunks are missing.
    void finish_receive() {
        if (mode_ != mode::receive || committed_ != total_)
            throw std::logic_error("finish_receive before every chunk was received and committed");
        engine_.wait_all();
        mode_ = mode::idle;
    }

    /// Ends the current message early (the stream ended or failed part-way): waits for
    /// every copy in flight, so no slot is still in use, and forgets the message. Chunks of
    /// a receive that were committed have reached device memory; the rest never will.
    void abandon() {
        engine_.wait_all();
        mode_ = mode::idle;
        total_ = issued_ = handed_ = committed_ = 0;
    }

private:
    enum class mode { idle, send, receive };

    unsigned slot_of(std::size_t chunk) const noexcept { return static_cast<unsigned>(chunk % chunks()); }
    std::size_t length_of(std::size_t chunk) const noexcept {
        const std::size_t off = chunk * chunk_bytes();
        return bytes_ - off < chunk_bytes() ? bytes_ - off : chunk_bytes();
    }
    void issue_to_host() {
        engine_.copy_to_host(slot_of(issued_), static_cast<const std::byte*>(base_) + issued_ * chunk_bytes(),
                             length_of(issued_));
        ++issued_;
    }

    Engine engine_;
    mode mode_ = mode::idle;
    void* base_ = nullptr;
    std::size_t bytes_ = 0, total_ = 0, issued_ = 0, handed_ = 0, committed_ = 0;
};

}  // namespace meshperf::gpu
