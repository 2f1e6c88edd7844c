// client::open_files: the default --parallel of meshperf matrix is every job of a round,
// unless the open-file limit allows fewer, and then the note names the limit.
#include "client/support/open_files.hpp"

#include <doctest/doctest.h>

#include <string>
#include <sys/resource.h>

namespace open_files_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::client;

TEST_SUITE("open_files") {

TEST_CASE("measurements within a soft limit: reserved files aside, three a measurement, at least one") {
    CHECK(measurements_within(1024) == (1024 - 64) / 3);  // 320: the common default soft limit
    CHECK(measurements_within(4096) == 1344);
    CHECK(measurements_within(524288) == 174741);         // systemd's default hard limit
    CHECK(measurements_within(67) == 1);
    CHECK(measurements_within(0) == 1);
    CHECK(measurements_within(70) == 2);
}

TEST_CASE("default --parallel: every pair of the round unless the limit binds") {
    open_file_limit big{.soft = 524288, .hard = 524288, .raised = true, .known = true};
    auto d = default_parallel(1024, big);  // 2,048 hosts: 1,024 pairs a round, all at once
    CHECK(d.parallel == 1024);
    CHECK(d.wanted == 1024);
    CHECK_FALSE(d.limited);
    CHECK(default_parallel(8, big).parallel == 8);  // 16 hosts: 8 pairs, not 64 threads
    CHECK(default_parallel(0, big).parallel == 1);  // fewer than two hosts: one, never zero

    open_file_limit small{.soft = 1024, .hard = 1024, .raised = false, .known = true};
    d = default_parallel(1024, small);
    CHECK(d.parallel == 320);
    CHECK(d.limited);
    const auto note = parallel_limit_note(d, small, "round", "pairs");
    CAPTURE(note);
    CHECK(note.find("open-file limit (RLIMIT_NOFILE 1024, hard limit 1024) allows 320 measurements at once") != std::string::npos);
    CHECK(note.find("a round has 1024 pairs: each round runs in 4 waves") != std::string::npos);
    CHECK(note.find("ulimit -Hn") != std::string::npos);
    small.raised = true;
    CHECK(parallel_limit_note(d, small, "wave", "links").find("(RLIMIT_NOFILE 1024, raised, hard limit 1024)") != std::string::npos);

    // getrlimit failed: the usual soft limit of 1024 is assumed.
    CHECK(default_parallel(1024, open_file_limit{}).parallel == 320);
}

TEST_CASE("raise_open_file_limit: the soft limit ends at the hard one (or stays when that is infinite)") {
    rlimit before{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
    rlimit lowered = before;
    if (before.rlim_max != RLIM_INFINITY && before.rlim_max > 256) {
        lowered.rlim_cur = 256;
        REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
    }
    const auto l = raise_open_file_limit();
    CHECK(l.known);
    rlimit now{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &now) == 0);
    if (before.rlim_max != RLIM_INFINITY) {
        CHECK(now.rlim_cur == before.rlim_max);
        CHECK(l.soft == before.rlim_max);
        CHECK(l.hard == before.rlim_max);
        if (before.rlim_max > 256) CHECK(l.raised);
    }
    ::setrlimit(RLIMIT_NOFILE, &before);  // leave the test process as it was
}

}  // TEST_SUITE

}  // namespace open_files_test
