#include "daemon/token_file.hpp"

#include "core/error.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <sys/stat.h>

namespace meshperf::daemon {

std::string read_token_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw core::spec_error(fmt::format("token file {}: {}", path, std::strerror(errno)));
    if (st.st_mode & (S_IRWXG | S_IRWXO))
        throw core::spec_error(fmt::format("token file {} is accessible by others (mode {:04o}): run chmod 600 {}", path,
                                           st.st_mode & 07777, path));
    std::ifstream in(path);
    std::string token;
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
    if (token.empty()) throw core::spec_error(fmt::format("token file {} is empty: put the cluster token on its first line", path));
    return token;
}

}  // namespace meshperf::daemon
