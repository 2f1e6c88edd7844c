#include "client/daemon_client.hpp"

#include "core/error.hpp"
#include "transport/http_client.hpp"

#include <charconv>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>

namespace meshperf::client {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr auto call_timeout = 30s;
// A run's stream can be silent while it waits in the queue or for a busy peer; events
// arrive at least every point, and queue/wait events when anything changes.
constexpr auto stream_idle_timeout = 600s;

/// "cannot resolve HOST: Name or service not known (...)": a name that does not resolve is
/// not "No route to host".
client_error unresolved(const transport::resolve_error& e, const transport::endpoint_address& addr) {
    return client_error(exit_unreachable, fmt::format("cannot resolve {}: {} (check the host name of meshperfd at {})", e.host(),
                                                      e.code().message(), addr.to_string()));
}

std::string error_of(const transport::http_response& r) {
    const auto body = json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("error") && body["error"].is_string()) return body["error"].get<std::string>();
    return fmt::format("{} {}", r.status, r.reason);
}

}  // namespace

daemon_client::daemon_client(const std::string& address, credentials creds) : creds_(std::move(creds)) {
    try {
        addr_ = transport::parse_endpoint(address);
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
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
        r = transport::http_call(addr_, req, timeout, creds_.tls.get());
    } catch (const transport::tls_error& e) {
        throw client_error(exit_unreachable, e.what());
    } catch (const transport::resolve_error& e) {
        throw unresolved(e, addr_);
    } catch (const std::system_error& e) {
        throw client_error(exit_unreachable, fmt::format("cannot reach meshperfd at {}: {} (is it running? check the address and port)",
                                                         addr_.to_string(), e.code().message()));
    } catch (const transport::http_protocol_error& e) {
        throw client_error(exit_unreachable, fmt::format("{} is not a meshperfd: it {}", addr_.to_string(), e.what()));
    }
    if (r.status == 401) throw client_error(exit_usage, fmt::format("{}: {} (give --token-file or set MESHPERF_TOKEN)", addr_.to_string(), error_of(r)));
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

json daemon_client::get(const std::string& target) const { return call("GET", target, "", call_timeout); }
json daemon_client::del(const std::string& target) const { return call("DELETE", target, "", call_timeout); }
json daemon_client::put(const std::string& target, const json& body) const { return call("PUT", target, body.dump(), call_timeout); }
json daemon_client::post(const std::string& target, const json& body, std::chrono::seconds timeout) const {
    return call("POST", target, body.dump(), timeout);
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
    req.body = body.dump();
    req.headers["Content-Type"] = "application/json";
    req.headers["Accept"] = "application/x-ndjson";
    if (!creds_.token.empty()) req.headers["Authorization"] = "Bearer " + creds_.token;
    std::string pending;
    json result;
    bool answered = false;
    transport::http_response head;
    try {
        head = transport::http_stream(addr_, req, call_timeout, stream_idle_timeout, [&](std::string_view data) {
            answered = true;
            pending.append(data);
            std::size_t nl;
            while ((nl = pending.find('\n')) != std::string::npos) {
                const auto line = pending.substr(0, nl);
                pending.erase(0, nl + 1);
                if (line.empty()) continue;
                auto ev = json::parse(line, nullptr, false);
                if (ev.is_discarded()) continue;
                if (ev.value("event", "") == "result") result = ev["result"];
                on_event(ev);
            }
            return true;
        }, creds_.tls.get());
    } catch (const transport::tls_error& e) {
        throw client_error(exit_unreachable, e.what());
    } catch (const transport::resolve_error& e) {
        throw unresolved(e, addr_);
    } catch (const std::system_error& e) {
        if (!result.is_null()) return result;
        if (!answered)
            throw client_error(exit_unreachable, fmt::format("cannot reach meshperfd at {}: {} (is it running? check the address and port)",
                                                             addr_.to_string(), e.code().message()));
        throw client_error(exit_unreachable, fmt::format("lost meshperfd at {}: {} (the run may still be going: meshperf runs {})",
                                                         addr_.to_string(), e.code().message(), addr_.to_string()));
    } catch (const transport::http_protocol_error& e) {
        if (!result.is_null()) return result;
        // Events arrived, then the stream broke: the daemon went away during the run.
        if (answered)
            throw client_error(exit_unreachable, fmt::format("lost meshperfd at {} during the run: {} (did it stop?)",
                                                             addr_.to_string(), e.what()));
        throw client_error(exit_unreachable, fmt::format("{} is not a meshperfd: it {}", addr_.to_string(), e.what()));
    }
    if (head.status == 401) throw client_error(exit_usage, fmt::format("{}: {} (give --token-file or set MESHPERF_TOKEN)", addr_.to_string(), error_of(head)));
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

credentials client_credentials(const std::string& token_file, const transport::tls_files& tls) {
    credentials c{client_token(token_file), nullptr};
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
