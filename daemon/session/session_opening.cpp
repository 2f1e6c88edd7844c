#include "daemon/session/session_opening.hpp"

#include "core/utf8.hpp"
#include "daemon/session/peer_upgrade.hpp"
#include "daemon/session/session_protocol.hpp"
#include "transport/http_client.hpp"

#include <fmt/format.h>
#include <thread>

namespace meshperf::daemon {

session_attempt try_open_session(daemon_context& ctx, const transport::endpoint_address& peer) {
    transport::http_response refused;
    transport::upgraded_connection up;
    try {
        up = transport::http_upgrade(peer, upgrade_request(ctx, "/v1/session"), session_upgrade, handshake_timeout, refused,
                                     ctx.tls_client.get());
    } catch (const transport::tls_error& e) {
        throw session_error(
            fmt::format("cannot open a session with peer {}: {}", peer.to_string(), core::to_valid_utf8(e.what())));
    } catch (const transport::answer_timeout& e) {
        throw session_error(fmt::format("peer {} {} (its meshperfd frozen or overloaded?)", peer.to_string(), e.what()));
    } catch (const transport::resolve_error& e) {
        throw session_error(fmt::format("cannot resolve peer {}: {} (check the peer's host name)", e.host(),
                                        e.code().message()));
    } catch (const std::system_error& e) {
        throw session_error(fmt::format("cannot reach peer {}: {} (is meshperfd running there, and the port right?)",
                                        peer.to_string(), e.code().message()));
    } catch (const transport::http_protocol_error& e) {
        throw session_error(
            fmt::format("peer {} is not a meshperfd: it {}", peer.to_string(), core::to_valid_utf8(e.what())));
    }
    session_attempt a;
    if (up.stream) {
        a.channel.emplace(std::move(up.stream), std::move(up.leftover), "peer " + peer.to_string());
        return a;
    }
    a.status = refused.status;
    // A peer's words go into the run's error text and so into JSON: made valid UTF-8 here.
    a.why = core::to_valid_utf8(refusal_message(refused));
    a.reason = core::to_valid_utf8(refused.reason);
    return a;
}

session_error refusal_error(const transport::endpoint_address& peer, const session_attempt& r) {
    if (r.status == 426 || r.status == 401 || r.status == 403 || (r.status / 100 == 4 && !r.why.empty()))
        return session_error(fmt::format("peer {} refused the session: {}", peer.to_string(), r.why.empty() ? r.reason : r.why));
    return session_error(fmt::format("peer {} is not a meshperfd: it answered \"{} {}\" to the session upgrade",
                                     peer.to_string(), r.status, r.reason));
}

busy_wait::busy_wait(std::function<void(const nlohmann::json&)> emit, const std::atomic<bool>& cancel)
    : emit_(std::move(emit)), cancel_(cancel), give_up_(transport::clock::now() + busy_peer_patience),
      rng_(std::random_device{}()) {}

bool busy_wait::wait(const std::string& why) {
    if (why != last_) emit_({{"event", "waiting"}, {"reason", why}});
    last_ = why;
    if (transport::clock::now() > give_up_) return false;
    const auto until = transport::clock::now() + std::chrono::milliseconds(150 + rng_() % 500);
    while (transport::clock::now() < until) {
        if (cancel_.load()) throw run_cancelled();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (cancel_.load()) throw run_cancelled();
    return true;
}

std::string busy_wait::gave_up(const std::string& why) const {
    return fmt::format("gave up after {} s: {}", busy_peer_patience.count(), why);
}

}  // namespace meshperf::daemon
