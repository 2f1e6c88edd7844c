#include "client/support/hosts_file.hpp"

#include "client/support/daemon_client.hpp"
#include "transport/small_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace meshperf::client {

std::vector<std::string> parse_host_file_text(const std::string& text) {
    std::vector<std::string> hosts;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::istringstream words(line);
        std::string word;
        while (words >> word) hosts.push_back(word);
    }
    return hosts;
}

std::vector<std::string> read_host_words(const std::string& spec) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(spec, ec)) {
        try {
            return parse_host_file_text(transport::read_small_file(spec, transport::max_list_file_bytes, "host file"));
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
    }
    if (spec.find(',') == std::string::npos)
        throw client_error(exit_usage, fmt::format("host file {} does not exist: give a file with one HOST[:PORT] per line, or "
                                                   "at least two hosts as a comma list (node1,node2:7480)",
                                                   spec));
    std::vector<std::string> hosts;
    std::istringstream in(spec);
    std::string item;
    while (std::getline(in, item, ',')) {
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) hosts.push_back(item);
    }
    return hosts;
}

}  // namespace meshperf::client
