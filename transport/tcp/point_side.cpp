#include "transport/tcp/point_side.hpp"

#include "core/units.hpp"
#include "transport/stream_thread.hpp"
#include "transport/tcp/pattern.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

namespace meshperf::transport::tcp {
namespace {

std::size_t receive_chunk(std::uint64_t size) {
    return static_cast<std::size_t>(std::clamp<std::uint64_t>(size, 128 * 1024, 4 * 1024 * 1024));
}

}  // namespace

struct point_side::stream {
    socket_fd fd;
    stream_role role;
    std::vector<char> pattern, buffer;
    std::unique_ptr<staged_stream> staged;  // GPU memory through staging chunks; null: host memory
    receive_counters counters;
    std::atomic<std::uint64_t> bytes_at_stop{0};  // a receiver's count when the point was stopped
    std::atomic<bool> closed_at_bound{false};       // close_overdue shut its read side
    std::atomic<std::uint64_t> sent{0};
    int code = loop_ok;
    std::uint64_t verified = 0;  // bytes checked against the pattern (set when its loop ends)
    std::optional<tcp_snapshot> tcp_before, tcp_after;  // sending streams, around the measured window
    std::vector<tcp_snapshot> tcp_inside;               // and inside it, a reading a tick (at most max_readings_in_window)
    bool tcp_inside_failed = false;                     // a reading inside failed: the counters are unknown
    double cpu_s = 0;
    thread_cpu_record where;
};

std::vector<stream_role> initiator_roles(core::test_kind test, std::uint32_t streams, bool reverse) {
    switch (test) {
        case core::test_kind::latency: return {stream_role::ping};
        case core::test_kind::bandwidth:
            return std::vector<stream_role>(streams, reverse ? stream_role::receive : stream_role::send);
        case core::test_kind::bidir: {
            std::vector<stream_role> roles(streams, stream_role::send);
            roles.insert(roles.end(), streams, stream_role::receive);
            return roles;
        }
    }
    return {};
}

stream_role mirror(stream_role r) {
    switch (r) {
        case stream_role::send: return stream_role::receive;
        case stream_role::receive: return stream_role::send;
        case stream_role::ping: return stream_role::echo;
        case stream_role::echo: return stream_role::ping;
    }
    return r;
}

std::uint64_t warm_messages(std::uint64_t size_bytes) {
    return std::clamp<std::uint64_t>((8ull << 20) / size_bytes, 8, 100'000);
}

point_side::point_side(const core::run_spec& spec, core::test_kind test, std::uint64_t size, std::vector<socket_fd> fds,
                       std::vector<stream_role> roles, std::uint64_t byte_cap, const staged_stream_factory& staged)
    : spec_(spec), test_(test), size_(size) {
    if (byte_cap && !spec.iterations) {
        const auto senders = static_cast<std::uint64_t>(std::count(roles.begin(), roles.end(), stream_role::send));
        const auto pingers = static_cast<std::uint64_t>(std::count(roles.begin(), roles.end(), stream_role::ping));
        if (senders) cap_messages_ = std::max<std::uint64_t>(1, byte_cap / size / senders);
        else if (pingers) cap_messages_ = std::max<std::uint64_t>(1, byte_cap / size);
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
        auto s = std::make_unique<stream>();
        s->fd = std::move(fds[i]);
        s->role = roles.at(i);
        const bool latency = s->role == stream_role::ping || s->role == stream_role::echo;
        prepare_data_socket(s->fd.get(), latency, spec.window_bytes.value_or(0));
        if (latency && spec.busy_poll) try_set_busy_poll(s->fd.get(), 50);
        if (staged) s->staged = staged(s->role, static_cast<std::size_t>(size), i);
        if (s->staged) {
            streams_.push_back(std::move(s));
            continue;
        }
        switch (s->role) {
            case stream_role::send: s->pattern = make_pattern_buffer(size); break;
            case stream_role::receive:
                s->buffer.resize(receive_chunk(size));
                if (spec.verify) s->pattern = make_pattern_buffer(s->buffer.size());
                break;
            case stream_role::echo:
                s->buffer.resize(size);
                if (spec.verify) s->pattern = make_pattern_buffer(size);
                break;
            case stream_role::ping: break;  // the pinger owns its buffers
        }
        streams_.push_back(std::move(s));
    }
}

point_side::~point_side() {
    stop();
    join();
}

void point_side::start() {
    start_ns_ = now_ns();
    joined_ = false;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
        const int cpu = cpu_for_stream(cpus_, i);
        threads_.emplace_back([this, i, cpu] { run_stream(*streams_[i], cpu); });
    }
}

void point_side::run_stream(stream& s, int cpu) {
    s.where.pinned = transport::pin_current_thread(cpu);
    s.where.cpu_at_start = transport::current_cpu();
    const double cpu0 = transport::thread_cpu_seconds();
    const bool fixed = spec_.iterations.has_value();
    if (s.staged) run_staged_stream(s, fixed);
    else run_host_stream(s, fixed);
    end_at_close_bound(s);
    s.cpu_s = transport::thread_cpu_seconds() - cpu0;
    s.where.cpu_at_end = transport::current_cpu();
    const auto end = now_ns();
    auto prev = last_end_ns_.load();
    while (prev < end && !last_end_ns_.compare_exchange_weak(prev, end)) {}
    finished_.fetch_add(1);
}

send_plan point_side::sender_plan(bool fixed) const {
    return {static_cast<std::size_t>(size_), fixed ? warm_messages(size_) + *spec_.iterations : cap_messages_};
}

void point_side::note_byte_cap(const stream& s) {
    if (cap_messages_ && s.code == loop_ok && s.sent.load() >= cap_messages_ * size_) cap_reached_.store(true);
}

void point_side::end_at_close_bound(stream& s) {
    // A receiver closed at the bound whose sender reset the connection meanwhile ended with
    // the bytes it had, as if at its end of stream: the point was over.
    if (s.role != stream_role::receive || !s.closed_at_bound.load() || (s.code != ECONNRESET && s.code != EPIPE)) return;
    s.code = loop_ok;
    s.counters.end_ns.store(now_ns(), std::memory_order_relaxed);
}

void point_side::run_host_stream(stream& s, bool fixed) {
    switch (s.role) {
        case stream_role::send: {
            if (corrupt_sent_ && size_ > 0) s.pattern[size_ / 2] ^= 0x5a;  // test hook: the receiver must see it
            s.code = send_loop(s.fd.get(), sender_plan(fixed), s.pattern, stop_, s.sent);
            note_byte_cap(s);
            break;
        }
        case stream_role::receive: {
            receive_plan plan{s.buffer.size(), spec_.verify, fixed ? warm_messages(size_) * size_ : 0, size_};
            s.code = receive_loop(s.fd.get(), plan, s.buffer, s.pattern, s.counters);
            if (spec_.verify) s.verified = s.counters.bytes.load();  // each chunk is checked before it is counted
            break;
        }
        case stream_role::echo:
            s.code = echo_loop(s.fd.get(), static_cast<std::size_t>(size_), spec_.verify, spec_.busy_poll, s.buffer,
                               s.pattern, &s.verified);
            break;
        case stream_role::ping: {
            try {
                pinger p(s.fd.get(), static_cast<std::size_t>(size_), spec_.verify, spec_.busy_poll);
                if (corrupt_sent_) p.corrupt_sent_for_test();
                run_pings(s, [&p](std::size_t n, double* out) { return p.run(n, out); },
                          [&p] { return p.round_trips(); });
                if (spec_.verify) s.verified = p.round_trips() * size_;  // every echo compared with what was sent
            } catch (const std::bad_alloc&) {
                s.code = ENOMEM;
                ::shutdown(s.fd.get(), SHUT_WR);
            }
            break;
        }
    }
}

void point_side::run_staged_stream(stream& s, bool fixed) {
    staged_stream& m = *s.staged;
    switch (s.role) {
        case stream_role::send: {
            s.code = m.send(s.fd.get(), sender_plan(fixed), stop_, s.sent);
            note_byte_cap(s);
            break;
        }
        case stream_role::receive: {
            receive_plan plan{0, spec_.verify, fixed ? warm_messages(size_) * size_ : 0, size_};
            s.code = m.receive(s.fd.get(), plan, s.counters);
            if (spec_.verify) s.verified = s.counters.bytes.load();
            break;
        }
        case stream_role::echo: s.code = m.echo(s.fd.get()); break;
        case stream_role::ping:
            run_pings(s, [&m, &s](std::size_t n, double* out) { return m.ping(s.fd.get(), n, out); },
                      [&m] { return m.round_trips(); });
            if (spec_.verify) s.verified = m.round_trips() * size_;  // each echo checked as it arrived
            break;
    }
}

void point_side::run_pings(stream& s, const std::function<int(std::size_t, double*)>& batch,
                           const std::function<std::uint64_t()>& round_trips) {
    try {
        const auto cap = cap_messages_;
        latency_ = core::run_latency(
            [&](std::size_t n, double* out) {
                const int rc = batch(n, out);
                if (cap && round_trips() >= cap) {  // byte limit: this batch is the last
                    cap_reached_.store(true);
                    stop_.store(true, std::memory_order_relaxed);
                }
                return rc;
            },
            spec_, samples_, stop_);
        s.code = latency_.code;
    } catch (const std::bad_alloc&) {
        s.code = ENOMEM;
    }
    ::shutdown(s.fd.get(), SHUT_WR);  // tells the echo side the point is over
}

void point_side::stop() {
    std::int64_t none = 0;
    if (stop_ns_.compare_exchange_strong(none, now_ns()))
        for (auto& s : streams_) s->bytes_at_stop.store(s->counters.bytes.load(std::memory_order_relaxed));
    stop_.store(true, std::memory_order_relaxed);
}

void point_side::close_overdue() {
    const auto since = stop_ns_.load();
    if (since == 0 || now_ns() - since < std::int64_t{close_bound_ms} * 1'000'000) return;
    for (auto& s : streams_) {
        if (s->role != stream_role::receive || s->closed_at_bound.load()) continue;
        // Only a receiver whose path still delivers (bytes since the stop: a slow or lossy
        // path draining its queue) is closed here. One that took nothing since the stop is a
        // dead or frozen path: its data-stream timeout ends it as a failure (about 5-10 s),
        // so a cut rail is never read as a clean, slow one.
        if (s->counters.bytes.load(std::memory_order_relaxed) == s->bytes_at_stop.load()) continue;
        s->closed_at_bound.store(true);
        // recv then returns what is queued, then 0: the loop sees an end of stream. The read
        // side only: a FIN sent now would make the kernel reset the connection when more data
        // arrives (FIN_WAIT with the read side shut), and the stream would fail at the peer.
        ::shutdown(s->fd.get(), SHUT_RD);
    }
}

void point_side::abort() {
    stop();
    for (auto& s : streams_) ::shutdown(s->fd.get(), SHUT_RDWR);
}

std::uint64_t point_side::sent_bytes() const {
    std::uint64_t sum = 0;
    for (const auto& s : streams_) sum += s->sent.load(std::memory_order_relaxed);
    return sum;
}

std::int64_t point_side::last_receive_end_ns() const {
    std::int64_t last = 0;
    for (const auto& s : streams_)
        if (s->role == stream_role::receive) last = std::max(last, s->counters.end_ns.load());
    return last;
}

void point_side::join() {
    // A stopped point: wait for the streams, closing the receivers at the close bound.
    while (stop_ns_.load() != 0 && !threads_.empty() && !finished()) {
        close_overdue();
        const timespec pause{0, 5'000'000};
        ::nanosleep(&pause, nullptr);
    }
    for (auto& t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
    joined_ = true;
}

std::vector<std::uint64_t> point_side::received_bytes() const {
    // Bytes that have arrived: read by the loop, plus those waiting in the socket's receive
    // queue. Counting only what was read would let a receiver that fell behind at the start
    // of the window and caught up by its end report more than the link carried. Reading the
    // counter before the queue errs low by at most one chunk, never high.
    std::vector<std::uint64_t> out;
    for (const auto& s : streams_)
        if (s->role == stream_role::receive) {
            const auto read = s->counters.bytes.load(std::memory_order_relaxed);
            int queued = 0;
            if (::ioctl(s->fd.get(), FIONREAD, &queued) != 0 || queued < 0) queued = 0;
            out.push_back(read + static_cast<std::uint64_t>(queued));
        }
    return out;
}

std::size_t point_side::receivers() const {
    return static_cast<std::size_t>(
        std::count_if(streams_.begin(), streams_.end(), [](const auto& s) { return s->role == stream_role::receive; }));
}

void point_side::read_tcp_counters_before_window() {
    for (auto& s : streams_)
        if (s->role == stream_role::send) {
            s->tcp_before = read_tcp_snapshot(s->fd.get());
            s->tcp_inside.clear();  // a later reading before the window replaces the earlier one
            s->tcp_inside_failed = false;
        }
}

void point_side::read_tcp_counters_in_window() {
    for (auto& s : streams_) {
        if (s->role != stream_role::send || s->tcp_inside.size() >= max_readings_in_window) continue;
        if (const auto r = read_tcp_snapshot(s->fd.get())) s->tcp_inside.push_back(*r);
        else s->tcp_inside_failed = true;
    }
}

void point_side::read_tcp_counters_after_window() {
    for (auto& s : streams_)
        if (s->role == stream_role::send) s->tcp_after = read_tcp_snapshot(s->fd.get());
}

std::optional<core::tcp_point_counters> point_side::sent_tcp_counters() const {
    std::vector<stream_tcp_readings> readings;
    for (const auto& s : streams_) {
        if (s->role != stream_role::send) continue;
        if (!s->tcp_before || !s->tcp_after || s->tcp_inside_failed) return std::nullopt;
        readings.push_back({*s->tcp_before, s->tcp_inside, *s->tcp_after});
    }
    if (readings.empty()) return std::nullopt;
    return tcp_counters_of(readings);
}

std::optional<std::size_t> point_side::failed_stream() const {
    const auto all = failed_streams();
    if (all.empty()) return std::nullopt;
    return all.front();
}

std::vector<std::size_t> point_side::failed_streams() const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < streams_.size(); ++i)
        if (streams_[i]->code != loop_ok && streams_[i]->code != ECANCELED) out.push_back(i);
    return out;
}

std::string point_side::stream_error(std::size_t i) const {
    if (i >= streams_.size()) return {};
    const auto& s = *streams_[i];
    if (s.code == loop_ok || s.code == ECANCELED) return {};
    if (s.code == loop_staging_failed && s.staged) return std::string(describe_loop_error(s.code)) + ": " + s.staged->failure();
    return describe_loop_error(s.code);
}

std::string point_side::error() const {
    const auto i = failed_stream();
    return i ? stream_error(*i) : std::string();
}

bool point_side::verify_failed() const {
    return std::any_of(streams_.begin(), streams_.end(), [](const auto& s) { return s->code == loop_verify_failed; });
}

std::uint64_t point_side::verified_bytes() const {
    std::uint64_t sum = 0;
    for (const auto& s : streams_) sum += s->verified;
    return sum;
}

double point_side::cpu_seconds() const {
    double sum = 0;
    for (const auto& s : streams_) sum += s->cpu_s;
    return sum;
}

std::vector<thread_cpu_record> point_side::thread_cpus() const {
    std::vector<thread_cpu_record> out;
    for (const auto& s : streams_) out.push_back(s->where);
    return out;
}

double point_side::wall_seconds() const {
    const auto end = last_end_ns_.load();
    return end > start_ns_ ? core::seconds_from_ns(static_cast<double>(end - start_ns_)) : 0.0;
}

std::vector<std::uint64_t> point_side::measured_bytes() const {
    std::vector<std::uint64_t> out;
    const std::uint64_t warm = spec_.iterations ? warm_messages(size_) * size_ : 0;
    for (const auto& s : streams_)
        if (s->role == stream_role::receive) {
            const auto b = s->counters.bytes.load();
            out.push_back(b > warm ? b - warm : 0);
        }
    return out;
}

std::vector<std::int64_t> point_side::begin_ns() const {
    std::vector<std::int64_t> out;
    for (const auto& s : streams_)
        if (s->role == stream_role::receive) out.push_back(s->counters.measure_begin_ns.load());
    return out;
}

std::vector<std::int64_t> point_side::end_ns() const {
    std::vector<std::int64_t> out;
    for (const auto& s : streams_)
        if (s->role == stream_role::receive) out.push_back(s->counters.end_ns.load());
    return out;
}

}  // namespace meshperf::transport::tcp
