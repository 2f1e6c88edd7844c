#include "client/support/daemon_client.hpp"
#include "core/json_text.hpp"

#include "core/error.hpp"
#include "transport/http_client.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <optional>

namespace meshperf::client {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string error_of(const transport::http_response& r) {
    const auto body = json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("error") && body["error"].is_string()) return body["error"].get<std::string>();
    return fmt::format("{} {}", r.status, r.reason);
}

/// A daemon that did not answer a request within its deadline (connected, then nothing).
client_error no_answer(const transport::endpoint_address& addr, std::chrono::milliseconds timeout) {
    return client_error(exit_unreachable, fmt::format("meshperfd at {} did not answer within {} s (frozen, overloaded, or its host "
                                                      "gone?)",
                                                      addr.to_string(), (timeout.count() + 999) / 1000));
}

/// The refusal of `r` (401, or 429 after failed authentications) as auth_refused; nullopt
/// for any other answer.
std::optional<auth_refused> refusal_of(const transport::http_response& r, const transport::endpoint_address& addr,
                                       const credentials& creds) {
    const bool throttled = r.status == 429 && error_of(r).find("failed authentications") != std::string::npos;
    if (r.status == 401 || (throttled && creds.token.empty())) {
        if (creds.token.empty())
            return auth_refused(fmt::format("{} wants a bearer token and none was given: give --token-file FILE (the cluster "
                                            "token, as the daemon's --token-file) or set MESHPERF_TOKEN",
                                            addr.to_string()),
                            exit_usage);
        return auth_refused(fmt::format("{} refused the bearer token from {}: wrong token (give the cluster token, as the "
                                        "daemon's --token-file holds it)",
                                        addr.to_string(), creds.token_source));
    }
    if (throttled)
        return auth_refused(fmt::format("{} refuses this address for a while after failed authentications ({}): the token{} "
                                        "is most likely wrong; fix it, then retry",
                                        addr.to_string(), error_of(r),
                                        creds.token_source.empty() ? std::string() : " from " + creds.token_source));
    return std::nullopt;
}

/// "cannot resolve HOST: Name or service not known (...)": a name that does not resolve is
/// not "No route to host".
client_error unresolved(const transport::resolve_error& e, const transport::endpoint_address& addr) {
    return client_error(exit_unreachable, fmt::format("cannot resolve {}: {} (check the host name of meshperfd at {})", e.host(),
                                                      e.code().message(), addr.to_string()));
}


}  // namespace

daemon_client::daemon_client(const std::string& address, credentials creds, std::shared_ptr<connection_pool> pool)
    : creds_(std::move(creds)), pool_(std::move(pool)) {
    try {
        addr_ = transport::parse_endpoint(address);
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
}

connection_pool::lease daemon_client::connection() const {
    if (pool_) return pool_->take(addr_);
    return connection_pool::lease(nullptr, std::make_unique<transport::http_connection>(addr_, creds_.tls.get(), false));
}

json daemon_client::call(const std::string& method, const std::string& target, const std::string& body,
                         std::chrono::milliseconds timeout) const {
    transport::http_request req;
    req.method = method;
    req.target = target;
    req.body = body;
    if (!body.empty()) req.headers["Content-Type"] = "application/json";
    if (!creds_.token.empty()) req.headers["Authorization"] = "Bearer " + creds_.token;
    transport::http_response r;
    try {
        r = connection()->call(req, timeout);
    } catch (const transport::tls_error& e) {
        throw client_error(exit_unreachable, e.what());
    } catch (const transport::resolve_error& e) {
        throw unresolved(e, addr_);
    } catch (const std::system_error& e) {
        if (e.code() == std::errc::timed_out) throw no_answer(addr_, timeout);
        throw client_error(exit_unreachable, fmt::format("cannot reach meshperfd at {}: {} (is it running? check the address and port)",
                                                         addr_.to_string(), e.code().message()));
    } catch (const transport::http_protocol_error& e) {
        throw client_error(exit_unreachable, fmt::format("{} is not a meshperfd: it {}", addr_.to_string(), e.what()));
    }
    if (auto refused = refusal_of(r, addr_, creds_)) throw *refused;
    if (r.status == 503 && r.headers.count("retry-after")) {
        int seconds = 1;
        const auto& v = r.headers.at("retry-after");
        std::from_chars(v.data(), v.data() + v.size(), seconds);
        throw daemon_busy(fmt::format("{}: {}", addr_.to_string(), error_of(r)), seconds);
    }
    if (r.status / 100 != 2) throw client_error(r.status / 100 == 4 ? exit_usage : exit_run_failed, fmt::format("{}: {}", addr_.to_string(), error_of(r)));
    auto j = json::parse(r.body, nullptr, false);
    if (j.is_discarded()) throw client_error(exit_unreachable, fmt::format("{} answered with something that is not JSON", addr_.to_string()));
    return j;
}

json daemon_client::get(const std::string& target, std::chrono::milliseconds timeout) const {
    return call("GET", target, "", timeout);
}
json daemon_client::del(const std::string& target) const { return call("DELETE", target, "", call_timeout); }
json daemon_client::put(const std::string& target, const json& body) const { return call("PUT", target, core::json_text(body), call_timeout); }
json daemon_client::post(const std::string& target, const json& body, std::chrono::seconds timeout) const {
    return call("POST", target, core::json_text(body), timeout);
}

json daemon_client::run_streaming(const json& spec, const std::function<void(const json&)>& on_event) const {
    return post_streaming("/v1/runs", spec, on_event);
}

json daemon_client::collective_streaming(const json& spec, const std::function<void(const json&)>& on_event) const {
    return post_streaming("/v1/collectives", spec, on_event);
}

json daemon_client::post_streaming(const std::string& target, const json& body,
                                   const std::function<void(const json&)>& on_event) const {
    transport::http_request req;
    req.method = "POST";
    req.target = target;
    req.body = core::json_text(body);
    req.headers["Content-Type"] = "application/json";
    req.headers["Accept"] = "application/x-ndjson";
    if (!creds_.token.empty()) req.headers["Authorization"] = "Bearer " + creds_.token;
    std::string pending;
    json result;
    bool answered = false;
    std::vector<json> points;  // the points so far, kept if the stream is lost
    std::string run_id;
    transport::http_response head;
    // What the lost stream's error says: who stopped, after how many points, what is kept.
    const auto lost = [&](const std::string& what) {
        return stream_lost(fmt::format("{}, after {} point{}", what, points.size(), points.size() == 1 ? "" : "s"), points,
                           run_id);
    };
    try {
        head = connection()->stream(
            req, stream_open_timeout, stream_silence_limit,
            [&](std::string_view data) {
                answered = true;
                pending.append(data);
                std::size_t nl;
                while ((nl = pending.find('\n')) != std::string::npos) {
                    const auto line = pending.substr(0, nl);
                    pending.erase(0, nl + 1);
                    if (line.empty()) continue;
                    auto ev = json::parse(line, nullptr, false);
                    if (ev.is_discarded() || !ev.is_object()) continue;
                    const auto kind = ev.value("event", "");
                    if (kind == "heartbeat") continue;  // the daemon is alive; nothing to show
                    if (kind == "result") result = ev["result"];
                    if (kind == "point" && ev.contains("point")) points.push_back(ev["point"]);
                    on_event(ev);
                }
                return true;
            },
            [&](const transport::http_response& h) {
                if (const auto it = h.headers.find("x-meshperf-run"); it != h.headers.end()) run_id = it->second;
            });
    } catch (const transport::tls_error& e) {
        throw client_error(exit_unreachable, e.what());
    } catch (const transport::resolve_error& e) {
        throw unresolved(e, addr_);
    } catch (const std::system_error& e) {
        if (!result.is_null()) return result;
        if (!answered && run_id.empty()) {
            if (e.code() == std::errc::timed_out) throw no_answer(addr_, stream_open_timeout);
            throw client_error(exit_unreachable, fmt::format("cannot reach meshperfd at {}: {} (is it running? check the address and port)",
                                                             addr_.to_string(), e.code().message()));
        }
        if (e.code() == std::errc::timed_out)
            throw lost(fmt::format("the {} daemon {} stopped answering (frozen, or its host gone): nothing from it for "
                                   "{} s",
                                   target == "/v1/runs" ? "initiator" : "coordinating", addr_.to_string(),
                                   stream_silence_limit.count()));
        throw lost(fmt::format("lost meshperfd at {}: {} (the run may still be going: meshperf runs {})", addr_.to_string(),
                               e.code().message(), addr_.to_string()));
    } catch (const transport::http_protocol_error& e) {
        if (!result.is_null()) return result;
        // Events arrived, then the stream broke: the daemon went away during the run.
        if (answered || !run_id.empty())
            throw lost(fmt::format("lost meshperfd at {} during the run: {} (did it stop?)", addr_.to_string(), e.what()));
        throw client_error(exit_unreachable, fmt::format("{} is not a meshperfd: it {}", addr_.to_string(), e.what()));
    }
    if (auto refused = refusal_of(head, addr_, creds_)) throw *refused;
    if (head.status == 404)
        throw client_error(exit_unreachable, fmt::format("{}: {} (this meshperfd does not serve POST {}: is it older than this "
                                                         "meshperf? upgrade it)",
                                                         addr_.to_string(), error_of(head), target));
    if (head.status / 100 != 2) throw client_error(head.status / 100 == 4 ? exit_usage : exit_run_failed, fmt::format("{}: {}", addr_.to_string(), error_of(head)));
    if (result.is_null()) throw client_error(exit_unreachable, fmt::format("meshperfd at {} ended the event stream without a result", addr_.to_string()));
    return result;
}

std::string client_token(const std::string& token_file) {
    if (!token_file.empty()) {
        std::ifstream in(token_file);
        if (!in) throw client_error(exit_usage, fmt::format("cannot read token file {}", token_file));
        std::string t;
        std::getline(in, t);
        while (!t.empty() && (t.back() == '\r' || t.back() == ' ')) t.pop_back();
        return t;
    }
    const char* env = std::getenv("MESHPERF_TOKEN");
    return env ? env : "";
}

bool report_not_stored(const nlohmann::json& result_doc, const std::string& what, const std::string& where) {
    if (!result_doc.is_object() || result_doc.value("stored", true) != false) return false;
    std::fprintf(stderr, "meshperf: %s completed but %s did not store it: %s (the daemon keeps it in memory and retries; free "
                         "space in its state directory)\n",
                 what.c_str(), where.c_str(), result_doc.value("store_error", "").c_str());
    return true;
}

credentials client_credentials(const std::string& token_file, const transport::tls_files& tls) {
    credentials c{client_token(token_file), nullptr, ""};
    if (!c.token.empty()) c.token_source = token_file.empty() ? "$MESHPERF_TOKEN" : "the token file " + token_file;
    if (tls.enabled()) {
        try {
            c.tls = std::make_shared<transport::tls_context>(transport::tls_context::role::client, tls);
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
    }
    return c;
}

}  // namespace meshperf::client
