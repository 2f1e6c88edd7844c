#include "client/support/cli_suggest.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace meshperf::client {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment distance; words here are short, so a full table is fine.
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

std::string nearest_name(std::string_view word, std::span<const std::string> candidates) {
    if (word.empty()) return {};
    const std::size_t allowed = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
    std::size_t best = std::numeric_limits<std::size_t>::max();
    std::string best_name;
    for (const auto& c : candidates) {
        const auto d = edit_distance(word, c);
        if (d < best) {
            best = d;
            best_name = c;
        }
    }
    if (best <= allowed) return best_name;
    // An abbreviation that names one candidate: "--dur" for "--duration".
    std::string only;
    for (const auto& c : candidates)
        if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
            if (!only.empty()) return {};
            only = c;
        }
    return only;
}

namespace {

const CLI::App* find_subcommand(const CLI::App& app, std::string_view name) {
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        if (sub->get_name() == name) return sub;
    return nullptr;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    return names;
}

bool has_positionals(const CLI::App& app) {
    return !app.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

/// The option `name` ("--x" or "-x") of the command chain, innermost first, or nullptr.
const CLI::Option* find_option(const std::vector<const CLI::App*>& chain, const std::string& name) {
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        if (const auto* o = (*it)->get_option_no_throw(name)) return o;
    return nullptr;
}

std::string command_path(const std::vector<const CLI::App*>& chain) {
    std::string s = "meshperf";
    for (std::size_t i = 1; i < chain.size(); ++i) s += " " + chain[i]->get_name();
    return s;
}

}  // namespace

std::string explain_unknown_name(const CLI::App& app, const std::vector<std::string>& args) {
    std::vector<const CLI::App*> chain{&app};
    bool options_ended = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (options_ended) continue;
        if (a == "--") {
            options_ended = true;
            continue;
        }
        if (a.size() > 2 && a.rfind("--", 0) == 0) {
            const std::string name = a.substr(0, a.find('='));
            const auto* opt = find_option(chain, name);
            if (!opt) {
                std::vector<std::string> longs;
                for (const auto* c : chain)
                    for (const auto* o : c->get_options())
                        for (const auto& l : o->get_lnames()) longs.push_back("--" + l);
                const auto near = nearest_name(name, longs);
                return near.empty() ? fmt::format("unknown option '{}' for '{}' (see {} --help)", name, command_path(chain),
                                                  command_path(chain))
                                    : fmt::format("unknown option '{}' for '{}': did you mean '{}'?", name, command_path(chain),
                                                  near);
            }
            if (a.find('=') == std::string::npos && opt->get_type_size_max() > 0 && opt->get_expected_min() > 0) ++i;  // its value
            continue;
        }
        if (a.size() > 1 && a[0] == '-') {
            // A short option ("-o FILE", "-q"): skip its value when it takes one.
            const auto* opt = find_option(chain, a.substr(0, 2));
            if (opt && a.size() == 2 && opt->get_type_size_max() > 0 && opt->get_expected_min() > 0) ++i;
            continue;
        }
        // A word: a (sub)command where the current command has subcommands and no positionals.
        const CLI::App& here = *chain.back();
        const auto names = subcommand_names(here);
        if (names.empty()) continue;
        if (const auto* sub = find_subcommand(here, a)) {
            chain.push_back(sub);
            continue;
        }
        if (has_positionals(here)) continue;
        const auto near = nearest_name(a, names);
        const std::string where = chain.size() == 1 ? "command" : fmt::format("'{}' command", command_path(chain));
        if (!near.empty()) return fmt::format("unknown {} '{}': did you mean '{}'?", where, a, near);
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        return fmt::format("unknown {} '{}': the commands are {}", where, a, list);
    }
    return {};
}

}  // namespace meshperf::client
