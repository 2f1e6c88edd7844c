#include "client/commands/check.hpp"

#include "client/collective/check.hpp"
#include "client/collective/run.hpp"
#include "client/commands/commands.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/result_files.hpp"
#include "client/support/short_runs.hpp"
#include "core/check_figures.hpp"
#include "core/error.hpp"
#include "core/prometheus.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <unistd.h>

namespace meshperf::client {

using nlohmann::json;

std::string render_check(const core::check_result& r, output_format format) {
    return render(format, {.json = [&] { return core::to_json(r).dump(2) + "\n"; },
                           .nagios = [&] { return core::nagios_output(r) + "\n"; }});
}

void write_file_atomically(const std::string& path, const std::string& text) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    // Not ending in .prom, so the collector ignores it while it is being written.
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw client_error(exit_run_failed, fmt::format("cannot create a temporary file in {}: {}", dir.string(), std::strerror(errno)));
    auto fail = [&](const char* step) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw client_error(exit_run_failed, fmt::format("cannot write {}: {} failed: {}", path, step, std::strerror(err)));
    };
    std::size_t done = 0;
    while (done < text.size()) {
        const auto n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("write");
        done += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0) fail("chmod");
    if (::fsync(fd) != 0) fail("fsync");
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw client_error(exit_run_failed, fmt::format("cannot write {}: close failed: {}", path, std::strerror(err)));
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw client_error(exit_run_failed, fmt::format("cannot rename {} to {}: {}", tmpl, path, std::strerror(err)));
    }
}

int check_parse_failure(CLI::App& app, const CLI::ParseError& e, const std::string& hint) {
    CLI::App* check = nullptr;
    for (auto* sub : app.get_subcommands({}))
        if (sub->get_name() == "check") check = sub;
    if (!check || !check->parsed()) return -1;
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    if (hint.empty()) app.exit(e);
    else std::fprintf(stderr, "meshperf: %s\n", hint.c_str());
    std::string what = hint.empty() ? e.what() : hint;
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::replace(what.begin(), what.end(), '|', '/');
    std::printf("MESHPERF UNKNOWN - bad options: %s\n", what.c_str());
    std::fflush(stdout);
    return core::exit_code(core::check_state::unknown);
}

namespace {

/// The longest --timeout: a day. Longer (or inf) would overflow the watchdog's clock.
constexpr double max_check_timeout_s = 86400;

/// Throws core::spec_error unless 0 < --timeout <= max_check_timeout_s.
void check_timeout(double timeout_s) {
    if (!(timeout_s > 0 && timeout_s <= max_check_timeout_s))
        throw core::spec_error(
            fmt::format("--timeout {} is out of range: give 0 < seconds <= {}", timeout_s, max_check_timeout_s));
}

struct check_options {
    std::string peer;
    std::string initiator = "localhost:7470";
    short_test_options test;
    double min_gbit = 0, max_lat_us = 0;
    std::string baseline;
    double warn = 0.9, crit = 0.75;
    std::string prom_file;
    output_format format = output_format::nagios;
    double timeout_s = 120;
    collective_options collective;  ///< --collective OP --hosts ... (check_collective.hpp)
    double min_busbw = 0;
};

/// Why --prom-file PATH cannot be written ("" when it can, or is not given): its folder
/// must exist and be writable, checked before anything is measured.
std::string prom_file_problem(const std::string& path) {
    if (path.empty()) return {};
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return fmt::format("--prom-file {}: the folder {} does not exist (create it, or give a path in node_exporter's "
                           "textfile folder)",
                           path, dir.string());
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        return fmt::format("--prom-file {}: cannot write in {}: {}", path, dir.string(), std::strerror(errno));
    return {};
}

/// Writes a node_exporter textfile made by `text(now)` to `path` (nothing when empty).
/// Returns false after saying on stderr why it failed: the check then exits UNKNOWN (3),
/// since the monitoring that reads the file would see a stale verdict.
template <class MakeText>
bool write_textfile(const std::string& path, MakeText text) {
    if (path.empty()) return true;
    try {
        const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        write_file_atomically(path, text(now));
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "meshperf: --prom-file: %s\n", e.what());
        return false;
    }
}

/// Prints the verdict, writes the textfile, returns the exit code. Shared by the normal
/// path and the timeout watchdog, so it runs at most once.
class check_reporter {
public:
    check_reporter(output_format format, std::string prom_file) : format_(format), prom_file_(std::move(prom_file)) {}

    int report(const core::check_result& r) {
        std::lock_guard lock(m_);
        if (done_) return core::exit_code(r.state);
        done_ = true;
        const auto text = render_check(r, format_);
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        // A textfile that could not be written must not pass as OK; a WARNING or CRITICAL
        // verdict stands (the bad link matters more than the broken export).
        if (!write_textfile(prom_file_, [&](double now) { return core::check_textfile(r, now); }) &&
            r.state == core::check_state::ok)
            return core::exit_code(core::check_state::unknown);
        return core::exit_code(r.state);
    }

private:
    std::mutex m_;
    bool done_ = false;
    output_format format_;
    std::string prom_file_;
};

/// Runs `work` and returns its exit code; when it has not returned within `timeout_s`,
/// `on_timeout` reports UNKNOWN from another thread and the process exits with its code. A
/// health check must answer: a hung daemon or peer is UNKNOWN after --timeout.
int run_with_deadline(double timeout_s, const std::function<int()>& work, const std::function<int()>& on_timeout) {
    std::mutex m;
    std::condition_variable cv;
    bool finished = false;
    std::thread watchdog([&] {
        std::unique_lock lock(m);
        const auto limit = std::chrono::duration<double>(timeout_s);
        if (cv.wait_for(lock, limit, [&] { return finished; })) return;
        std::_Exit(on_timeout());
    });
    const int rc = work();
    {
        std::lock_guard lock(m);
        finished = true;
    }
    cv.notify_all();
    watchdog.join();
    return rc;
}

/// The limits of check --collective: --min-busbw, and the busbw of --baseline FILE's point of
/// the same op, algorithm, ranks and size. Throws client_error (usage) or core::spec_error.
collective_limits collective_check_limits(const check_options& o, const CLI::App& cmd, const core::collective_spec& spec) {
    collective_limits limits;
    if (cmd.count("--min-busbw")) {
        if (!(o.min_busbw > 0 && std::isfinite(o.min_busbw)))
            throw client_error(exit_usage, fmt::format("--min-busbw {}: give the least busbw in GB/s, a number > 0", o.min_busbw));
        limits.min_busbw = o.min_busbw;
    }
    if (!o.baseline.empty()) {
        if (o.baseline == "stored")
            throw client_error(exit_usage, "--collective: --baseline stored is for a path; give a collective result file "
                                           "(meshperf collective --format json -o FILE)");
        core::validate_fractions(o.warn, o.crit);
        std::tie(limits.baseline_busbw, limits.baseline_source) = collective_baseline(read_json_file(o.baseline), o.baseline, spec);
        limits.warn = o.warn;
        limits.crit = o.crit;
    }
    if (!limits.min_busbw && !limits.baseline_busbw)
        throw client_error(exit_usage, "--collective needs --min-busbw X (the least busbw in GB/s) and/or --baseline FILE "
                                       "(a collective result)");
    return limits;
}

/// check --collective: one short collective, judged (client/collective/check.hpp).
int run_collective_check(const check_options& o, const CLI::App& cmd, const common_options& common) {
    std::mutex m;
    bool reported = false;
    const auto report = [&](const collective_verdict& v) {
        std::lock_guard lock(m);
        bool written = true;
        if (!reported) {
            const auto text = render_collective_check(v, o.format);
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
            written = write_textfile(o.prom_file, [&](double now) { return collective_check_textfile(v, now); });
        }
        reported = true;
        return core::exit_code(written ? v.state : core::check_state::unknown);
    };
    // Of the options build_collective_spec asks about, check has --algo only.
    const auto given = [&](std::string_view name) { return name == "--algo" && cmd.count("--algo") > 0; };
    collective_check_labels labels{o.collective.ops, "", o.collective.transport, o.collective.memory};  // until the spec is built
    core::collective_spec spec;
    collective_limits limits;
    credentials creds;
    try {
        if (!o.peer.empty()) throw client_error(exit_usage, "--collective takes --hosts, not a peer");
        if (!cmd.count("--hosts")) throw client_error(exit_usage, "--collective needs --hosts FILE or a comma list of the daemons");
        check_timeout(o.timeout_s);
        if (const auto bad = prom_file_problem(o.prom_file); !bad.empty()) throw client_error(exit_usage, bad);
        spec = collective_check_spec(o.collective, given);
        labels = collective_check_labels_of(spec);
        limits = collective_check_limits(o, cmd, spec);
        creds = client_credentials(common.token_file, common.tls);
    } catch (const std::exception& e) {  // client_error, and core::spec_error of check_timeout and the baseline
        return report(unknown_collective(labels, fmt::format("bad options: {}", e.what())));
    }
    return run_with_deadline(
        o.timeout_s,
        [&] {
            try {
                const auto out = run_collective(spec, creds, {});
                return report(judge_collective(out.run, limits));
            } catch (const std::exception& e) {
                return report(unknown_collective(labels, e.what()));
            }
        },
        [&] {
            return report(unknown_collective(labels, fmt::format("no verdict within --timeout {} s (a daemon hung?)", o.timeout_s)));
        });
}

/// Baseline figures from --baseline FILE or --baseline stored.
std::vector<core::check_figure> load_baseline(const check_options& o, const std::string& peer, const daemon_client& initiator) {
    json doc;
    if (o.baseline == "stored") {
        doc = initiator.get(fmt::format("/v1/baselines?peer={}&transport={}", peer, o.test.transport));
    } else {
        std::ifstream in(o.baseline);
        if (!in) throw core::spec_error(fmt::format("--baseline {}: cannot read the file (or say --baseline stored)", o.baseline));
        doc = json::parse(in, nullptr, false);
        if (doc.is_discarded()) throw core::spec_error(fmt::format("--baseline {}: not valid JSON", o.baseline));
    }
    auto figures = core::baseline_figures_from_json(doc, peer, o.test.transport);
    if (figures.empty()) {
        if (o.baseline == "stored")
            throw core::spec_error(fmt::format("no baseline stored on {} for {} over {}: save one with "
                                               "'meshperf baseline save {} --initiator {}'",
                                               initiator.address().to_string(), peer, o.test.transport, peer,
                                               initiator.address().to_string()));
        throw core::spec_error(fmt::format("--baseline {} holds no figure for {} over {}", o.baseline, peer, o.test.transport));
    }
    return figures;
}

core::check_result run_check(const check_options& o, bool min_given, bool lat_given, const core::check_target& target,
                             const credentials& creds) {
    const daemon_client initiator(o.initiator, creds);
    core::check_limits limits;
    if (min_given) limits.min_gbit = o.min_gbit;
    if (lat_given) limits.max_lat_us = o.max_lat_us;
    limits.warn = o.warn;
    limits.crit = o.crit;
    if (!o.baseline.empty()) limits.baseline = load_baseline(o, target.peer, initiator);
    core::validate(limits);

    // Measure what is judged: the tests with a limit, at the baseline's sizes when there is one.
    short_test_options test = o.test;
    std::vector<std::uint64_t> lat_sizes, bw_sizes;
    for (const auto& f : limits.baseline) (f.kind == core::figure_kind::latency ? lat_sizes : bw_sizes).push_back(f.size_bytes);
    if (test.tests.empty()) {
        std::vector<std::string> t;
        if (limits.max_lat_us || !lat_sizes.empty()) t.push_back("latency");
        if (limits.min_gbit || !bw_sizes.empty()) t.push_back("bandwidth");
        for (const auto& s : t) test.tests += (test.tests.empty() ? "" : ",") + s;
    }
    const auto specs = short_test_specs(target.peer, test, lat_sizes, bw_sizes);

    std::vector<core::check_figure> measured;
    for (const auto& spec : specs) {
        auto out = run_to_completion(initiator, spec);
        if (!out.completed) {
            const auto why = out.initiator_unreachable ? out.error : fmt::format("the measurement failed: {}", out.error);
            return core::unknown_result(target, why);
        }
        for (const auto& f : core::figures_of(out.run)) measured.push_back(f);
    }
    return core::evaluate_check(target, measured, limits);
}

}  // namespace

command_runner add_check_command(CLI::App& app, const common_options& common) {
    auto o = std::make_shared<check_options>();
    auto* cmd = app.add_subcommand("check", "health check of the path to a peer: one Nagios line, exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN");
    cmd->add_option("peer", o->peer, "peer daemon HOST[:PORT] (not with --collective)");
    cmd->add_option("--initiator", o->initiator, "daemon that runs the measurement, HOST[:PORT]")->capture_default_str();
    cmd->add_option("--transport", o->test.transport, "tcp or rdma")->capture_default_str();
    cmd->add_option("--test", o->test.tests, "comma list of latency, bandwidth (default: the tests with a limit)");
    cmd->add_option("--sizes", o->test.sizes, "sizes for every test (default: latency 8 B, bandwidth 1 MiB, or the baseline's sizes)");
    cmd->add_option("--streams", o->test.streams, "parallel streams per direction")->capture_default_str();
    cmd->add_option("--max-time", o->test.max_time, "adaptive time cap per point, seconds")->capture_default_str();
    cmd->add_option("--warmup", o->test.warmup, "warm-up seconds before every point")->capture_default_str();
    cmd->add_option("--min-gbit", o->min_gbit, "CRITICAL when bandwidth is below this many Gbit/s");
    cmd->add_option("--max-lat-us", o->max_lat_us, "CRITICAL when one-way latency is above this many microseconds");
    cmd->add_option("--baseline", o->baseline, "FILE (baseline or run JSON) or 'stored' (kept by the initiator: meshperf baseline save); "
                                                "with --collective, a collective result (meshperf collective --format json -o FILE)");
    cmd->add_option("--warn", o->warn, "WARNING below this fraction of the baseline performance")->capture_default_str();
    cmd->add_option("--crit", o->crit, "CRITICAL below this fraction of the baseline performance")->capture_default_str();
    cmd->add_option("--prom-file", o->prom_file, "also write a node_exporter textfile here (atomically: temporary file, then rename)");
    add_format_option(*cmd, o->format, {output_format::nagios, output_format::json});
    cmd->add_option("--timeout", o->timeout_s, "UNKNOWN when the check takes longer than this many seconds")->capture_default_str();
    auto& c = o->collective;
    c.sizes = default_collective_check_size;
    cmd->add_option("--collective", c.ops, "check one collective instead of a path: allreduce, allgather, reduce-scatter, "
                                           "alltoall, broadcast or incast (with --hosts, and --min-busbw and/or --baseline)");
    cmd->add_option("--min-busbw", o->min_busbw, "--collective: CRITICAL when busbw is below this many GB/s (nccl-tests' unit)");
    cmd->add_option("--hosts", c.hosts, "--collective: the daemons, a file (one HOST[:PORT] per line) or a comma list");
    cmd->add_option("--size", c.sizes, "--collective: the size S measured")->capture_default_str();
    cmd->add_option("--algo", c.algo, "--collective: ring, tree or direct (default: the op's own)");
    cmd->add_option("--memory", c.memory, "--collective: host or cuda:N")->capture_default_str();
    return [o, cmd, &common]() -> int {
        if (cmd->count("--collective")) {
            o->collective.transport = o->test.transport;
            return run_collective_check(*o, *cmd, common);
        }
        core::check_target target{o->peer, o->test.transport, cmd->count("--initiator") ? o->initiator : ""};
        auto reporter = std::make_shared<check_reporter>(o->format, o->prom_file);
        if (o->peer.empty())
            return reporter->report(core::unknown_result(target, "bad options: give the peer HOST[:PORT], or --collective OP "
                                                                 "--hosts ... --min-busbw X"));
        try {
            target.peer = transport::parse_endpoint(o->peer).to_string();
            if (!target.initiator.empty()) target.initiator = transport::parse_endpoint(o->initiator).to_string();
            check_timeout(o->timeout_s);
        } catch (const core::spec_error& e) {
            return reporter->report(core::unknown_result(target, fmt::format("bad options: {}", e.what())));
        }
        if (const auto bad = prom_file_problem(o->prom_file); !bad.empty()) {  // said before measuring, not after
            std::fprintf(stderr, "meshperf: %s\n", bad.c_str());
            return check_reporter(o->format, "").report(core::unknown_result(target, "bad options: " + bad));
        }
        // stderr: a monitoring system reads only the verdict on stdout.
        if (const auto note = size_order_note(o->test); !note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
        if (!cmd->count("--min-gbit") && !cmd->count("--max-lat-us") && o->baseline.empty())
            return reporter->report(core::unknown_result(target, "bad options: give --min-gbit and/or --max-lat-us, or --baseline FILE|stored"));

        return run_with_deadline(
            o->timeout_s,
            [&] {
                core::check_result result;
                try {
                    result = run_check(*o, cmd->count("--min-gbit") > 0, cmd->count("--max-lat-us") > 0, target,
                                       client_credentials(common.token_file, common.tls));
                } catch (const core::spec_error& e) {
                    result = core::unknown_result(target, fmt::format("bad options: {}", e.what()));
                } catch (const std::exception& e) {
                    result = core::unknown_result(target, e.what());
                }
                return reporter->report(result);
            },
            [&] {
                return reporter->report(
                    core::unknown_result(target, fmt::format("no verdict within --timeout {} s (daemon or peer hung?)", o->timeout_s)));
            });
    };
}

}  // namespace meshperf::client
