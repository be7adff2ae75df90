// The store suite (issue 12): the same tests over every implementation. SQLite always runs; PostgreSQL runs
// when SAMPLER_TEST_POSTGRESQL_URL names a server (tests/store/postgresql_test.sh starts one and sets it).
// Tests share a database on PostgreSQL, so each works on applications of its own and counts differences.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "store/store.h"

namespace sampler::store {
namespace {

using StoredRun = ::sampler::store::Run;  // testing::Test has a Run() of its own

std::string unique_name(std::string_view prefix) {
  static std::atomic<int> counter{0};
  std::random_device random;
  return std::string(prefix) + "-" + std::to_string(getpid()) + "-" + std::to_string(random()) + "-" +
         std::to_string(counter++);
}

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      dir_ = std::filesystem::temp_directory_path() / unique_name("store-test");
      std::filesystem::create_directories(dir_);
      url_ = "sqlite:" + (dir_ / "reports.db").string();
    } else {
      const char* url = std::getenv("SAMPLER_TEST_POSTGRESQL_URL");
      if (url == nullptr || *url == '\0') {
        // with_postgresql.sh always sets it: there, a skip would be a test that cannot fail.
        if (std::getenv("SAMPLER_TEST_POSTGRESQL_REQUIRED") != nullptr) FAIL() << "SAMPLER_TEST_POSTGRESQL_URL unset";
        GTEST_SKIP() << "SAMPLER_TEST_POSTGRESQL_URL is not set";
      }
      url_ = url;
    }
    std::string error;
    store_ = open_store(url_, error);
    ASSERT_NE(store_, nullptr) << error;
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  StoredRun make_run(const std::string& app, std::string version = "1.0") {
    StoredRun run;
    run.run_id = unique_name("run");
    run.app = app;
    run.version = std::move(version);
    run.exit_status = 0;
    run.body = "<report id=\"samples\">\n</report>\n";
    return run;
  }
  std::vector<StoredRun> read(const Query& query) {
    std::vector<StoredRun> runs;
    std::string error;
    EXPECT_TRUE(store_->for_each(query, [&](const StoredRun& run) { runs.push_back(run); return true; }, error)) << error;
    return runs;
  }
  int64_t count() {
    std::string error;
    int64_t n = store_->count(error);
    EXPECT_GE(n, 0) << error;
    return n;
  }

  std::filesystem::path dir_;
  std::string url_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, StoresAndReadsBackEveryColumn) {
  std::string app = unique_name("app");
  StoredRun crashed = make_run(app, "2.1");
  crashed.exit_status.reset();
  crashed.signal = 11;
  crashed.failed = true;
  crashed.crash_signature = "SIGSEGV:0123456789abcdef";
  crashed.received = 1700000000;
  static constexpr char kBinary[] = "binary \0\x01\xff and text\n";
  crashed.body = std::string(kBinary, sizeof kBinary - 1) + std::string(100000, 'x');
  StoredRun clean = make_run(app, "2.1");
  clean.body.clear();
  std::string error;
  ASSERT_EQ(store_->put(crashed, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->put(clean, error), PutStatus::kStored) << error;
  std::vector<StoredRun> runs = read({app, std::nullopt});
  ASSERT_EQ(runs.size(), 2u);
  const StoredRun& a = runs[0];
  EXPECT_EQ(a.run_id, crashed.run_id);
  EXPECT_EQ(a.app, app);
  EXPECT_EQ(a.version, "2.1");
  EXPECT_FALSE(a.exit_status.has_value());
  EXPECT_EQ(a.signal, 11);
  EXPECT_TRUE(a.failed);
  EXPECT_EQ(a.crash_signature, crashed.crash_signature);
  EXPECT_EQ(a.received, 1700000000);
  EXPECT_EQ(a.body, crashed.body);
  const StoredRun& b = runs[1];
  EXPECT_EQ(b.run_id, clean.run_id);
  EXPECT_EQ(b.exit_status, 0);
  EXPECT_FALSE(b.signal.has_value());
  EXPECT_FALSE(b.failed);
  EXPECT_EQ(b.body, "");
  EXPECT_GT(b.received, 1700000000);  // filled in by the store
}

TEST_P(StoreTest, DuplicateRunIdsAreStoredOnce) {
  std::string app = unique_name("app");
  StoredRun run = make_run(app);
  int64_t before = count();
  std::string error;
  EXPECT_EQ(store_->put(run, error), PutStatus::kStored) << error;
  run.body = "a different body";
  EXPECT_EQ(store_->put(run, error), PutStatus::kDuplicate) << error;
  EXPECT_EQ(count(), before + 1);
  std::vector<StoredRun> runs = read({app, std::nullopt});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].body, make_run(app).body);
}

TEST_P(StoreTest, QueriesByApplicationAndVersion) {
  std::string app = unique_name("app"), other = unique_name("other");
  std::string error;
  for (const char* version : {"1.0", "1.0", "2.0"}) ASSERT_EQ(store_->put(make_run(app, version), error), PutStatus::kStored);
  ASSERT_EQ(store_->put(make_run(other, "1.0"), error), PutStatus::kStored);
  EXPECT_EQ(read({app, std::nullopt}).size(), 3u);
  EXPECT_EQ(read({app, "1.0"}).size(), 2u);
  EXPECT_EQ(read({app, "2.0"}).size(), 1u);
  EXPECT_EQ(read({app, "3.0"}).size(), 0u);
  EXPECT_EQ(read({other, std::nullopt}).size(), 1u);
  EXPECT_EQ(read({unique_name("nobody"), std::nullopt}).size(), 0u);
}

TEST_P(StoreTest, VisitorStopsEarly) {
  std::string app = unique_name("app");
  std::string error;
  for (int i = 0; i < 5; ++i) ASSERT_EQ(store_->put(make_run(app), error), PutStatus::kStored);
  int seen = 0;
  EXPECT_TRUE(store_->for_each({app, std::nullopt}, [&](const StoredRun&) { return ++seen < 2; }, error));
  EXPECT_EQ(seen, 2);
}

TEST_P(StoreTest, ReopeningKeepsRunsAndSchemaVersion) {
  std::string app = unique_name("app");
  std::string error;
  StoredRun run = make_run(app);
  ASSERT_EQ(store_->put(run, error), PutStatus::kStored);
  EXPECT_EQ(store_->schema_version(), kSchemaVersion);
  store_.reset();
  store_ = open_store(url_, error);
  ASSERT_NE(store_, nullptr) << error;
  EXPECT_EQ(store_->schema_version(), kSchemaVersion);
  std::vector<StoredRun> runs = read({app, std::nullopt});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run_id, run.run_id);
  EXPECT_EQ(store_->put(run, error), PutStatus::kDuplicate);
}

TEST_P(StoreTest, ConcurrentWritersLoseNothingAndDuplicateNothing) {
  std::string app = unique_name("app");
  constexpr int kThreads = 8, kEach = 50;
  std::vector<StoredRun> runs;
  for (int i = 0; i < kThreads * kEach; ++i) runs.push_back(make_run(app));
  std::atomic<int> stored{0}, duplicates{0}, errors{0};
  std::vector<std::thread> threads;
  // Every run is sent by two threads: each must be stored exactly once.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach * 2; ++i) {
        const StoredRun& run = runs[static_cast<size_t>((t * kEach + i) % (kThreads * kEach))];
        std::string error;
        switch (store_->put(run, error)) {
          case PutStatus::kStored: ++stored; break;
          case PutStatus::kDuplicate: ++duplicates; break;
          case PutStatus::kError: ++errors; break;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(stored.load(), kThreads * kEach);
  EXPECT_EQ(duplicates.load(), kThreads * kEach);
  EXPECT_EQ(read({app, std::nullopt}).size(), static_cast<size_t>(kThreads * kEach));
}

// Schema version 2 (issue 13): symbol files by build ID and kind.
TEST_P(StoreTest, SymbolFilesAreStoredByBuildIdAndKind) {
  std::string error, bytes;
  SymbolFile file{unique_name("b1d"), "gsym", "app", 0, std::string("GSYM\0\x01", 6) + std::string(3000, 'x')};
  EXPECT_EQ(store_->get_symbols(file.build_id, "gsym", bytes, error), GetStatus::kMissing) << error;
  ASSERT_EQ(store_->put_symbols(file, error), PutStatus::kStored) << error;
  EXPECT_EQ(store_->put_symbols(file, error), PutStatus::kDuplicate) << error;
  ASSERT_EQ(store_->get_symbols(file.build_id, "gsym", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, file.bytes);
  EXPECT_EQ(store_->get_symbols(file.build_id, "ranges", bytes, error), GetStatus::kMissing) << error;
  // Other bytes for the same build ID and kind replace the file.
  file.bytes = "symbfile other";
  EXPECT_EQ(store_->put_symbols(file, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->get_symbols(file.build_id, "gsym", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, "symbfile other");
  SymbolFile ranges{file.build_id, "ranges", "app", 0, "symbfile ranges"};
  ASSERT_EQ(store_->put_symbols(ranges, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->get_symbols(file.build_id, "ranges", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, "symbfile ranges");
}

INSTANTIATE_TEST_SUITE_P(Implementations, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& param_info) { return param_info.param; });

TEST(OpenStore, RejectsBadUrls) {
  std::string error;
  EXPECT_EQ(open_store("mysql://x", error), nullptr);
  EXPECT_NE(error.find("unknown database URL"), std::string::npos) << error;
  EXPECT_EQ(open_store("sqlite:", error), nullptr);
  EXPECT_EQ(open_store("sqlite:/nonexistent-dir/x/reports.db", error), nullptr);
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(SqliteStore, RefusesANewerSchema) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / unique_name("store-test");
  std::filesystem::create_directories(dir);
  std::string path = (dir / "reports.db").string(), error;
  ASSERT_NE(open_store("sqlite:" + path, error), nullptr) << error;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE schema_version SET version = 999", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(open_store("sqlite:" + path, error), nullptr);
  EXPECT_NE(error.find("newer"), std::string::npos) << error;
  std::filesystem::remove_all(dir);
}

// A database created by schema version 1 (runs only) is migrated to 2: its runs stay, symbols can be stored.
TEST(SqliteStore, MigratesAVersionOneDatabase) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / unique_name("store-test");
  std::filesystem::create_directories(dir);
  std::string path = (dir / "reports.db").string(), error;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // Version 1's schema exactly as migration 0 -> 1 creates it, with one run.
  const char* v1 =
      "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1);"
      "CREATE TABLE runs (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, app TEXT NOT NULL, version TEXT NOT "
      "NULL, received INTEGER NOT NULL, exit_status INTEGER, signal INTEGER, failed INTEGER NOT NULL, "
      "crash_signature TEXT NOT NULL, body_size INTEGER NOT NULL, body BLOB NOT NULL);";
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string body = compress_body("<report id=\"samples\">\n</report>\n");
  sqlite3_stmt* insert = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO runs (run_id, app, version, received, failed, crash_signature, "
                                   "body_size, body) VALUES ('r1', 'old', '1', 1, 0, '', 32, ?1)",
                               -1, &insert, nullptr),
            SQLITE_OK);
  sqlite3_bind_blob(insert, 1, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE);
  sqlite3_finalize(insert);
  sqlite3_close(db);

  std::unique_ptr<Store> store = open_store("sqlite:" + path, error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_EQ(store->schema_version(), 2);
  int runs = 0;
  EXPECT_TRUE(store->for_each({"old", std::nullopt}, [&](const StoredRun&) { return ++runs, true; }, error)) << error;
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(store->put_symbols({"ab", "gsym", "old", 0, "GSYM"}, error), PutStatus::kStored) << error;
  store.reset();
  std::filesystem::remove_all(dir);
}

TEST(Compression, RoundTripsAndRejectsGarbage) {
  std::string text = "hello\n" + std::string(5000, 'z');
  std::string stored = compress_body(text), back;
  ASSERT_TRUE(decompress_body(stored, static_cast<int64_t>(text.size()), back));
  EXPECT_EQ(back, text);
  EXPECT_FALSE(decompress_body("garbage", 10, back));
  EXPECT_FALSE(decompress_body(stored, static_cast<int64_t>(text.size()) - 1, back));
}

}  // namespace
}  // namespace sampler::store
