// rdma_selftest: both sides of every RDMA test in one process (two endpoints on the same
// device, connected to each other; Soft-RoCE loops the packets back), the error cases that
// can be provoked, and a check that every QP, CQ, MR and PD is released after each.
//
//   rdma_selftest [--device D] [--port N] [--ip A] [--netdev IF] [--quick]
//                 [--seconds S] [--iterations N] [--sizes 8,65536]
//       exits 0 when every figure is sane and every verify passed, 1 on any failure,
//       77 when the node has no RDMA device (after checking that this is reported cleanly).
//   rdma_selftest bench --op write|read|send --test latency|bandwidth --size N
//                 [--seconds S] [--iterations N] [--qps N]
//       one measurement, one "BENCH ..." line, for comparison with perftest.
//
// --netdev names the RoCE netdev; with it the port-down case is provoked (link set down,
// then up again). Without `rdma` (iproute2) on PATH the resource checks are skipped.
#include "core/error.hpp"
#include "transport/rdma/bandwidth.hpp"
#include "transport/rdma/endpoint.hpp"
#include "transport/rdma/error.hpp"
#include "transport/rdma/gid.hpp"
#include "transport/rdma/inventory.hpp"
#include "transport/rdma/latency.hpp"
#include "transport/rdma/memlock.hpp"
#include "transport/rdma/pattern.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <functional>
#include <linux/capability.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace rdma = meshperf::transport::rdma;
using meshperf::core::rdma_op;
using namespace std::chrono_literals;

namespace {

struct config {
    std::string device, ip, netdev;
    std::uint8_t port = 1;
    bool quick = false;
    double seconds = 0.3;
    std::uint64_t iterations = 300;
    std::vector<std::uint64_t> sizes{8, 4096, 65536};
    // bench
    rdma_op op = rdma_op::write;
    bool latency = false;
    std::uint64_t size = 65536;
    std::uint32_t qps = 1;
};

int failures = 0;

void fail(const std::string& what) {
    ++failures;
    fmt::print("FAIL: {}\n", what);
    std::fflush(stdout);
}

void ok(const std::string& what) { fmt::print("ok:   {}\n", what); }

bool sane(double v) { return std::isfinite(v) && v > 0; }

// ---- resources, as `rdma resource show` counts them ----------------------------------------

using resource_counts = std::map<std::string, long>;

std::optional<resource_counts> rdma_resources() {
    FILE* p = popen("rdma resource show 2>/dev/null", "r");
    if (!p) return std::nullopt;
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    if (pclose(p) != 0 || out.empty()) return std::nullopt;
    resource_counts counts;
    std::istringstream in(out);
    std::string word, prev;
    while (in >> word) {
        if (!prev.empty() && std::all_of(word.begin(), word.end(), ::isdigit) &&
            (prev == "pd" || prev == "cq" || prev == "qp" || prev == "mr" || prev == "ctx"))
            counts[prev] += std::stol(word);
        prev = word;
    }
    return counts;
}

std::optional<resource_counts> baseline;

void check_released(const std::string& after) {
    if (!baseline) return;
    const auto now = rdma_resources();
    if (!now) {
        fail(after + ": `rdma resource show` failed");
        return;
    }
    if (*now != *baseline) {
        std::string diff;
        for (const auto& [k, v] : *now) diff += fmt::format(" {} {} (was {})", k, v, (*baseline)[k]);
        fail(fmt::format("{}: resources left:{}", after, diff));
        return;
    }
    ok(after + ": no QP/CQ/MR/PD/context left (rdma resource show)");
}

// ---- checks that need no device --------------------------------------------------------------

void check_offline() {
    rdma::endpoint_info e;
    e.device = "rxe0";
    e.gid = *rdma::gid_for_address("192.0.2.1");
    e.gid_index = 1;
    e.mtu = 4096;
    e.max_rd_atomic = 16;
    e.max_inline = 220;
    e.qps = {{0x11, 0xabcdef, 0x7f00deadbeef0000ull, 0x1234, 65536}, {0x12, 7, 4096, 1, 8}};
    const nlohmann::json j = e;
    const auto back = j.get<rdma::endpoint_info>();
    const bool same = back.gid == e.gid && back.qps.size() == 2 && back.qps[0].addr == e.qps[0].addr &&
                      back.qps[0].psn == e.qps[0].psn && back.qps[1].rkey == 1 && back.mtu == 4096 &&
                      back.gid_index == 1 && back.max_inline == 220;
    same ? ok("endpoint_info JSON round trip: " + j.dump()) : fail("endpoint_info JSON round trip");
    if (rdma::gid_ipv4(e.gid) != std::optional<std::string>("192.0.2.1")) fail("gid_ipv4");
    for (const char* broken : {R"({"schema":"x"})", R"([1])",
                               R"({"schema":"meshperf.rdma-endpoint/1","device":"a","port":1,"link_layer":"Ethernet","lid":0,"gid":"zz","gid_index":0,"mtu":1024,"max_rd_atomic":1,"max_inline":0,"qps":[]})"}) {
        try {
            (void)rdma::endpoint_info_from_json(nlohmann::json::parse(broken));
            fail(fmt::format("malformed endpoint description accepted: {}", broken));
        } catch (const meshperf::core::spec_error& ex) {
            ok(fmt::format("malformed endpoint description rejected: {}", ex.what()));
        }
    }
    std::vector<std::byte> a(100), b(100);
    rdma::fill_pattern(a, 5);
    rdma::fill_pattern(b, 5);
    if (a != b) fail("pattern not deterministic");
    rdma::fill_pattern(b, 6);
    if (a == b) fail("patterns of different seeds equal");
}

// ---- a connected pair of endpoints ------------------------------------------------------------

struct pair {
    std::unique_ptr<rdma::endpoint> a, b;  // a: active side, b: passive side
};

rdma::endpoint_options options_for(const config& c, std::uint32_t qps, std::uint64_t max_size) {
    rdma::endpoint_options o;
    o.device = c.device;
    o.port = c.port;
    o.local_ip = c.ip;
    o.qps = qps;
    o.max_message_bytes = max_size;
    return o;
}

pair make_pair(const rdma::endpoint_options& o) {
    pair p;
    p.a = std::make_unique<rdma::endpoint>(o);
    p.b = std::make_unique<rdma::endpoint>(o);
    // The descriptions go through JSON, as they do in the peer session.
    const nlohmann::json ja = p.a->local_info(), jb = p.b->local_info();
    p.a->connect(rdma::endpoint_info_from_json(nlohmann::json::parse(jb.dump())));
    p.b->connect(rdma::endpoint_info_from_json(nlohmann::json::parse(ja.dump())));
    return p;
}

// ---- one latency point ------------------------------------------------------------------------

struct latency_figures {
    std::size_t samples = 0;
    double min_us = 0, p50_us = 0, avg_us = 0, max_us = 0;  // one-way = RTT / 2
    rdma::verify_report active, passive;
};

latency_figures run_latency(pair& pr, const rdma::point_params& p, std::uint64_t iterations) {
    // Protocol: passive arms, says "ready", runs; active runs; active says "done"; passive stops.
    rdma::latency_passive passive(*pr.b, 0, p);
    rdma::latency_active active(*pr.a, 0, p);
    std::atomic<bool> stop_passive{false}, stop_active{false};
    std::exception_ptr passive_error;
    std::thread t([&] {
        try {
            passive.run(stop_passive);
        } catch (...) {
            passive_error = std::current_exception();
        }
    });
    std::vector<std::uint64_t> rtt(iterations);
    std::size_t n = 0;
    std::exception_ptr active_error;
    try {
        const std::size_t warm = std::min<std::size_t>(iterations / 10 + 1, rtt.size());
        active.run(stop_active, std::span(rtt).first(warm));  // warm-up, not counted
        n = active.run(stop_active, rtt);
    } catch (...) {
        active_error = std::current_exception();
    }
    stop_passive = true;
    t.join();
    if (active_error) std::rethrow_exception(active_error);
    if (passive_error) std::rethrow_exception(passive_error);
    latency_figures f;
    f.samples = n;
    std::vector<double> us;
    for (std::size_t i = 0; i < n; ++i) us.push_back(static_cast<double>(rtt[i]) / 2000.0);
    std::sort(us.begin(), us.end());
    if (!us.empty()) {
        f.min_us = us.front();
        f.max_us = us.back();
        f.p50_us = us[us.size() / 2];
        double sum = 0;
        for (double v : us) sum += v;
        f.avg_us = sum / static_cast<double>(us.size());
    }
    f.active = active.verification();
    f.passive = passive.verification();
    return f;
}

// ---- one bandwidth point (all QPs of the pair, one thread per QP and side) ----------------------

struct bandwidth_figures {
    double gbit_per_s = 0, mib_per_s = 0, mmsg_per_s = 0;
    std::uint64_t bytes = 0, messages = 0, received = 0;
    double seconds = 0;
    rdma::verify_report verify;  // summed over QPs and both sides
    bool inline_sends = false;
};

bandwidth_figures run_bandwidth(pair& pr, const rdma::point_params& p, double seconds) {
    const std::size_t qps = pr.a->qp_count();
    std::vector<std::unique_ptr<rdma::bandwidth_passive>> passive;
    std::vector<std::unique_ptr<rdma::bandwidth_active>> active;
    for (std::size_t q = 0; q < qps; ++q) passive.push_back(std::make_unique<rdma::bandwidth_passive>(*pr.b, q, p));
    for (std::size_t q = 0; q < qps; ++q) active.push_back(std::make_unique<rdma::bandwidth_active>(*pr.a, q, p));
    std::atomic<bool> stop_active{false}, stop_passive{false};
    std::vector<std::exception_ptr> errors(2 * qps);
    std::vector<std::thread> passive_threads, active_threads;
    for (std::size_t q = 0; q < qps; ++q)
        passive_threads.emplace_back([&, q] {
            try {
                passive[q]->run(stop_passive);
            } catch (...) {
                errors[q] = std::current_exception();
            }
        });
    for (std::size_t q = 0; q < qps; ++q)
        active_threads.emplace_back([&, q] {
            try {
                active[q]->run(stop_active);
            } catch (...) {
                errors[qps + q] = std::current_exception();
            }
        });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop_active = true;
    for (auto& t : active_threads) t.join();
    for (std::size_t q = 0; q < qps; ++q) passive[q]->expect(active[q]->messages());  // "done"
    stop_passive = true;
    for (auto& t : passive_threads) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    bandwidth_figures f;
    std::int64_t first = 0, last = 0;
    for (std::size_t q = 0; q < qps; ++q) {
        const auto s = active[q]->counters().load();
        f.bytes += s.bytes;
        f.messages += s.messages;
        first = first == 0 ? s.first_ns : std::min(first, s.first_ns);
        last = std::max(last, s.last_ns);
        f.received += passive[q]->counters().load().messages;
        for (const auto* v : {&active[q]->verification(), &passive[q]->verification()}) {
            f.verify.checked += v->checked;
            f.verify.corrupt += v->corrupt;
        }
    }
    f.inline_sends = active[0]->inline_sends();
    f.seconds = last > first ? static_cast<double>(last - first) * 1e-9 : 0;
    if (f.seconds > 0) {
        f.gbit_per_s = static_cast<double>(f.bytes) * 8 / f.seconds / 1e9;
        f.mib_per_s = static_cast<double>(f.bytes) / f.seconds / 1048576.0;
        f.mmsg_per_s = static_cast<double>(f.messages) / f.seconds / 1e6;
    }
    return f;
}

// ---- the sweep ----------------------------------------------------------------------------------

void sweep(const config& c) {
    const std::uint64_t max_size = *std::max_element(c.sizes.begin(), c.sizes.end());
    std::uint32_t seed = 1;
    fmt::print("\n{:<9} {:<5} {:>7} {:>3} {:>6} | {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>8} | {}\n", "test",
               "op", "size", "qps", "verify", "lat_min", "lat_p50", "lat_avg", "lat_max", "Gbit/s",
               "MiB/s", "Mmsg/s", "notes");
    for (const bool lat : {true, false}) {
        const std::uint32_t qps = lat ? 1 : 2;
        pair pr = make_pair(options_for(c, qps, max_size));
        for (const rdma_op op : {rdma_op::write, rdma_op::send, rdma_op::read}) {
            for (const std::uint64_t size : c.sizes) {
                for (const bool verify : {false, true}) {
                    rdma::point_params p;
                    p.op = op;
                    p.size = size;
                    p.verify = verify;
                    p.pattern_seed = seed++;
                    p.peer_timeout = 30s;  // TCG on a loaded host stalls for seconds
                    const std::string name = fmt::format("{} {} {} B qps {}{}", lat ? "latency" : "bandwidth",
                                                         meshperf::core::to_string(op), size, qps,
                                                         verify ? " verify" : "");
                    try {
                        if (lat) {
                            const auto f = run_latency(pr, p, c.iterations);
                            fmt::print("{:<9} {:<5} {:>7} {:>3} {:>6} | {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} | {:>9} {:>9} {:>8} | {} samples{}\n",
                                       "latency", meshperf::core::to_string(op), size, qps, verify ? "yes" : "no",
                                       f.min_us, f.p50_us, f.avg_us, f.max_us, "", "", "", f.samples,
                                       verify ? fmt::format(", verified {}+{}", f.active.checked, f.passive.checked) : "");
                            if (f.samples != c.iterations) fail(name + fmt::format(": {} of {} samples", f.samples, c.iterations));
                            if (!sane(f.min_us) || !sane(f.p50_us) || !sane(f.avg_us) || !sane(f.max_us))
                                fail(name + ": insane latency figure");
                            if (verify && (!f.active.ok() || !f.passive.ok() || f.active.checked + f.passive.checked == 0))
                                fail(name + fmt::format(": verify failed (active {}/{} corrupt, passive {}/{}, first bad offset {})",
                                                        f.active.corrupt, f.active.checked, f.passive.corrupt,
                                                        f.passive.checked, std::max(f.active.first_bad_offset, f.passive.first_bad_offset)));
                        } else {
                            const auto f = run_bandwidth(pr, p, c.seconds);
                            fmt::print("{:<9} {:<5} {:>7} {:>3} {:>6} | {:>9} {:>9} {:>9} {:>9} | {:>9.4f} {:>9.2f} {:>8.4f} | {} msgs{}{}{}\n",
                                       "bandwidth", meshperf::core::to_string(op), size, qps, verify ? "yes" : "no",
                                       "", "", "", "", f.gbit_per_s, f.mib_per_s, f.mmsg_per_s, f.messages,
                                       op == rdma_op::send ? fmt::format(", {} received", f.received) : "",
                                       f.inline_sends ? ", inline" : "",
                                       verify ? fmt::format(", verified {}", f.verify.checked) : "");
                            if (!sane(f.gbit_per_s) || !sane(f.mib_per_s) || !sane(f.mmsg_per_s) || f.bytes == 0)
                                fail(name + ": insane bandwidth figure");
                            if (op == rdma_op::send && f.received != f.messages)
                                fail(name + fmt::format(": sent {} but received {}", f.messages, f.received));
                            if (f.bytes != f.messages * size) fail(name + ": bytes != messages * size");
                            if (verify && (!f.verify.ok() || f.verify.checked == 0))
                                fail(name + fmt::format(": verify failed ({} of {} corrupt)", f.verify.corrupt, f.verify.checked));
                        }
                    } catch (const std::exception& e) {
                        fail(name + ": " + e.what());
                        return;  // the pair is unusable after an error
                    }
                    std::fflush(stdout);
                }
            }
        }
    }
    fmt::print("\n");
}

// ---- error cases --------------------------------------------------------------------------------

template <class Ex = rdma::rdma_error>
void expect_error(const std::string& name, const std::function<void()>& body, const std::string& needle,
                  std::optional<std::errc> code = std::nullopt, const std::error_category* category = nullptr,
                  int value = 0) {
    try {
        body();
        fail(name + ": no error");
    } catch (const Ex& e) {
        const std::string what = e.what();
        bool good = what.find(needle) != std::string::npos;
        if constexpr (std::is_base_of_v<std::system_error, Ex>)
        {
            if (code && e.code() != *code) good = false;
            if (category && e.code() != std::error_code(value, *category)) good = false;
        }
        good ? ok(fmt::format("{}: {}", name, what)) : fail(fmt::format("{}: unexpected message: {}", name, what));
    } catch (const std::exception& e) {
        fail(fmt::format("{}: wrong exception type: {}", name, e.what()));
    }
    check_released("after " + name);
}

bool drop_ipc_lock() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &header, data) != 0) return false;
    for (auto& d : data) {
        if (&d == &data[CAP_IPC_LOCK / 32]) {
            d.effective &= ~(1u << (CAP_IPC_LOCK % 32));
            d.permitted &= ~(1u << (CAP_IPC_LOCK % 32));
            d.inheritable &= ~(1u << (CAP_IPC_LOCK % 32));
        }
    }
    return syscall(SYS_capset, &header, data) == 0;
}

// Runs body in a child whose RLIMIT_MEMLOCK is limit and which lacks CAP_IPC_LOCK (as root
// would otherwise ignore the limit). The child exits 0 when body returned true.
void memlock_case(const std::string& name, rlim_t limit, const std::function<bool()>& body) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        rlimit rl{limit, limit};
        if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0 || !drop_ipc_lock()) {
            fmt::print("FAIL: {}: cannot lower RLIMIT_MEMLOCK / drop CAP_IPC_LOCK: {}\n", name, std::strerror(errno));
            std::fflush(stdout);
            _exit(1);
        }
        bool good = false;
        try {
            good = body();
        } catch (const std::exception& e) {
            fmt::print("FAIL: {}: {}\n", name, e.what());
        }
        std::fflush(stdout);
        _exit(good ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
    check_released("after " + name);
}

bool memlock_message_ok(const rdma::rdma_error& e, const std::string& name) {
    const std::string what = e.what();
    const bool good = e.code() == std::errc::not_enough_memory && what.find("LimitMEMLOCK=infinity") != std::string::npos &&
                      what.find("ulimit -l unlimited") != std::string::npos;
    fmt::print("{} {}: {}\n", good ? "ok:  " : "FAIL:", name, what);
    return good;
}

bool wait_port(const config& c, bool active, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        try {
            rdma::endpoint ep(options_for(c, 1, 4096));  // also needs the GID back
            if (active) return true;
        } catch (const rdma::rdma_error&) {
            if (!active) return true;
        }
        std::this_thread::sleep_for(100ms);
    }
    return false;
}

void error_cases(const config& c) {
    auto opts = [&] { return options_for(c, 1, 65536); };
    expect_error("unknown device", [&] { auto o = opts(); o.device = "nosuchdev0"; rdma::endpoint ep(o); },
                 "RDMA device 'nosuchdev0' not found", std::errc::invalid_argument);
    expect_error("bad port", [&] { auto o = opts(); o.port = 9; rdma::endpoint ep(o); }, "has no port 9");
    expect_error("bad GID index", [&] { auto o = opts(); o.gid_index = 200; rdma::endpoint ep(o); },
                 "has no GID at index 200");
    expect_error("no GID for the session address",
                 [&] { auto o = opts(); o.local_ip = "198.51.100.77"; rdma::endpoint ep(o); },
                 "RoCE v2 GID for 198.51.100.77", std::errc::address_not_available);
    expect_error<meshperf::core::spec_error>("message larger than the buffers", [&] {
        pair pr = make_pair(opts());
        rdma::point_params p;
        p.size = 65537;
        rdma::bandwidth_active a(*pr.a, 0, p);
    }, "outside 1..65536");
    expect_error("QP to RTR with a bad remote GID", [&] {
        rdma::endpoint a(opts()), b(opts());
        auto remote = b.local_info();
        remote.gid = rdma::gid_bytes{};  // "::": no route, no neighbour
        remote.mtu = 4096;
        a.connect(remote);
    }, "to RTR");
    expect_error("completion error (bad rkey)", [&] {
        pair pr = make_pair(opts());
        pr.a->slot(0).remote_rkey ^= 0x5a5a;
        rdma::point_params p;
        p.size = 4096;
        p.peer_timeout = 3000ms;
        rdma::bandwidth_active a(*pr.a, 0, p);
        std::atomic<bool> stop{false};
        a.run(stop, 64);
    }, "bandwidth write QP", std::nullopt, &rdma::wc_category(), IBV_WC_REM_ACCESS_ERR);
    expect_error("peer gone during latency (its QP destroyed)", [&] {
        pair pr = make_pair(opts());
        pr.b.reset();
        rdma::point_params p;
        p.op = rdma_op::send;
        p.peer_timeout = 3000ms;
        rdma::latency_active a(*pr.a, 0, p);
        std::atomic<bool> stop{false};
        std::vector<std::uint64_t> rtt(10);
        a.run(stop, rtt);
    }, "peer");
    expect_error("announced messages never arrive", [&] {
        pair pr = make_pair(opts());
        rdma::point_params p;
        p.op = rdma_op::send;
        p.peer_timeout = 300ms;
        rdma::bandwidth_passive b(*pr.b, 0, p);
        b.expect(100);
        std::atomic<bool> stop{true};
        b.run(stop);
    }, "did not arrive", std::errc::timed_out);

    memlock_case("RLIMIT_MEMLOCK below the buffers (checked before registering)", 64 << 10, [&] {
        try {
            auto o = opts();
            o.max_message_bytes = 1 << 20;
            rdma::endpoint ep(o);
            fmt::print("FAIL: memlock: endpoint created under a 64 KiB limit\n");
            return false;
        } catch (const rdma::rdma_error& e) {
            return memlock_message_ok(e, "RLIMIT_MEMLOCK below the buffers");
        }
    });
    memlock_case("RLIMIT_MEMLOCK exhausted (refused by the kernel)", 1 << 20, [&] {
        auto o = opts();
        o.max_message_bytes = 320 << 10;  // 640 KiB per endpoint: one fits, two do not
        rdma::endpoint first(o);
        try {
            rdma::endpoint second(o);
            fmt::print("FAIL: memlock: two endpoints pinned 1.25 MiB under a 1 MiB limit\n");
            return false;
        } catch (const rdma::rdma_error& e) {
            return memlock_message_ok(e, "RLIMIT_MEMLOCK exhausted");
        }
    });

    if (!c.netdev.empty()) {
        const std::string down = fmt::format("ip link set {} down", c.netdev);
        const std::string up = fmt::format("ip link set {} up", c.netdev);
        if (std::system(down.c_str()) != 0) {
            fail("port down: " + down + " failed");
            return;
        }
        if (!wait_port(c, false, 10s)) fail("port down: the port stayed usable with the netdev down");
        expect_error("port down", [&] { auto o = opts(); o.device = o.device.empty() ? "rxe0" : o.device; o.gid_index = 1; rdma::endpoint ep(o); },
                     "not ACTIVE", std::errc::network_down);
        if (std::system(up.c_str()) != 0) fail("port down: " + up + " failed");
        if (!wait_port(c, true, 20s)) fail("port down: the port did not come back");
    }
}

// ---- bench mode -----------------------------------------------------------------------------------

int bench(const config& c) {
    pair pr = make_pair(options_for(c, c.qps, c.size));
    rdma::point_params p;
    p.op = c.op;
    p.size = c.size;
    p.peer_timeout = 30s;
    if (c.latency) {
        const auto f = run_latency(pr, p, c.iterations);
        fmt::print("BENCH test=latency op={} size={} samples={} lat_us_min={:.3f} lat_us_p50={:.3f} lat_us_avg={:.3f} lat_us_max={:.3f}\n",
                   meshperf::core::to_string(c.op), c.size, f.samples, f.min_us, f.p50_us, f.avg_us, f.max_us);
        return sane(f.p50_us) && sane(f.avg_us) && f.samples > 0 ? 0 : 1;
    }
    const auto f = run_bandwidth(pr, p, c.seconds);
    fmt::print("BENCH test=bandwidth op={} size={} qps={} messages={} gbit_per_s={:.4f} mib_per_s={:.3f} mmsg_per_s={:.5f}\n",
               meshperf::core::to_string(c.op), c.size, c.qps, f.messages, f.gbit_per_s, f.mib_per_s, f.mmsg_per_s);
    return sane(f.gbit_per_s) ? 0 : 1;
}

std::vector<std::uint64_t> parse_sizes(const std::string& s) {
    std::vector<std::uint64_t> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) out.push_back(std::stoull(item));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    config c;
    bool bench_mode = false;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
                return argv[++i];
            };
            if (a == "bench") bench_mode = true;
            else if (a == "--device") c.device = next();
            else if (a == "--port") c.port = static_cast<std::uint8_t>(std::stoi(next()));
            else if (a == "--ip") c.ip = next();
            else if (a == "--netdev") c.netdev = next();
            else if (a == "--quick") c.quick = true;
            else if (a == "--seconds") c.seconds = std::stod(next());
            else if (a == "--iterations") c.iterations = std::stoull(next());
            else if (a == "--sizes") c.sizes = parse_sizes(next());
            else if (a == "--op") c.op = meshperf::core::parse_rdma_op(next());
            else if (a == "--test") c.latency = next() == "latency";
            else if (a == "--size") c.size = std::stoull(next());
            else if (a == "--qps") c.qps = static_cast<std::uint32_t>(std::stoul(next()));
            else throw std::invalid_argument("unknown argument " + a);
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "rdma_selftest: {}\n", e.what());
        return 2;
    }
    if (c.quick) c.sizes = {8, 65536};

    if (bench_mode) {
        try {
            return bench(c);
        } catch (const std::exception& e) {
            fmt::print("BENCH error: {}\n", e.what());
            return 1;
        }
    }

    check_offline();
    const nlohmann::json inv = rdma::list_devices();
    fmt::print("list_devices: {}\n", inv.dump(2));
    if (!inv.is_object() || !inv.contains("devices") || !inv["devices"].is_array()) {
        fail("list_devices() did not return {devices: [...]}");
        return 1;
    }
    if (inv["devices"].empty()) {
        if (!inv.contains("reason") || !inv["reason"].is_string() || inv["reason"].get<std::string>().empty())
            fail("list_devices(): empty without a reason");
        try {
            rdma::endpoint ep(rdma::endpoint_options{});
            fail("endpoint created without a device");
        } catch (const rdma::rdma_error& e) {
            rdma::is_no_device(e) && std::string(e.what()).find("no RDMA device found") != std::string::npos
                ? ok(std::string("no device: ") + e.what())
                : fail(std::string("no device: unexpected error: ") + e.what());
        }
        if (failures) {
            fmt::print("rdma_selftest: {} failure(s)\n", failures);
            return 1;
        }
        fmt::print("rdma_selftest: no RDMA device here; the no-device path is fine, the data path is skipped\n");
        return 77;
    }
    for (const auto& d : inv["devices"])
        for (const auto& p : d.value("ports", nlohmann::json::array()))
            if (!p.contains("error") && (p["gids"].empty() || !p.contains("active_mtu")))
                fail(fmt::format("list_devices(): port {} of {} lacks GIDs or MTU", p.value("port", 0), d.value("name", "")));

    baseline = rdma_resources();
    if (baseline)
        fmt::print("rdma resource show (baseline): pd {} cq {} qp {} mr {} ctx {}\n", (*baseline)["pd"], (*baseline)["cq"],
                   (*baseline)["qp"], (*baseline)["mr"], (*baseline)["ctx"]);
    else
        fmt::print("note: `rdma resource show` unavailable: resource checks skipped\n");

    try {
        sweep(c);
    } catch (const std::exception& e) {
        fail(std::string("sweep setup: ") + e.what());
    }
    check_released("after the sweep");
    error_cases(c);

    fmt::print("rdma_selftest: {}\n", failures ? fmt::format("{} failure(s)", failures) : std::string("all passed"));
    return failures ? 1 : 0;
}
