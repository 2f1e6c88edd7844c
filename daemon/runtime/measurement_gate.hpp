#pragma once
/// One measurement at a time per daemon: the runs it initiates, the sessions it serves and
/// the local copy sweeps share one gate, so no two measurements ever disturb each other.
/// Taking the gate yields a lease; the gate is free again when the lease is released or
/// destroyed, wherever it has been moved to (the session thread, the copy sweep's thread),
/// so no path can forget to release it.
#include <mutex>
#include <string>
#include <utility>

namespace meshperf::daemon {

class measurement_gate {
public:
    /// Holds the gate until released or destroyed. Movable, not copyable; an empty lease
    /// (default-constructed, moved from, or refused) holds nothing.
    class lease {
    public:
        lease() = default;
        lease(lease&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)) {}
        lease& operator=(lease&& other) noexcept {
            if (this != &other) {
                release();
                gate_ = std::exchange(other.gate_, nullptr);
            }
            return *this;
        }
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;
        ~lease() { release(); }

        /// True while this lease holds the gate.
        explicit operator bool() const noexcept { return gate_ != nullptr; }
        /// Frees the gate now (nothing when empty).
        void release() noexcept {
            if (gate_) std::exchange(gate_, nullptr)->free();
        }

    private:
        friend class measurement_gate;
        explicit lease(measurement_gate* g) noexcept : gate_(g) {}
        measurement_gate* gate_ = nullptr;
    };

    measurement_gate() = default;
    measurement_gate(const measurement_gate&) = delete;
    measurement_gate& operator=(const measurement_gate&) = delete;

    /// Takes the gate for `who` ("run r-...", "session from 10.0.0.2"). Returns an empty
    /// lease when it is taken, with the holder's description in `holder`. Any thread.
    lease try_acquire(const std::string& who, std::string& holder);
    /// Description of the current holder, empty when free. Any thread.
    std::string holder() const;

private:
    void free() noexcept;

    mutable std::mutex m_;
    std::string holder_;
};

}  // namespace meshperf::daemon
