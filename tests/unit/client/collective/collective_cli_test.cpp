// client/support/hosts_file and client/collective/spec_options: `meshperf collective`'s --hosts
// (files with comments and blank lines, comma lists) and the spec built from its options,
// with every bad input refused as a usage error (exit 2) in core's words before anything
// is sent.
#include "client/collective/spec_options.hpp"
#include "client/support/daemon_client.hpp"
#include "client/support/hosts_file.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

namespace collective_cli_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
namespace fs = std::filesystem;

namespace {

/// The options as given: `given` names the options that were on the command line.
struct typed {
    client::collective_options o;
    std::set<std::string, std::less<>> given;
    client::built_collective_spec build() const {
        return client::build_collective_spec(o, [this](std::string_view n) { return given.contains(n); });
    }
};

/// Options with --hosts, --op and --sizes as given.
typed options(std::string hosts, std::string ops = "allreduce", std::string sizes = "1K..64M") {
    typed t;
    t.o.hosts = std::move(hosts);
    t.o.ops = std::move(ops);
    t.o.sizes = std::move(sizes);
    return t;
}

typed four_hosts() { return options("node0,node1,node2:7480,node3"); }

/// The message of the usage error that building `t` throws ("" when it throws none, or
/// throws something else).
std::string usage_error(const typed& t) {
    try {
        t.build();
    } catch (const client::client_error& e) {
        return e.code() == client::exit_usage ? e.what() : std::string("exit ") + std::to_string(e.code());
    }
    return {};
}

}  // namespace

TEST_CASE("hosts file: words up to '#', blank lines and comments skipped, several on a line") {
    const auto hosts = client::parse_host_file_text("# rack 1\nnode0\n\n   \nnode1:7480   # spare port\n node2 node3\n#node9\n");
    CHECK(hosts == std::vector<std::string>{"node0", "node1:7480", "node2", "node3"});
    CHECK(client::parse_host_file_text("# only comments\n\n").empty());
}

TEST_CASE("hosts file: read from a file, or a comma list; a missing file is a usage error naming it") {
    const auto dir = fs::temp_directory_path() / ("meshperf-collective-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto file = (dir / "nodes.txt").string();
    std::ofstream(file) << "node0\n# node1 is down\nnode2:7471\n";
    CHECK(client::read_host_words(file) == std::vector<std::string>{"node0", "node2:7471"});
    CHECK(client::read_host_words(" a, b ,,c") == std::vector<std::string>{"a", "b", "c"});
    try {
        client::read_host_words((dir / "absent.txt").string());
        FAIL("a missing host file was read");
    } catch (const client::client_error& e) {
        CHECK(e.code() == client::exit_usage);
        CHECK(std::string(e.what()).find("absent.txt does not exist") != std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("collective spec: built from the options, hosts normalized, defaults of nccl-tests") {
    auto t = options("node0,node1,node2:7480,node3", "allreduce,all-gather", "64K,1M");
    t.o.dtype = "bfloat16";
    const auto built = t.build();
    const auto& s = built.spec;
    CHECK(s.hosts == std::vector<std::string>{"node0:7470", "node1:7470", "node2:7480", "node3:7470"});
    CHECK(s.ops == std::vector{core::collective_op::allreduce, core::collective_op::allgather});
    CHECK(s.sizes == std::vector<std::uint64_t>{65536, 1048576});
    CHECK(s.element == core::dtype::bf16);
    CHECK(s.iterations == core::default_collective_iterations);
    CHECK(s.warmup_iterations == core::default_collective_warmup);
    CHECK_FALSE(s.duration_s);
    CHECK_FALSE(s.algo);
    CHECK(core::coordinator_of(s) == "node0:7470");
    CHECK(built.notes.empty());
}

TEST_CASE("collective spec: --duration alone makes a timed run; with --iterations it is refused") {
    auto t = four_hosts();
    t.o.duration = 0.5;
    t.given = {"--duration"};
    const auto s = t.build().spec;
    CHECK_FALSE(s.iterations);
    REQUIRE(s.duration_s);
    CHECK(*s.duration_s == doctest::Approx(0.5));
    t.given = {"--duration", "--iterations"};
    CHECK(usage_error(t) == "iterations and duration both fix a size's length: give one of them");
}

TEST_CASE("collective spec: every bad input is a usage error with core's sentence") {
    auto one = four_hosts();
    one.o.hosts = "node0,";
    CHECK(usage_error(one).find("a collective needs at least 2 hosts and only node0 is given") == 0);

    auto twice = four_hosts();
    twice.o.hosts = "node0,node1,node0:7470";
    CHECK(usage_error(twice).find("hosts: node0:7470 is given twice (ranks 0 and 2") == 0);

    auto algo = four_hosts();
    algo.o.ops = "alltoall";
    algo.o.algo = "tree";
    algo.given = {"--algo"};
    CHECK(usage_error(algo).find("--algo tree cannot run alltoall") != std::string::npos);

    auto dtype = four_hosts();
    dtype.o.dtype = "int8";
    CHECK(usage_error(dtype).find("int8") != std::string::npos);

    auto op = four_hosts();
    op.o.ops = "allreduce,,broadcast";
    CHECK(usage_error(op).find("has an empty item") != std::string::npos);

    auto memory = four_hosts();
    memory.o.memory = "gpu0";
    CHECK_FALSE(usage_error(memory).empty());

    auto model = four_hosts();
    model.o.model = "matrix.json";
    model.given = {"--model"};
    CHECK(usage_error(model) == "--model matrix.json is only read for --predict: add --predict, or leave out --model");
}

TEST_CASE("collective spec: a listed size an op cannot cut is refused with the nearest valid sizes") {
    const auto e = usage_error(options("a,b,c", "allgather", "1000"));  // 3 ranks: multiples of 3 × 4 B
    CHECK(e.find("size 1000 B cannot be cut into 3 equal blocks of whole fp32 elements") == 0);
    CHECK(e.find("use 996 or 1008 B, the nearest sizes below and above valid") != std::string::npos);
}

TEST_CASE("collective spec: a range's sizes are rounded down to the ops' step, and a note says so") {
    const auto built = options("a,b,c", "allgather", "1K..4K").build();
    CHECK(built.spec.sizes == std::vector<std::uint64_t>{1020, 2040, 4092});
    REQUIRE(built.notes.size() == 1);
    CHECK(built.notes[0] ==
          "note: --sizes 1K..4K: the sizes of its ranges rounded to a multiple of 12 B, as allgather over 3 ranks of fp32 "
          "needs: 1024 -> 1020, 2048 -> 2040, 4096 -> 4092");
}

TEST_CASE("collective spec: the rounding note names only the ops that need the step (issue 26)") {
    // 4 ranks of fp32: allgather and alltoall need 16 B; broadcast needs 4 B and incast none.
    const auto built = options("a,b,c,d", "allgather,alltoall,broadcast,incast", "1000..4000").build();
    REQUIRE_FALSE(built.notes.empty());
    CHECK(built.notes[0].find("rounded to a multiple of 16 B, as allgather, alltoall over 4 ranks of fp32 needs:") !=
          std::string::npos);
    CHECK(built.notes[0].find("broadcast") == std::string::npos);
    CHECK(built.notes[0].find("incast") == std::string::npos);
}

TEST_CASE("collective sizes: a size below the step goes up to it; reordering is noted; lists are kept as written") {
    std::vector<std::string> notes;
    CHECK(client::collective_sizes("4..16", 12, "x", notes) == std::vector<std::uint64_t>{12});
    REQUIRE(notes.size() == 2);  // 4 -> 12, 8 -> 12, 16 -> 12: rounded, then without repeats
    CHECK(notes[0].find("4 -> 12, 8 -> 12, 16 -> 12") != std::string::npos);
    CHECK(notes[1] == "note: --sizes 4..16 measured without repeats: 12");
    notes.clear();
    CHECK(client::collective_sizes("1000,24", 12, "x", notes) == std::vector<std::uint64_t>{24, 1000});
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == "note: --sizes 1000,24 measured in ascending order: 24,1000");
}

}  // namespace collective_cli_test
