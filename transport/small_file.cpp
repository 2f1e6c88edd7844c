#include "transport/small_file.hpp"

#include "core/error.hpp"
#include "core/sizes.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace meshperf::transport {
namespace {

/// Closes a descriptor on every path out.
struct fd_guard {
    int fd;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
};

std::string kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "not a regular file";
}

}  // namespace

std::string read_small_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what) {
    const auto name = path.string();
    const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        if (e == ENOENT) throw core::spec_error(fmt::format("{} {}: no such file", what, name));
        throw core::spec_error(fmt::format("{} {}: cannot read the file: {}", what, name, std::strerror(e)));
    }
    const fd_guard guard{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw core::spec_error(fmt::format("{} {}: cannot read the file: {}", what, name, std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
        throw core::spec_error(fmt::format("{} {}: is {}, not a regular file: name the file itself", what, name, kind_of(st.st_mode)));
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
        throw core::spec_error(fmt::format("{} {}: the file is {} bytes, more than the {} such a file may have", what, name,
                                           st.st_size, core::format_size(max_bytes)));
    std::string text;
    text.resize(static_cast<std::size_t>(st.st_size) + 1);
    std::size_t got = 0;
    while (got < text.size()) {
        const auto n = ::read(fd, text.data() + got, text.size() - got);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            throw core::spec_error(fmt::format("{} {}: read error: {}", what, name, std::strerror(errno)));
        }
        got += static_cast<std::size_t>(n);
        if (got > max_bytes)
            throw core::spec_error(fmt::format("{} {}: the file grew past the {} such a file may have while it was read", what,
                                               name, core::format_size(max_bytes)));
        if (got == text.size()) text.resize(std::min(text.size() * 2, max_bytes + 1));  // it grew: keep reading up to the cap
    }
    text.resize(got);
    return text;
}

}  // namespace meshperf::transport
