#pragma once
/// A scratch folder for one unit-test file: $TMPDIR/meshperf-unit-<name>-<pid>, created on
/// first use. Each test file passes its own name, so files built in one unity batch never
/// share a folder.
#include <filesystem>
#include <string>
#include <unistd.h>

namespace meshperf::unit_test {

inline std::filesystem::path scratch_dir(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() /
               std::filesystem::path("meshperf-unit-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace meshperf::unit_test
