#include "core/error.hpp"
#include "daemon/runtime/config.hpp"
#include "daemon/store/result_store.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <sqlite3.h>
#include <string>

namespace result_store_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using daemon::result_store;
using daemon::run_list_query;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A state directory of its own, removed at the end.
struct temp_dir {
    fs::path path;
    temp_dir() {
        std::random_device rd;
        path = fs::temp_directory_path() / fmt::format("meshperf-store-test-{:x}", rd());
        fs::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string str() const { return path.string(); }
};

json run_doc(const std::string& id, const std::string& created, const std::string& state, int points = 1, std::size_t pad = 0) {
    json doc{{"schema", "meshperf.run/1"}, {"id", id}, {"state", state}, {"created_at", created},
             {"spec", {{"peer", "node2:7470"}, {"tests", {"latency"}}}}, {"points", json::array()}};
    for (int i = 0; i < points; ++i) doc["points"].push_back({{"test", "latency"}, {"size_bytes", 1 << i}, {"pad", std::string(pad, 'x')}});
    if (state != "queued" && state != "running") doc["finished_at"] = created;
    return doc;
}

std::string stamp(int i) { return fmt::format("2026-12-01T10:00:{:02d}.000Z", i); }
std::string id_of(int i) { return fmt::format("r-20261201-1000{:02d}-00000{}", i, i % 10); }

/// Runs `sql` on the store's file through a connection of its own.
void exec_on(const std::string& db_path, const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    REQUIRE_MESSAGE(rc == SQLITE_OK, msg);
}

std::vector<std::string> ids(const std::vector<json>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(r["id"].get<std::string>());
    return out;
}

}  // namespace

TEST_CASE("result store: history pages newest first, `next` leads to the next page, by id or by created_at") {
    temp_dir dir;
    result_store store(dir.str());
    for (int i = 1; i <= 5; ++i) store.save(run_doc(id_of(i), stamp(i), "completed"));
    auto page = store.list(run_list_query{2, "", ""});
    CHECK(ids(page.runs) == std::vector<std::string>{id_of(5), id_of(4)});
    CHECK(page.next == id_of(4));
    page = store.list(run_list_query{2, "", page.next});
    CHECK(ids(page.runs) == std::vector<std::string>{id_of(3), id_of(2)});
    page = store.list(run_list_query{2, "", page.next});
    CHECK(ids(page.runs) == std::vector<std::string>{id_of(1)});
    CHECK(page.next.empty());
    // A created_at as the cursor: strictly older runs.
    CHECK(ids(store.list(run_list_query{10, "", stamp(3)}).runs) == std::vector<std::string>{id_of(2), id_of(1)});
    CHECK(store.list(run_list_query{10, "other:7470", ""}).runs.empty());
    CHECK_THROWS_AS(store.list(run_list_query{10, "", "r-unknown"}), std::invalid_argument);
    CHECK(store.list(run_list_query{10, "", ""}).runs[0]["points"] == 1);
}

TEST_CASE("result store: a run left running is interrupted at the next start with its points; a completed one stays") {
    temp_dir dir;
    {
        result_store store(dir.str());
        store.save(run_doc(id_of(1), stamp(1), "completed", 4));
        store.save(run_doc(id_of(2), stamp(2), "running", 3));
        store.save(run_doc(id_of(3), stamp(3), "queued", 0));
    }
    result_store store(dir.str());
    const auto running = store.load(id_of(2));
    REQUIRE(running);
    CHECK((*running)["state"] == "failed");
    CHECK((*running)["error"] == daemon::interrupted_error);
    CHECK((*running)["points"].size() == 3);
    CHECK((*store.load(id_of(3)))["state"] == "failed");
    const auto done = store.load(id_of(1));
    CHECK((*done)["state"] == "completed");
    CHECK((*done)["points"].size() == 4);
    CHECK(!done->contains("error"));
    CHECK(!store.load("r-none"));
}

TEST_CASE("result store: a damaged row answers an error naming it and the file; the listing marks it and goes on") {
    temp_dir dir;
    std::string path;
    {
        result_store store(dir.str());
        path = store.path();
        for (int i = 1; i <= 3; ++i) store.save(run_doc(id_of(i), stamp(i), "completed"));
    }
    exec_on(path, fmt::format("UPDATE runs SET document = '{{\"id\": \"x\", trunc' WHERE id = '{}'", id_of(2)));
    // Still valid JSON, but not what was written: the checksum finds it.
    exec_on(path, fmt::format("UPDATE runs SET document = replace(document, '\"points\":[', '\"points\" :[') WHERE id = '{}'", id_of(3)));
    result_store store(dir.str());
    for (int i : {2, 3}) {
        try {
            store.load(id_of(i));
            FAIL("a damaged row was served");
        } catch (const daemon::store_read_error& e) {
            const std::string what = e.what();
            CHECK(what.find(id_of(i)) != std::string::npos);
            CHECK(what.find(path) != std::string::npos);
            CHECK(what.find("damaged") != std::string::npos);
        }
    }
    CHECK((*store.load(id_of(1)))["state"] == "completed");
    const auto rows = store.list(run_list_query{10, "", ""}).runs;
    REQUIRE(rows.size() == 3);
    CHECK(rows[0]["damaged"] == true);
    CHECK(rows[1]["damaged"] == true);
    CHECK(!rows[2].contains("damaged"));
    CHECK(rows[0]["error"].get<std::string>().find("damaged") != std::string::npos);
}

TEST_CASE("result store: a damaged file is moved aside with its -wal and a fresh store begun") {
    temp_dir dir;
    std::string path;
    {
        result_store store(dir.str());
        path = store.path();
        store.save(run_doc(id_of(1), stamp(1), "completed"));
    }
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        const std::string zeros(100, '\0');  // the header: "file is not a database"
        f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
    }
    result_store store(dir.str());
    CHECK(store.writable());
    CHECK(store.list(run_list_query{10, "", ""}).runs.empty());
    store.save(run_doc(id_of(2), stamp(2), "completed"));
    int aside = 0;
    for (const auto& e : fs::directory_iterator(dir.path))
        if (e.path().filename().string().rfind("meshperf.db.corrupt-", 0) == 0) ++aside;
    CHECK(aside >= 1);
}

TEST_CASE("result store: a zeroed page in the middle is found by quick_check at start") {
    temp_dir dir;
    std::string path;
    {
        result_store store(dir.str());
        path = store.path();
        for (int i = 1; i <= 40; ++i) store.save(run_doc(id_of(i % 60), stamp(i % 60), "completed", 3, 2000));
    }
    exec_on(path, "PRAGMA wal_checkpoint(TRUNCATE)");
    const auto size = fs::file_size(path);
    REQUIRE(size > 8 * 4096);
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(4 * 4096);
        const std::string zeros(4096, '\0');
        f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
    }
    result_store store(dir.str());
    bool moved = false;
    for (const auto& e : fs::directory_iterator(dir.path))
        moved = moved || e.path().filename().string().rfind("meshperf.db.corrupt-", 0) == 0;
    CHECK(moved);
    CHECK(store.list(run_list_query{100, "", ""}).runs.empty());
}

TEST_CASE("result store: retention keeps max_runs newest finished runs and never a running one") {
    temp_dir dir;
    daemon::store_options o;
    o.max_runs = 3;
    result_store store(dir.str(), o);
    store.save(run_doc("r-live", stamp(0), "running"));
    for (int i = 1; i <= 6; ++i) store.save(run_doc(id_of(i), stamp(i), "completed"));
    CHECK(ids(store.list(run_list_query{20, "", ""}).runs) ==
          std::vector<std::string>{id_of(6), id_of(5), id_of(4), "r-live"});
}

TEST_CASE("result store: retention by age deletes runs older than max_age_days") {
    temp_dir dir;
    daemon::store_options o;
    o.max_age_days = 30;
    result_store store(dir.str(), o);
    store.save(run_doc("r-old", "2001-01-01T00:00:00.000Z", "completed"));
    store.save(run_doc("r-new", "2999-01-01T00:00:00.000Z", "completed"));
    CHECK(ids(store.list(run_list_query{20, "", ""}).runs) == std::vector<std::string>{"r-new"});
}

TEST_CASE("result store: retention by size keeps the pages in use under max_bytes and the file shrinks") {
    temp_dir dir;
    daemon::store_options o;
    o.max_bytes = std::uint64_t{1} << 20;
    o.max_runs = 0;
    o.max_age_days = 0;
    std::string path;
    {
        result_store store(dir.str(), o);
        path = store.path();
        for (int i = 0; i < 40; ++i)
            store.save(run_doc(fmt::format("r-{:03d}", i), fmt::format("2026-12-01T10:{:02d}:00.000Z", i), "completed", 10, 10'000));
        const auto rows = store.list(run_list_query{100, "", ""}).runs;
        CHECK(rows.size() < 12);   // ~100 KB each: about 10 fit in 1 MiB
        CHECK(rows.size() >= 5);
        CHECK(rows[0]["id"] == "r-039");
    }
    // After the last connection closes the WAL is checkpointed into the file.
    CHECK(fs::file_size(path) <= (std::uint64_t{1} << 20) + 256 * 1024);
}

TEST_CASE("result store: a document with invalid UTF-8 from outside is stored with replacement characters") {
    temp_dir dir;
    result_store store(dir.str());
    auto doc = run_doc(id_of(1), stamp(1), "failed");
    doc["error"] = std::string("peer said HTTP/1.1 404 \xe9t\xe9");
    store.save(doc);
    const auto back = store.load(id_of(1));
    REQUIRE(back);
    CHECK((*back)["error"].get<std::string>().find("\xef\xbf\xbd") != std::string::npos);
}

TEST_CASE("config: [store] sets retention and the start check; bad values are refused naming the key") {
    const auto c = daemon::parse_config("[store]\nmax_runs = 500\nmax_age_days = 7\nmax_bytes = \"64M\"\nintegrity_check = true\n"
                                        "retry_interval = \"2s\"\n",
                                        "t.toml");
    CHECK(c.store.max_runs == 500);
    CHECK(c.store.max_age_days == 7);
    CHECK(c.store.max_bytes == (std::uint64_t{64} << 20));
    CHECK(c.store.integrity_check);
    CHECK(c.store.retry_interval_s == 2);
    const auto d = daemon::parse_config("", "t.toml");
    CHECK(d.store.max_runs == 10'000);
    CHECK(d.store.max_bytes == (std::uint64_t{256} << 20));
    CHECK_THROWS_WITH_AS(daemon::parse_config("[store]\nmax_bytes = \"10K\"\n", "t.toml"), doctest::Contains("max_bytes"), core::spec_error);
    CHECK_THROWS_WITH_AS(daemon::parse_config("[store]\nmax_run = 5\n", "t.toml"), doctest::Contains("unknown key 'max_run'"), core::spec_error);
}

}  // namespace result_store_test
