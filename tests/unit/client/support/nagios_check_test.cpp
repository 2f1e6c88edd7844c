#include "client/support/nagios_check.hpp"
#include "client/support/daemon_client.hpp"
#include "core/error.hpp"

#include "tests/unit/scratch_dir.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace nagios_check_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() { return unit_test::scratch_dir("nagios"); }

}  // namespace

TEST_CASE("nagios check: the textfile is replaced atomically and left readable") {
    const auto dir = scratch_dir();
    const auto path = (dir / "meshperf.prom").string();
    client::write_file_atomically(path, "first\n");
    client::write_file_atomically(path, "second\n");
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "second\n");
    struct stat st{};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0644);
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);  // no temporary left
    CHECK_THROWS_AS(client::write_file_atomically((dir / "missing" / "x.prom").string(), "x"), client::client_error);
    fs::remove_all(dir);
}

TEST_CASE("nagios check: --timeout is a positive number of seconds up to a day") {
    CHECK_NOTHROW(client::check_timeout(120));
    CHECK_NOTHROW(client::check_timeout(client::max_check_timeout_s));
    CHECK_THROWS_AS(client::check_timeout(0), core::spec_error);
    CHECK_THROWS_AS(client::check_timeout(client::max_check_timeout_s + 1), core::spec_error);
}

TEST_CASE("nagios check: --prom-file needs a folder that exists") {
    CHECK(client::prom_file_problem("").empty());
    CHECK(client::prom_file_problem("/nonexistent-meshperf-folder/x.prom").find("does not exist") != std::string::npos);
}

}  // namespace nagios_check_test
