#include "core/error.hpp"
#include "transport/small_file.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace small_file_test {  // one per test file: the unit tests are built in batches (unity build)

using meshperf::transport::read_small_file;

namespace {

std::string error_of(const std::filesystem::path& p, std::size_t max) {
    try {
        read_small_file(p, max, "--expect");
    } catch (const meshperf::core::spec_error& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("small files: a regular file is read whole; anything else is refused before a byte is read") {
    const auto dir = std::filesystem::temp_directory_path() / ("meshperf-small-file-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "node.toml";
    std::ofstream(file) << "gpus = 8\n";
    CHECK(read_small_file(file, 1024, "--expect") == "gpus = 8\n");
    CHECK(contains(error_of(file, 4), "the file is 9 bytes, more than the 4 B such a file may have"));
    CHECK(contains(error_of(dir / "none.toml", 1024), "--expect " + (dir / "none.toml").string() + ": no such file"));
    CHECK(contains(error_of(dir, 1024), "is a directory, not a regular file"));
    const auto fifo = dir / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(contains(error_of(fifo, 1024), "is a FIFO, not a regular file"));  // returns at once: no writer awaited
    CHECK(contains(error_of("/dev/zero", 1024), "is a character device, not a regular file"));
    const auto empty = dir / "empty";
    std::ofstream(empty).flush();
    CHECK(read_small_file(empty, 1024, "--expect").empty());
    std::filesystem::remove_all(dir);
}

}  // namespace small_file_test
