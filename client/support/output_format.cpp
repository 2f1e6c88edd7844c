#include "client/support/output_format.hpp"

#include "client/support/daemon_client.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <stdexcept>

namespace meshperf::client {

std::string_view to_string(output_format f) {
    switch (f) {
        case output_format::table: return "table";
        case output_format::json: return "json";
        case output_format::csv: return "csv";
        case output_format::nagios: return "nagios";
    }
    return "?";
}

CLI::Option* add_format_option(CLI::App& cmd, output_format& format, std::initializer_list<output_format> offered) {
    std::map<std::string, output_format> names;
    std::vector<std::string> members;
    std::string help;
    std::size_t i = 0;
    for (auto f : offered) {
        names.emplace(std::string(to_string(f)), f);
        members.emplace_back(to_string(f));
        if (i > 0) help += i + 1 == offered.size() ? " or " : ", ";
        help += to_string(f);
        ++i;
    }
    format = *offered.begin();
    // IsMember turns the given name into the member it matched (case-insensitively) before
    // the callback runs, so the callback always finds it.
    return cmd
        .add_option_function<std::string>(
            "--format", [&format, names](const std::string& name) { format = names.at(name); }, help)
        ->transform(CLI::IsMember(members, CLI::ignore_case))
        ->default_str(std::string(to_string(format)));
}

std::string render(output_format format, const renderers& r) {
    const std::function<std::string()>* chosen = nullptr;
    switch (format) {
        case output_format::table: chosen = &r.table; break;
        case output_format::json: chosen = &r.json; break;
        case output_format::csv: chosen = &r.csv; break;
        case output_format::nagios: chosen = &r.nagios; break;
    }
    if (!chosen || !*chosen) throw std::logic_error("no renderer for --format " + std::string(to_string(format)));
    return (*chosen)();
}

void write_output(const std::string& path, const std::string& text) {
    write_output_streamed(path, [&](const text_sink& out) { out(text); });
}

void write_output_streamed(const std::string& path, const std::function<void(const text_sink&)>& produce) {
    bool ok = true;
    auto to = [&ok](std::FILE* f) {
        return [f, &ok](std::string_view text) { ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && ok; };
    };
    if (path.empty() || path == "-") {
        produce(to(stdout));
        std::fflush(stdout);
        return;
    }
    const auto tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) throw client_error(exit_usage, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    try {
        produce(to(f));
    } catch (...) {
        std::fclose(f);
        std::remove(tmp.c_str());
        throw;
    }
    if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw client_error(exit_run_failed, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
}

}  // namespace meshperf::client
