// The store suite: the same tests over every implementation. SQLite always runs; PostgreSQL runs
// when SAMPLER_TEST_POSTGRESQL_URL names a server (tests/store/postgresql_test.sh starts one and sets it).
// Tests share a database on PostgreSQL, so each works on applications of its own and counts differences.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "group_commit.h"
#include "sections/hex.h"
#include "store/files.h"
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

  // A database of an older schema, made by `sql` (%ID%, %INT%, %BOOL%, %BLOB% and %FALSE% in either store's
  // words): a file of its own on SQLite, a schema of its own in the shared database on PostgreSQL. The URL that
  // opens it, or "" after a failure.
  std::string old_database(std::string sql, const std::string& name) {
    const bool sqlite = GetParam() == "sqlite";
    auto substitute = [&sql](std::string_view word, std::string_view value) {
      for (size_t at; (at = sql.find(word)) != std::string::npos;) sql.replace(at, word.size(), value);
    };
    substitute("%ID%", sqlite ? "INTEGER PRIMARY KEY" : "BIGSERIAL PRIMARY KEY");
    substitute("%INT%", sqlite ? "INTEGER" : "BIGINT");
    substitute("%BOOL%", sqlite ? "INTEGER" : "BOOLEAN");
    substitute("%BLOB%", sqlite ? "BLOB" : "BYTEA");
    substitute("%FALSE%", sqlite ? "0" : "false");
    if (sqlite) {
      sqlite3* db = nullptr;
      const bool made = sqlite3_open((dir_ / (name + ".db")).c_str(), &db) == SQLITE_OK &&
                        sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
      if (!made) ADD_FAILURE() << sqlite3_errmsg(db);
      sqlite3_close(db);
      return made ? "sqlite:" + (dir_ / (name + ".db")).string() : "";
    }
    const std::string schema = name + "_" + std::to_string(getpid()) + "_" + std::to_string(std::random_device{}());
    PGconn* c = PQconnectdb(url_.c_str());
    PGresult* r = PQexec(c, ("CREATE SCHEMA " + schema + "; SET search_path TO " + schema + ";" + sql).c_str());
    const bool made = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!made) ADD_FAILURE() << PQerrorMessage(c);
    PQclear(r);
    PQfinish(c);
    return made ? url_ + (url_.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" + schema : "";
  }
  // `bytes` as a BLOB literal of the store's SQL.
  std::string blob(std::string_view bytes) const {
    return (GetParam() == "sqlite" ? "X'" : "'\\x") + hex_bytes(bytes) + "'";
  }

  // Every run of `app` as "ID:SUMMARY:BODY" ("no body" where the store gave none).
  static std::vector<std::string> runs_of(Store& store, const std::string& app, bool summaries, bool bodies) {
    std::vector<std::string> found;
    std::string error;
    Query query{app, std::nullopt};
    query.summaries = summaries;
    query.stored_bodies = bodies;
    EXPECT_TRUE(store.for_each(query, [&](const StoredRun& run) {
      std::string text;
      const bool has_body = decompress_body(run.stored_body, run.body_size, text);
      found.push_back(run.run_id + ":" + run.summary + ":" + (has_body ? text : "no body"));
      return true;
    }, error)) << error;
    return found;
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

// crashes_only: the runs with a crash signature, with their bodies (the console's crash groups); newest: the
// last runs stored, oldest first (its latest runs).
TEST_P(StoreTest, CrashesOnlyAndNewest) {
  std::string app = unique_name("app");
  StoredRun crashed = make_run(app, "1.0");
  crashed.signal = 11;
  crashed.crash_signature = "SIGSEGV:0123456789abcdef";
  crashed.body = "the crash's report\n";
  StoredRun clean = make_run(app, "1.0");
  clean.body = "a clean run's report\n";
  StoredRun later = make_run(app, "2.0");
  std::string error;
  ASSERT_EQ(store_->put(crashed, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->put(clean, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->put(later, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->put(make_run(unique_name("other")), error), PutStatus::kStored) << error;
  Query crashes{app};
  crashes.crashes_only = true;
  std::vector<StoredRun> runs = read(crashes);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run_id, crashed.run_id);
  EXPECT_EQ(runs[0].body, crashed.body);
  crashes.version = "2.0";
  EXPECT_TRUE(read(crashes).empty());
  Query newest{app};
  newest.newest = 2;
  runs = read(newest);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run_id, clean.run_id);
  EXPECT_EQ(runs[0].body, clean.body);
  EXPECT_EQ(runs[1].run_id, later.run_id);
  newest.newest = 10;
  EXPECT_EQ(read(newest).size(), 3u);
  // stored_bodies: as stored, decompressed by the reader.
  runs = read({app, std::nullopt, false, true});
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1].body, "");
  std::string text;
  ASSERT_TRUE(decompress_body(runs[1].stored_body, runs[1].body_size, text));
  EXPECT_EQ(text, clean.body);
  // Without bodies: the columns alone, neither body nor summary, whether summaries are asked for or not.
  StoredRun summarized = make_run(app, "3.0");
  summarized.exit_status = 2;
  summarized.failed = true;
  summarized.summary = "a summary";
  ASSERT_EQ(store_->put(summarized, error), PutStatus::kStored) << error;
  newest.newest = 2;
  newest.bodies = false;
  for (bool summaries : {false, true}) {
    newest.summaries = summaries;
    runs = read(newest);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].run_id, later.run_id);
    EXPECT_EQ(runs[0].version, "2.0");
    EXPECT_EQ(runs[1].run_id, summarized.run_id);
    EXPECT_EQ(runs[1].exit_status, 2);
    EXPECT_TRUE(runs[1].failed);
    for (const StoredRun& run : runs) {
      EXPECT_EQ(run.body, "");
      EXPECT_EQ(run.stored_body, "");
      EXPECT_EQ(run.summary, "");
    }
  }
}

// count_days(): per release and day the runs, the failures by FailureRule's default (a signal; an exit status
// whose low byte is not 0; without either, the stored flag), the first run's order and the first and last times.
TEST_P(StoreTest, CountsRunsAndFailuresPerReleaseAndDay) {
  const std::string app = unique_name("app");
  constexpr int64_t kDay = 20000;  // days since the epoch
  struct Made {
    std::string version;
    int64_t received;
    std::optional<int> exit_status, signal;
    bool failed;
  };
  const std::vector<Made> made = {
      {"1.0", kDay * 86400 + 100, 0, std::nullopt, false},           // success
      {"1.0", kDay * 86400 + 50, 1, std::nullopt, true},             // fails: exit 1
      {"1.0", kDay * 86400 + 86399, 256, std::nullopt, false},       // exit 256: low byte 0, a success
      {"1.0", (kDay + 1) * 86400, std::nullopt, 11, true},           // the next day: a signal
      {"2.0", kDay * 86400 + 7, std::nullopt, std::nullopt, true},   // no outcome: the stored flag
      {"2.0", kDay * 86400 + 9, std::nullopt, std::nullopt, false},
      {"1.0", (kDay + 1) * 86400 + 5, 0, std::nullopt, false},
  };
  std::string error;
  for (const Made& m : made) {
    StoredRun run = make_run(app, m.version);
    run.received = m.received;
    run.exit_status = m.exit_status;
    run.signal = m.signal;
    run.failed = m.failed;
    if (m.signal) run.crash_signature = "SIGSEGV:0123456789abcdef";
    ASSERT_EQ(store_->put(run, error), PutStatus::kStored) << error;
  }
  ASSERT_EQ(store_->put(make_run(unique_name("other"), "1.0"), error), PutStatus::kStored) << error;
  std::vector<DayCounts> days;
  ASSERT_TRUE(store_->count_days({app}, days, error)) << error;
  std::sort(days.begin(), days.end(), [](const DayCounts& a, const DayCounts& b) {
    return std::tie(a.version, a.day) < std::tie(b.version, b.day);
  });
  ASSERT_EQ(days.size(), 3u);
  auto expect = [](const DayCounts& d, std::string_view version, int64_t day, uint64_t runs, uint64_t failures,
                   int64_t first, int64_t last) {
    EXPECT_EQ(d.version, version);
    EXPECT_EQ(d.day, day);
    EXPECT_EQ(d.runs, runs);
    EXPECT_EQ(d.failures, failures);
    EXPECT_EQ(d.first_received, first);
    EXPECT_EQ(d.last_received, last);
  };
  expect(days[0], "1.0", kDay, 3, 1, kDay * 86400 + 50, kDay * 86400 + 86399);
  expect(days[1], "1.0", kDay + 1, 2, 1, (kDay + 1) * 86400, (kDay + 1) * 86400 + 5);
  expect(days[2], "2.0", kDay, 2, 1, kDay * 86400 + 7, kDay * 86400 + 9);
  // The store's order of each day's first run: 1.0's first day, its second day, then 2.0.
  EXPECT_LT(days[0].first_stored, days[1].first_stored);
  EXPECT_LT(days[1].first_stored, days[2].first_stored);
  // The same failures as FailureRule's default, which the predictor pages use, says of these runs.
  uint64_t failing = 0;
  for (const StoredRun& run : read({app})) failing += FailureRule().failed(run) ? 1 : 0;
  EXPECT_EQ(failing, days[0].failures + days[1].failures + days[2].failures);
  days.clear();
  ASSERT_TRUE(store_->count_days({unique_name("none")}, days, error)) << error;
  EXPECT_TRUE(days.empty());
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
          case PutStatus::kConflict:  // put() never answers it
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
  // Group commit: never more transactions than puts (how many fewer depends on the scheduling).
  EXPECT_LE(store_->commits(), kThreads * kEach * 2);
  EXPECT_GE(store_->commits(), 1);
}

// Schema version 2: symbol files by build ID and kind; version 3: per application.
TEST_P(StoreTest, SymbolFilesAreStoredByBuildIdAndKind) {
  std::string error, bytes;
  SymbolFile file{unique_name("b1d"), "gsym", "app", 0, std::string("GSYM\0\x01", 6) + std::string(3000, 'x')};
  EXPECT_EQ(store_->get_symbols("app", file.build_id, "gsym", bytes, error), GetStatus::kMissing) << error;
  ASSERT_EQ(store_->put_symbols(file, false, error), PutStatus::kStored) << error;
  EXPECT_EQ(store_->put_symbols(file, false, error), PutStatus::kDuplicate) << error;
  ASSERT_EQ(store_->get_symbols("app", file.build_id, "gsym", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, file.bytes);
  EXPECT_EQ(store_->get_symbols("app", file.build_id, "ranges", bytes, error), GetStatus::kMissing) << error;
  // Other bytes for the same key replace the file only when allowed.
  const std::string first = file.bytes;
  file.bytes = "symbfile other";
  EXPECT_EQ(store_->put_symbols(file, false, error), PutStatus::kConflict) << error;
  ASSERT_EQ(store_->get_symbols("app", file.build_id, "gsym", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, first);
  EXPECT_EQ(store_->put_symbols(file, true, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->get_symbols("app", file.build_id, "gsym", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, "symbfile other");
  SymbolFile ranges{file.build_id, "ranges", "app", 0, "symbfile ranges"};
  ASSERT_EQ(store_->put_symbols(ranges, false, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->get_symbols("app", file.build_id, "ranges", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, "symbfile ranges");
}

// Plans are kept by application and id; the last one put for a release is its current plan; a stored id keeps its
// text (a run's plan id names one plan), and another application's plans are out of reach.
TEST_P(StoreTest, PlansAreKeptByApplicationAndIdWithTheCurrentOnePerRelease) {
  std::string error, text, id;
  const std::string app = unique_name("plans"), other = unique_name("plans-other");
  EXPECT_EQ(store_->current_plan(app, "1.0", id, error), GetStatus::kMissing) << error;
  Plan first{app, "p1", 0, "sampler-plan\t1\nid\tp1\n" + std::string(3000, '#') + "\n"};
  ASSERT_EQ(store_->put_plan(first, "1.0", error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->current_plan(app, "1.0", id, error), GetStatus::kFound) << error;
  EXPECT_EQ(id, "p1");
  ASSERT_EQ(store_->get_plan(app, "p1", text, error), GetStatus::kFound) << error;
  EXPECT_EQ(text, first.text);
  EXPECT_EQ(store_->current_plan(app, "2.0", id, error), GetStatus::kMissing) << error;
  EXPECT_EQ(store_->current_plan(app, "", id, error), GetStatus::kMissing) << error;
  // A second plan becomes current; the first stays readable by its id.
  Plan second{app, "p2", 0, "sampler-plan\t1\nid\tp2\n"};
  ASSERT_EQ(store_->put_plan(second, "1.0", error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->current_plan(app, "1.0", id, error), GetStatus::kFound) << error;
  EXPECT_EQ(id, "p2");
  ASSERT_EQ(store_->get_plan(app, "p1", text, error), GetStatus::kFound) << error;
  EXPECT_EQ(text, first.text);
  // The same text again is a duplicate, and current once more; another text under a stored id changes nothing.
  ASSERT_EQ(store_->put_plan(first, "1.0", error), PutStatus::kDuplicate) << error;
  ASSERT_EQ(store_->current_plan(app, "1.0", id, error), GetStatus::kFound) << error;
  EXPECT_EQ(id, "p1");
  Plan changed{app, "p2", 0, "sampler-plan\t1\nid\tp2\n# changed\n"};
  EXPECT_EQ(store_->put_plan(changed, "", error), PutStatus::kConflict) << error;
  EXPECT_EQ(store_->current_plan(app, "", id, error), GetStatus::kMissing) << error;
  ASSERT_EQ(store_->get_plan(app, "p2", text, error), GetStatus::kFound) << error;
  EXPECT_EQ(text, second.text);
  // Another application: neither reads these plans nor is hindered by their ids.
  EXPECT_EQ(store_->get_plan(other, "p1", text, error), GetStatus::kMissing) << error;
  EXPECT_EQ(store_->current_plan(other, "1.0", id, error), GetStatus::kMissing) << error;
  Plan theirs{other, "p2", 0, "sampler-plan\t1\nid\tp2\n# theirs\n"};
  ASSERT_EQ(store_->put_plan(theirs, "1.0", error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->get_plan(app, "p2", text, error), GetStatus::kFound) << error;
  EXPECT_EQ(text, second.text);
  ASSERT_EQ(store_->current_plan(app, "1.0", id, error), GetStatus::kFound) << error;
  EXPECT_EQ(id, "p1");
}

// One application's symbols are its own: another's file for the same build ID is stored apart and never read
// for the first.
TEST_P(StoreTest, SymbolFilesBelongToTheirApplication) {
  std::string error, bytes;
  const std::string id = unique_name("b1d");
  ASSERT_EQ(store_->put_symbols({id, "gsym", "mine", 0, "genuine"}, false, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->put_symbols({id, "gsym", "theirs", 0, "forged"}, false, error), PutStatus::kStored) << error;
  ASSERT_EQ(store_->get_symbols("mine", id, "gsym", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, "genuine");
  ASSERT_EQ(store_->get_symbols("theirs", id, "gsym", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, "forged");
  EXPECT_EQ(store_->get_symbols("nobody", id, "gsym", bytes, error), GetStatus::kMissing) << error;
}

// Run ids are unique per application: the same id from another application is another run.
TEST_P(StoreTest, RunIdsAreUniquePerApplication) {
  std::string error;
  StoredRun mine = make_run(unique_name("app"));
  StoredRun theirs = make_run(unique_name("app"));
  theirs.run_id = mine.run_id;
  theirs.body = "theirs";
  ASSERT_EQ(store_->put(mine, error), PutStatus::kStored) << error;
  EXPECT_EQ(store_->put(theirs, error), PutStatus::kStored) << error;
  EXPECT_EQ(store_->put(theirs, error), PutStatus::kDuplicate) << error;
  std::vector<StoredRun> runs = read({mine.app, std::nullopt});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].body, mine.body);
  runs = read({theirs.app, std::nullopt});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].body, "theirs");
}

TEST_P(StoreTest, PingAnswers) {
  std::string error;
  EXPECT_TRUE(store_->ping(error)) << error;
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

// Puts that arrive while a transaction is being written wait for it and then share the next one; each put
// returns only after its own batch was written. The first write is held until ten more puts are queued.
TEST(GroupCommit, PutsArrivingDuringACommitShareTheNextOne) {
  std::mutex mutex;
  std::condition_variable changed;
  bool first_started = false, release_first = false;
  std::vector<size_t> batch_sizes;
  GroupCommit group([&](std::vector<PendingPut*>& batch) {
    std::unique_lock lock(mutex);
    batch_sizes.push_back(batch.size());
    if (batch_sizes.size() == 1) {
      first_started = true;
      changed.notify_all();
      changed.wait(lock, [&] { return release_first; });
    }
    for (PendingPut* p : batch) p->status = PutStatus::kStored;
  });
  constexpr size_t kLater = 10;
  std::vector<StoredRun> runs(kLater + 1);
  std::vector<PendingPut> puts(kLater + 1);
  std::vector<std::thread> threads;
  for (size_t i = 0; i <= kLater; ++i) puts[i].run = &runs[i];
  threads.emplace_back([&] { group.submit(puts[0]); });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return first_started; });
  }
  for (size_t i = 1; i <= kLater; ++i) threads.emplace_back([&, i] { group.submit(puts[i]); });
  group.wait_until_queued(kLater);
  for (size_t i = 0; i <= kLater; ++i) EXPECT_FALSE(puts[i].done);  // nobody returns before its commit
  {
    std::lock_guard lock(mutex);
    release_first = true;
  }
  changed.notify_all();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(batch_sizes, (std::vector<size_t>{1, kLater}));
  EXPECT_EQ(group.batches(), 2u);
  for (const PendingPut& p : puts) EXPECT_EQ(p.status, PutStatus::kStored);
}

// A failed transaction fails every put it held, with the writer's message.
TEST(GroupCommit, AFailedTransactionFailsEveryPutInIt) {
  GroupCommit group([](std::vector<PendingPut*>& batch) {
    for (PendingPut* p : batch) {
      p->status = PutStatus::kError;
      p->error = "disk full";
    }
  });
  StoredRun run;
  PendingPut put;
  put.run = &run;
  group.submit(put);
  EXPECT_TRUE(put.done);
  EXPECT_EQ(put.status, PutStatus::kError);
  EXPECT_EQ(put.error, "disk full");
}

// sampler-analyze --failure-statuses: which stored outcomes are failures.
TEST(FailureRule, DefaultIsEveryNonZeroStatusAndEverySignal) {
  FailureRule rule;
  StoredRun run;
  run.exit_status = 0;
  EXPECT_FALSE(rule.failed(run));
  run.exit_status = 1;
  EXPECT_TRUE(rule.failed(run));
  run.exit_status = 255;
  EXPECT_TRUE(rule.failed(run));
  run.exit_status.reset();
  run.signal = 11;
  EXPECT_TRUE(rule.failed(run));
}

TEST(FailureRule, ListsAndRangesSayWhichStatusesFail) {
  FailureRule rule;
  std::string error;
  ASSERT_TRUE(parse_failure_statuses("2,128-130,255", rule, error)) << error;
  StoredRun run;
  for (int status : {2, 128, 129, 130, 255}) {
    run.exit_status = status;
    EXPECT_TRUE(rule.failed(run)) << status;
  }
  for (int status : {0, 1, 3, 127, 131, 254}) {
    run.exit_status = status;
    EXPECT_FALSE(rule.failed(run)) << status;
  }
  run.exit_status.reset();
  run.signal = 6;
  EXPECT_TRUE(rule.failed(run));  // a fatal signal is a failure whatever the list says
  ASSERT_TRUE(parse_failure_statuses("none", rule, error)) << error;
  run.signal.reset();
  run.exit_status = 1;
  EXPECT_FALSE(rule.failed(run));
  ASSERT_TRUE(parse_failure_statuses("0", rule, error)) << error;
  run.exit_status = 0;
  EXPECT_TRUE(rule.failed(run));
}

TEST(FailureRule, RejectsWhatIsNotAStatusList) {
  FailureRule rule;
  for (const char* bad : {"", "256", "1,,2", "-1", "5-3", "1-", "x", "1;2", "0x10", "1000", "1-2-3", ","}) {
    std::string error;
    EXPECT_FALSE(parse_failure_statuses(bad, rule, error)) << bad;
    EXPECT_NE(error.find("--failure-statuses"), std::string::npos) << bad << ": " << error;
  }
}

// Schema version 4: a run keeps its latest report. An interim report is replaced by one of a higher sequence and
// by the final one; older or equal sequences, and anything after the final report, are acknowledged and dropped.
TEST_P(StoreTest, ARunKeepsItsLatestReport) {
  std::string app = unique_name("app"), error;
  StoredRun run = make_run(app);
  run.exit_status.reset();
  auto put = [&](std::optional<int64_t> sequence, const std::string& body) {
    run.interim_sequence = sequence;
    run.body = body;
    return store_->put(run, error);
  };
  auto stored = [&]() {
    std::vector<StoredRun> runs = read({app, std::nullopt});
    EXPECT_EQ(runs.size(), 1u);
    return runs.empty() ? StoredRun() : runs[0];
  };
  int64_t before = count();
  EXPECT_EQ(put(1, "interim 1"), PutStatus::kStored) << error;
  EXPECT_EQ(stored().interim_sequence, 1);
  EXPECT_EQ(put(3, "interim 3"), PutStatus::kStored) << error;
  EXPECT_EQ(put(2, "interim 2"), PutStatus::kDuplicate) << error;
  EXPECT_EQ(put(3, "interim 3 again"), PutStatus::kDuplicate) << error;
  EXPECT_EQ(stored().body, "interim 3");
  EXPECT_EQ(stored().interim_sequence, 3);
  EXPECT_FALSE(stored().signal.has_value());
  run.signal = 9;
  run.failed = true;
  EXPECT_EQ(put(std::nullopt, "final"), PutStatus::kStored) << error;
  StoredRun final_run = stored();
  EXPECT_EQ(final_run.body, "final");
  EXPECT_FALSE(final_run.interim_sequence.has_value());
  EXPECT_EQ(final_run.signal, 9);
  EXPECT_TRUE(final_run.failed);
  run.signal.reset();
  run.failed = false;
  EXPECT_EQ(put(9, "interim 9, late"), PutStatus::kDuplicate) << error;
  run.exit_status = 0;
  EXPECT_EQ(put(std::nullopt, "final again"), PutStatus::kDuplicate) << error;
  EXPECT_EQ(stored().body, "final");
  EXPECT_EQ(stored().signal, 9);
  EXPECT_EQ(count(), before + 1);
}

// A run whose last report is interim and older than kGoingSeconds is over: a later report of it changes nothing
// (supersedes()), in one batch as across them.
TEST_P(StoreTest, ARunGoneQuietLongerThanTheGoingTimeKeepsItsLastReport) {
  const std::string app = unique_name("app");
  std::string error;
  StoredRun run = make_run(app);
  run.exit_status.reset();
  run.interim_sequence = 1;
  run.received = 1000000;
  run.body = "interim 1";
  ASSERT_EQ(store_->put(run, error), PutStatus::kStored) << error;
  run.interim_sequence = 2;
  run.received += kGoingSeconds;  // just within: replaces it
  run.body = "interim 2";
  ASSERT_EQ(store_->put(run, error), PutStatus::kStored) << error;
  run.interim_sequence.reset();
  run.exit_status = 0;
  run.received += kGoingSeconds + 1;
  run.body = "final, too late";
  EXPECT_EQ(store_->put(run, error), PutStatus::kDuplicate) << error;
  std::vector<StoredRun> runs = read({app, std::nullopt});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].body, "interim 2");
  EXPECT_EQ(runs[0].interim_sequence, 2);
  StoredRun stored = runs[0], late = run;
  EXPECT_FALSE(supersedes(late, stored));
  late.received = stored.received + kGoingSeconds;
  EXPECT_TRUE(supersedes(late, stored));
  EXPECT_TRUE(going(stored.received, stored.received + kGoingSeconds));
  EXPECT_FALSE(going(stored.received, stored.received + kGoingSeconds + 1));
}

// count_days() for a reader that keeps the counts (the console's application page): the runs after an id and
// those of `also`; each run still going in a row of its own, with its id; the runs up to `settled` apart.
TEST_P(StoreTest, CountsTheDaysOfTheRunsAfterOneApartFromTheSettled) {
  const std::string app = unique_name("app");
  constexpr int64_t kDay = 20000, kNow = kDay * 86400 + 3600;
  std::string error;
  auto put = [&](std::optional<int64_t> sequence, int64_t received, std::string run_id = "") {
    StoredRun run = make_run(app, "1.0");
    if (!run_id.empty()) run.run_id = run_id;
    run.received = received;
    run.interim_sequence = sequence;
    if (sequence) run.exit_status.reset();
    EXPECT_EQ(store_->put(run, error), PutStatus::kStored) << error;
    return run.run_id;
  };
  put(std::nullopt, kNow - 10);
  const std::string going = put(1, kNow - 5);
  // (kNow - kGoingSeconds - kClockSlack - 1 falls on the day 8 days before kNow's.)
  put(1, kNow - kGoingSeconds - kClockSlack - 1);  // going no more
  put(std::nullopt, kNow);
  std::vector<StoredRun> all = read({app, std::nullopt});
  ASSERT_EQ(all.size(), 4u);
  auto index = [&all](int64_t id) {  // the run's place among the four, by its id
    for (size_t r = 0; r < all.size(); ++r) {
      if (all[r].stored_id == id) return std::to_string(r);
    }
    return std::string("?");
  };
  auto count = [&](int64_t after, std::vector<int64_t> also, int64_t settled) {
    DaysQuery query{app, after, std::move(also), settled, kNow};
    std::vector<DayCounts> days;
    EXPECT_TRUE(store_->count_days(query, days, error)) << error;
    std::vector<std::string> out;
    for (const DayCounts& d : days) {
      out.push_back(d.version + " " + std::to_string(d.day - kDay) + " " + std::to_string(d.runs) + " going " +
                    (d.going == 0 ? "-" : index(d.going)) + " settled " + std::to_string(d.settled) + " " +
                    index(d.first_stored) + "-" + index(d.last_stored));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  // Every run: the first two settled, the run going in a row of its own; the one quiet too long is over.
  EXPECT_EQ(count(0, {}, all[1].stored_id),
            (std::vector<std::string>{"1.0 -8 1 going - settled 0 2-2", "1.0 0 1 going - settled 0 3-3",
                                      "1.0 0 1 going - settled 1 0-0", "1.0 0 1 going 1 settled 1 1-1"}));
  // After the second, with the run going, all settled.
  EXPECT_EQ(count(all[1].stored_id, {all[1].stored_id}, all[3].stored_id),
            (std::vector<std::string>{"1.0 -8 1 going - settled 1 2-2", "1.0 0 1 going - settled 1 3-3",
                                      "1.0 0 1 going 1 settled 1 1-1"}));
  // Its final report came: over, counted with the others.
  put(std::nullopt, kNow, going);
  EXPECT_EQ(count(all[3].stored_id, {all[1].stored_id}, all[3].stored_id),
            (std::vector<std::string>{"1.0 0 1 going - settled 1 1-1"}));
  EXPECT_EQ(count(0, {}, 0), (std::vector<std::string>{"1.0 -8 1 going - settled 0 2-2",
                                                       "1.0 0 3 going - settled 0 0-3"}));
}

// What a reader that keeps runs between reads needs (the console, store.h ReadPosition): each run's id in the order
// runs were stored, kept when its report is replaced; the runs after an id; and where a read stood, so that a run a
// transaction still running may commit with a lower id is waited for.
TEST_P(StoreTest, ReadsTheRunsAfterOneAndWhereTheReadStood) {
  const std::string app = unique_name("app");
  std::string error;
  StoredRun going = make_run(app);
  going.exit_status.reset();
  going.interim_sequence = 1;
  for (StoredRun run : {make_run(app), going, make_run(app)}) {
    ASSERT_EQ(store_->put(run, error), PutStatus::kStored) << error;
  }
  std::vector<StoredRun> all = read({app, std::nullopt});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_LT(all[0].stored_id, all[1].stored_id);
  EXPECT_LT(all[1].stored_id, all[2].stored_id);
  Query after{app, std::nullopt};
  after.after = all[0].stored_id;
  std::vector<StoredRun> later = read(after);
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0].run_id, all[1].run_id);
  // The interim report replaced by the final one: the same id, so a reader that read past it must read it again.
  going.interim_sequence.reset();
  going.exit_status = 0;
  ASSERT_EQ(store_->put(going, error), PutStatus::kStored) << error;
  after.after = all[1].stored_id;
  EXPECT_EQ(read(after).size(), 1u);
  after.after = all[0].stored_id;
  later = read(after);
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0].stored_id, all[1].stored_id);
  EXPECT_FALSE(later[0].interim_sequence.has_value());
  // A run kept while it was going, asked for again by its id beside the runs after the last kept.
  after.after = all[2].stored_id;
  after.also = {all[1].stored_id};
  later = read(after);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].run_id, all[1].run_id);
  EXPECT_FALSE(later[0].interim_sequence.has_value());
  after.after = all[1].stored_id;
  after.also = {all[0].stored_id};
  later = read(after);
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0].run_id, all[0].run_id);
  EXPECT_EQ(later[1].run_id, all[2].run_id);

  ReadPosition first, second, third;
  Query positioned{app, std::nullopt};
  positioned.position = &first;
  EXPECT_EQ(read(positioned).size(), 3u);
  if (GetParam() == "sqlite") {  // one writer at a time, in id order: a read sees every run up to its last
    EXPECT_EQ(first.reader, 0u);
    positioned.position = &second;
    read(positioned);
    EXPECT_TRUE(second.sees_all_before(first));
    return;
  }
  EXPECT_GT(first.reader, 0u);
  EXPECT_LE(first.oldest_running, first.reader);
  // A transaction that began before a read and still runs (it may hold a run id it has not committed yet): reads
  // do not see all before it until it ends.
  PGconn* writer = PQconnectdb(url_.c_str());
  PGresult* began = PQexec(writer, "BEGIN; SELECT pg_current_xact_id()");
  ASSERT_EQ(PQresultStatus(began), PGRES_TUPLES_OK) << PQerrorMessage(writer);
  PQclear(began);
  positioned.position = &first;
  read(positioned);
  positioned.position = &second;
  read(positioned);
  EXPECT_FALSE(second.sees_all_before(first));
  ReadPosition now;
  ASSERT_TRUE(store_->position(now, error)) << error;
  EXPECT_FALSE(now.sees_all_before(first));
  PQclear(PQexec(writer, "COMMIT"));
  PQfinish(writer);
  ASSERT_TRUE(store_->position(now, error)) << error;
  EXPECT_TRUE(now.sees_all_before(first));
  positioned.position = &third;
  read(positioned);
  EXPECT_TRUE(third.sees_all_before(first));
}

// The symbols' stamp changes when a file is stored or replaced, not when the same bytes come again.
TEST_P(StoreTest, SymbolsStampChangesWithTheFiles) {
  const std::string app = unique_name("app");
  std::string error, empty, stored, again, replaced, other;
  ASSERT_TRUE(store_->symbols_stamp(app, empty, error)) << error;
  SymbolFile file{unique_name("b1d"), "gsym", app, 0, "GSYM first"};
  ASSERT_EQ(store_->put_symbols(file, false, error), PutStatus::kStored) << error;
  ASSERT_TRUE(store_->symbols_stamp(app, stored, error)) << error;
  EXPECT_NE(stored, empty);
  ASSERT_EQ(store_->put_symbols(file, false, error), PutStatus::kDuplicate) << error;
  ASSERT_TRUE(store_->symbols_stamp(app, again, error)) << error;
  EXPECT_EQ(again, stored);
  file.bytes = "GSYM second, longer";
  ASSERT_EQ(store_->put_symbols(file, true, error), PutStatus::kStored) << error;
  ASSERT_TRUE(store_->symbols_stamp(app, replaced, error)) << error;
  EXPECT_NE(replaced, stored);
  ASSERT_TRUE(store_->symbols_stamp(unique_name("other"), other, error)) << error;
  EXPECT_EQ(other, empty);
}

// Reports of the same runs arriving at once share batches (group commit): whatever the batches, every run ends
// with its final report, and nothing fails.
TEST_P(StoreTest, ConcurrentReportsOfOneRunKeepTheFinal) {
  std::string app = unique_name("app");
  constexpr int kRuns = 20, kInterims = 6;
  std::vector<StoredRun> reports;
  for (int r = 0; r < kRuns; ++r) {
    StoredRun run = make_run(app);
    for (int sequence = 1; sequence <= kInterims + 1; ++sequence) {
      StoredRun report = run;
      if (sequence <= kInterims) {
        report.exit_status.reset();
        report.interim_sequence = sequence;
      }
      report.body = "report " + std::to_string(sequence);
      reports.push_back(report);
    }
  }
  std::shuffle(reports.begin(), reports.end(), std::mt19937(42));
  std::atomic<size_t> next{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (size_t i; (i = next++) < reports.size();) {
        std::string error;
        if (store_->put(reports[i], error) == PutStatus::kError) ++errors;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
  std::vector<StoredRun> runs = read({app, std::nullopt});
  ASSERT_EQ(runs.size(), static_cast<size_t>(kRuns));
  for (const StoredRun& run : runs) {
    EXPECT_FALSE(run.interim_sequence.has_value()) << run.run_id;
    EXPECT_EQ(run.body, "report " + std::to_string(kInterims + 1)) << run.run_id;
    EXPECT_EQ(run.exit_status, 0) << run.run_id;
  }
}

// sampler-analyze --database leaves out the runs whose outcome is unknown unless --include-unfinished.
TEST(FailureRule, UnfinishedRunsOnlyWhenAskedFor) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / unique_name("store-test");
  std::filesystem::create_directories(dir);
  std::string error;
  std::unique_ptr<Store> store = open_store("sqlite:" + (dir / "reports.db").string(), error);
  ASSERT_NE(store, nullptr) << error;
  StoredRun finished, unfinished;
  finished.run_id = "finished";
  finished.app = unfinished.app = "app";
  finished.exit_status = 0;
  unfinished.run_id = "unfinished";
  unfinished.interim_sequence = 4;
  ASSERT_EQ(store->put(finished, error), PutStatus::kStored) << error;
  ASSERT_EQ(store->put(unfinished, error), PutStatus::kStored) << error;
  std::string labels = (dir / "labels").string();
  EXPECT_EQ(write_runs(*store, {"app", std::nullopt}, (dir / "some").string(), labels, error, {}, {}, false), 1)
      << error;
  EXPECT_FALSE(std::filesystem::exists(dir / "some" / "unfinished.report"));
  EXPECT_EQ(write_runs(*store, {"app", std::nullopt}, (dir / "all").string(), labels, error, {}, {}, true), 2)
      << error;
  std::ifstream in(labels);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, (dir / "all").string() + "/finished.report\tsuccess\n" + (dir / "all").string() +
                      "/unfinished.report\tsuccess\n");
  std::filesystem::remove_all(dir);
}

// The labels write_runs() writes follow the rule.
TEST(FailureRule, LabelsFollowTheRule) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / unique_name("store-test");
  std::filesystem::create_directories(dir);
  std::string error;
  std::unique_ptr<Store> store = open_store("sqlite:" + (dir / "reports.db").string(), error);
  ASSERT_NE(store, nullptr) << error;
  for (int status : {0, 1, 2}) {
    StoredRun run;
    run.run_id = "run" + std::to_string(status);
    run.app = "app";
    run.exit_status = status;
    run.failed = status != 0;
    run.body = "<report id=\"outcome\">\n</report>\n";
    ASSERT_EQ(store->put(run, error), PutStatus::kStored) << error;
  }
  FailureRule rule;
  ASSERT_TRUE(parse_failure_statuses("2", rule, error));
  std::string runs = (dir / "runs").string(), labels = (dir / "labels").string();
  ASSERT_EQ(write_runs(*store, {"app", std::nullopt}, runs, labels, error, rule), 3) << error;
  std::ifstream in(labels);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, runs + "/run0.report\tsuccess\n" + runs + "/run1.report\tsuccess\n" + runs +
                      "/run2.report\tfailure\n");
  std::filesystem::remove_all(dir);
}

// One run the database refuses fails alone, not the runs that shared its batch. A first put holds the writer
// until three more are queued, so that those three make one batch.
TEST(GroupCommit, ABadRunDoesNotFailItsBatch) {
  std::mutex mutex;
  std::condition_variable changed;
  bool first_started = false, release_first = false;
  std::vector<size_t> batch_sizes;
  StoredRun blocker_run;
  PendingPut blocker;
  blocker.run = &blocker_run;
  GroupCommit group([&](std::vector<PendingPut*>& batch) {
    std::unique_lock lock(mutex);
    batch_sizes.push_back(batch.size());
    if (batch_sizes.size() == 1) {
      first_started = true;
      changed.notify_all();
      changed.wait(lock, [&] { return release_first; });
    }
    // The database refuses a transaction that holds the run "bad".
    bool poisoned = std::any_of(batch.begin(), batch.end(), [](PendingPut* p) { return p->run->run_id == "bad"; });
    for (PendingPut* p : batch) {
      p->status = poisoned ? PutStatus::kError : PutStatus::kStored;
      if (poisoned) p->error = "invalid byte sequence";
    }
  });
  std::vector<StoredRun> runs(3);
  runs[0].run_id = "good1";
  runs[1].run_id = "bad";
  runs[2].run_id = "good2";
  std::vector<PendingPut> puts(3);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { group.submit(blocker); });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return first_started; });
  }
  for (size_t i = 0; i < 3; ++i) {
    puts[i].run = &runs[i];
    threads.emplace_back([&, i] { group.submit(puts[i]); });
  }
  group.wait_until_queued(3);
  {
    std::lock_guard lock(mutex);
    release_first = true;
  }
  changed.notify_all();
  for (std::thread& t : threads) t.join();
  // The blocker alone, the three together (refused), then each of the three alone.
  EXPECT_EQ(batch_sizes, (std::vector<size_t>{1, 3, 1, 1, 1}));
  EXPECT_EQ(blocker.status, PutStatus::kStored);
  EXPECT_EQ(puts[0].status, PutStatus::kStored);
  EXPECT_EQ(puts[1].status, PutStatus::kError);
  EXPECT_EQ(puts[1].error, "invalid byte sequence");
  EXPECT_EQ(puts[2].status, PutStatus::kStored);
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
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  int runs = 0;
  EXPECT_TRUE(store->for_each({"old", std::nullopt}, [&](const StoredRun&) { return ++runs, true; }, error)) << error;
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(store->put_symbols({"ab", "gsym", "old", 0, "GSYM"}, false, error), PutStatus::kStored) << error;
  store.reset();
  std::filesystem::remove_all(dir);
}

// A database of schema version 2 (run ids and symbols keyed without the application) is migrated to 3: its runs
// and symbol files stay, under the application that stored them, and the keys become per application.
TEST(SqliteStore, MigratesAVersionTwoDatabase) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / unique_name("store-test");
  std::filesystem::create_directories(dir);
  std::string path = (dir / "reports.db").string(), error;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // Version 2's schema exactly as migrations 0 -> 1 -> 2 create it, with one run and one symbol file.
  const char* v2 =
      "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (2);"
      "CREATE TABLE runs (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, app TEXT NOT NULL, version TEXT NOT "
      "NULL, received INTEGER NOT NULL, exit_status INTEGER, signal INTEGER, failed INTEGER NOT NULL, "
      "crash_signature TEXT NOT NULL, body_size INTEGER NOT NULL, body BLOB NOT NULL);"
      "CREATE INDEX runs_app_version ON runs(app, version); CREATE INDEX runs_app_crash ON runs(app, crash_signature);"
      "CREATE TABLE symbols (build_id TEXT NOT NULL, kind TEXT NOT NULL, app TEXT NOT NULL, received INTEGER NOT "
      "NULL, body_size INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (build_id, kind));";
  ASSERT_EQ(sqlite3_exec(db, v2, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string body = compress_body("<report id=\"samples\">\n</report>\n"), gsym = compress_body("GSYM");
  sqlite3_stmt* insert = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO runs (run_id, app, version, received, failed, crash_signature, "
                                   "body_size, body) VALUES ('r1', 'old', '1', 1, 0, '', 32, ?1)",
                               -1, &insert, nullptr),
            SQLITE_OK);
  sqlite3_bind_blob(insert, 1, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE);
  sqlite3_finalize(insert);
  ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO symbols VALUES ('ab', 'gsym', 'old', 1, 4, ?1)", -1, &insert, nullptr),
            SQLITE_OK);
  sqlite3_bind_blob(insert, 1, gsym.data(), static_cast<int>(gsym.size()), SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE);
  sqlite3_finalize(insert);
  sqlite3_close(db);

  std::unique_ptr<Store> store = open_store("sqlite:" + path, error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  std::vector<std::string> bodies;
  EXPECT_TRUE(store->for_each({"old", std::nullopt}, [&](const StoredRun& run) {
    bodies.push_back(run.body);
    return true;
  }, error)) << error;
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0], "<report id=\"samples\">\n</report>\n");
  std::string bytes;
  ASSERT_EQ(store->get_symbols("old", "ab", "gsym", bytes, error), GetStatus::kFound) << error;
  EXPECT_EQ(bytes, "GSYM");
  EXPECT_EQ(store->get_symbols("new", "ab", "gsym", bytes, error), GetStatus::kMissing) << error;
  // Migrated through schema 5 (plans) and 6 (summaries): plans can be stored.
  std::string id;
  EXPECT_EQ(store->put_plan({"old", "p", 0, "sampler-plan\t1\nid\tp\n"}, "1", error), PutStatus::kStored) << error;
  ASSERT_EQ(store->current_plan("old", "1", id, error), GetStatus::kFound) << error;
  EXPECT_EQ(id, "p");
  StoredRun again;
  again.run_id = "r1";
  again.app = "new";
  again.version = "1";
  again.body = "x";
  EXPECT_EQ(store->put(again, error), PutStatus::kStored) << error;
  again.app = "old";
  EXPECT_EQ(store->put(again, error), PutStatus::kDuplicate) << error;
  EXPECT_EQ(store->put_symbols({"ab", "gsym", "new", 0, "other"}, false, error), PutStatus::kStored) << error;
  store.reset();
  std::filesystem::remove_all(dir);
}

// Schema version 4 exactly as migrations 0 -> ... -> 4 leave it, on either store (the statements both take).
constexpr const char* kVersionFourRuns =
    "CREATE TABLE runs (id %ID%, run_id TEXT NOT NULL, app TEXT NOT NULL, version TEXT NOT NULL, received "
    "%INT% NOT NULL, exit_status INTEGER, signal INTEGER, failed %BOOL% NOT NULL, crash_signature TEXT NOT NULL, "
    "body_size %INT% NOT NULL, body %BLOB% NOT NULL, interim_sequence %INT%, UNIQUE (app, run_id));"
    "CREATE INDEX runs_app_version ON runs (app, version); CREATE INDEX runs_app_crash ON runs (app, crash_signature);"
    "CREATE TABLE symbols (build_id TEXT NOT NULL, kind TEXT NOT NULL, app TEXT NOT NULL, received %INT% NOT NULL, "
    "body_size %INT% NOT NULL, body %BLOB% NOT NULL, PRIMARY KEY (app, build_id, kind));"
    "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (4);";

// A database of schema version 4 with runs in it (a final one and an interim one) is migrated to 5: the runs
// stay and read with no summary (their bodies instead, for the console to summarize), fill_summaries() gives
// them one, and a later report of the run brings its own summary, which a late fill does not overwrite.
TEST_P(StoreTest, MigratesAVersionFourDatabaseWithRuns) {
  const std::string report = "<report id=\"samples\">\n</report>\n", body = compress_body(report);
  const std::string rows =
      "INSERT INTO runs (run_id, app, version, received, failed, crash_signature, body_size, body, "
      "interim_sequence) VALUES ('r1', 'old', '1', 1, %FALSE%, '', " + std::to_string(report.size()) + ", " +
      blob(body) + ", NULL), ('r2', 'old', '1', 2, %FALSE%, '', " + std::to_string(report.size()) + ", " +
      blob(body) + ", 1);";
  const std::string url = old_database(kVersionFourRuns + rows, "v4");
  ASSERT_FALSE(url.empty());
  std::string error;
  std::unique_ptr<Store> store = open_store(url, error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  auto summaries = [&store] { return runs_of(*store, "old", true, false); };
  const std::string old_body = "<report id=\"samples\">\n</report>\n";
  EXPECT_EQ(summaries(), (std::vector<std::string>{"r1::" + old_body, "r2::" + old_body}));
  ASSERT_TRUE(store->fill_summaries("old", {{"r1", std::string("S1\0x", 4)}}, error)) << error;
  EXPECT_EQ(summaries(), (std::vector<std::string>{"r1:" + std::string("S1\0x", 4) + ":no body", "r2::" + old_body}));
  // r2's final report replaces its interim one, with a summary of its own; a fill made from the old body (a page
  // that read before the report came) leaves it.
  StoredRun final_report = make_run("old", "1");
  final_report.run_id = "r2";
  final_report.received = 3;  // within store::kGoingSeconds of its interim report's
  final_report.body = "final";
  final_report.summary = "S2";
  EXPECT_EQ(store->put(final_report, error), PutStatus::kStored) << error;
  ASSERT_TRUE(store->fill_summaries("old", {{"r2", "stale"}, {"r1", "stale"}}, error)) << error;
  EXPECT_EQ(summaries(), (std::vector<std::string>{"r1:" + std::string("S1\0x", 4) + ":no body", "r2:S2:no body"}));
  store.reset();
}

// A database of schema version 6 (bodies in the runs table, summaries beside them) is migrated to 7: on PostgreSQL
// the bodies move to run_bodies and the runs table loses its body column; every run reads back with its body and
// summary, and a later report of a migrated run replaces its body there.
TEST_P(StoreTest, MigratesAVersionSixDatabaseWithRuns) {
  const std::string schema_sql = std::string(kVersionFourRuns) +
                           "CREATE TABLE plans (app TEXT NOT NULL, plan_id TEXT NOT NULL, received %INT% NOT NULL, "
                           "body_size %INT% NOT NULL, body %BLOB% NOT NULL, PRIMARY KEY (app, plan_id));"
                           "CREATE TABLE current_plans (app TEXT NOT NULL, version TEXT NOT NULL, plan_id TEXT NOT "
                           "NULL, since %INT% NOT NULL, PRIMARY KEY (app, version));"
                           "ALTER TABLE runs ADD COLUMN summary %BLOB%; UPDATE schema_version SET version = 6;";
  const std::string first = "<report id=\"samples\">\n1\n</report>\n";
  const std::string second = "<report id=\"samples\">\n2\n</report>\n";
  const std::string rows =
      "INSERT INTO runs (run_id, app, version, received, failed, crash_signature, body_size, body, "
      "interim_sequence, summary) VALUES ('r1', 'old', '1', 1, %FALSE%, '', " +
      std::to_string(first.size()) + ", " + blob(compress_body(first)) + ", NULL, " + blob("S1") + "), ('r2', " +
      "'old', '1', 2, %FALSE%, '', " + std::to_string(second.size()) + ", " +
      blob(compress_body(second)) + ", 1, NULL);";
  const std::string url = old_database(schema_sql + rows, "v6");
  ASSERT_FALSE(url.empty());
  std::string error;
  std::unique_ptr<Store> store = open_store(url, error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  auto runs = [&store](bool summaries) { return runs_of(*store, "old", summaries, true); };
  EXPECT_EQ(runs(false), (std::vector<std::string>{"r1::" + first, "r2::" + second}));
  EXPECT_EQ(runs(true), (std::vector<std::string>{"r1:S1:no body", "r2::" + second}));
  // r2's final report replaces its interim one, body and summary.
  StoredRun final_report = make_run("old", "1");
  final_report.run_id = "r2";
  final_report.received = 3;  // within store::kGoingSeconds of its interim report's
  final_report.body = "final";
  final_report.summary = "S2";
  final_report.counts = std::vector<SectionCounts>{{"", {}, {}}};
  EXPECT_EQ(store->put(final_report, error), PutStatus::kStored) << error;
  EXPECT_EQ(runs(false), (std::vector<std::string>{"r1::" + first, "r2::final"}));
  EXPECT_EQ(runs(true), (std::vector<std::string>{"r1:S1:no body", "r2:S2:no body"}));
  if (store->keeps_counts()) {
    // The migrated runs are not counted; the final report that replaced r2's interim one is.
    std::vector<std::string> counted;
    Query query{"old", std::nullopt};
    query.summaries = true;
    EXPECT_TRUE(store->for_each(query, [&](const StoredRun& run) {
      counted.push_back(run.run_id + (run.counted ? " counted" : " not counted"));
      return true;
    }, error)) << error;
    EXPECT_EQ(counted, (std::vector<std::string>{"r1 not counted", "r2 counted"}));
    std::vector<SectionTotals> totals;
    ASSERT_TRUE(store->sum_counts({"old"}, totals, error)) << error;
    ASSERT_EQ(totals.size(), 1u);
    EXPECT_EQ(totals[0].runs, 1u);
    EXPECT_FALSE(totals[0].failed);
  }
  store.reset();
}

// A run's summary follows its latest report: a later interim report's replaces it, an earlier one's does not.
TEST_P(StoreTest, SummariesFollowTheLatestReport) {
  const std::string app = unique_name("summaries");
  StoredRun run = make_run(app);
  run.exit_status.reset();
  run.interim_sequence = 2;
  run.summary = "two";
  std::string error;
  ASSERT_EQ(store_->put(run, error), PutStatus::kStored) << error;
  run.interim_sequence = 1;
  run.summary = "one";
  EXPECT_EQ(store_->put(run, error), PutStatus::kDuplicate) << error;
  run.interim_sequence = 3;
  run.summary = "three";
  EXPECT_EQ(store_->put(run, error), PutStatus::kStored) << error;
  Query query{app, std::nullopt};
  query.summaries = true;
  std::vector<StoredRun> runs = read(query);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].summary, "three");
  EXPECT_TRUE(runs[0].stored_body.empty());  // a summary instead of the body
  EXPECT_TRUE(read({app, std::nullopt})[0].summary.empty());  // asked for bodies: no summary
}

// Counts summed in the database (PostgreSQL): a final report is counted once, when it is stored; an interim one
// not, until its final report replaces it; a duplicate or a late interim report changes nothing; a release, the
// failing runs of some crash signatures, and runs stored uncounted (add_counts()) are summed as they should be.
TEST_P(StoreTest, CountsFollowTheFinalReports) {
  if (!store_->keeps_counts()) {
    std::string error;
    std::vector<SectionTotals> totals;
    EXPECT_FALSE(store_->sum_counts({"any"}, totals, error));
    return;
  }
  const std::string app = unique_name("counts");
  auto with_counts = [&](std::string version, std::vector<uint32_t> sites, std::vector<uint32_t> predicates) {
    StoredRun run = make_run(app, std::move(version));
    run.counts = std::vector<SectionCounts>{{"", {}, {}}, {"unit", std::move(sites), std::move(predicates)}};
    return run;
  };
  std::string error;
  StoredRun a = with_counts("1", {0, 1}, {1});
  ASSERT_EQ(store_->put(a, error), PutStatus::kStored) << error;
  EXPECT_EQ(store_->put(a, error), PutStatus::kDuplicate) << error;  // not counted again
  StoredRun b = with_counts("2", {1, 2}, {3, 4});
  b.exit_status.reset();
  b.signal = 11;
  b.failed = true;
  b.crash_signature = "SIGSEGV:1";
  ASSERT_EQ(store_->put(b, error), PutStatus::kStored) << error;
  // c: an interim report (not counted), a later one, then its final report (counted once).
  StoredRun c = with_counts("2", {0}, {0});
  c.exit_status.reset();
  c.interim_sequence = 1;
  ASSERT_EQ(store_->put(c, error), PutStatus::kStored) << error;
  c.interim_sequence = 2;
  c.counts = std::vector<SectionCounts>{{"", {}, {}}, {"unit", {2}, {5}}};
  ASSERT_EQ(store_->put(c, error), PutStatus::kStored) << error;
  // The rows as a reader keeps them (the console): each time only those changed since the highest sequence number
  // it saw (no write is under way here), replacing the kept ones; their sum is the database's, each time.
  std::map<std::tuple<std::string, std::string, bool, std::string, int32_t>, CountsRow> kept;
  int64_t after = 0;
  auto sum = [&](CountsQuery query) {
    query.app = app;
    std::vector<SectionTotals> totals;
    EXPECT_TRUE(store_->sum_counts(query, totals, error)) << error;
    std::vector<CountsRow> changed, all;
    EXPECT_TRUE(store_->changed_counts(app, after, changed, nullptr, error)) << error;
    EXPECT_TRUE(store_->changed_counts(app, 0, all, nullptr, error)) << error;
    EXPECT_LE(changed.size(), all.size());
    for (CountsRow& row : changed) {
      EXPECT_GT(row.sequence, after);
      after = std::max(after, row.sequence);
      kept[{row.version, row.crash_signature, row.failed, row.key, row.shard}] = std::move(row);
    }
    std::vector<const CountsRow*> rows;
    for (const auto& entry : kept) rows.push_back(&entry.second);
    std::vector<const CountsRow*> every;
    for (const CountsRow& row : all) every.push_back(&row);
    auto same = [&totals](const std::vector<SectionTotals>& summed) {
      EXPECT_EQ(summed.size(), totals.size());
      for (size_t i = 0; i < summed.size() && i < totals.size(); ++i) {
        EXPECT_EQ(summed[i].failed, totals[i].failed);
        EXPECT_EQ(summed[i].key, totals[i].key);
        EXPECT_EQ(summed[i].runs, totals[i].runs);
        EXPECT_EQ(summed[i].sites, totals[i].sites);
        EXPECT_EQ(summed[i].predicates, totals[i].predicates);
      }
    };
    same(sum_rows(rows, query));
    same(sum_rows(every, query));
    std::vector<std::string> out;
    auto list = [](const std::vector<uint64_t>& v) {
      std::string text;
      for (uint64_t x : v) text += std::to_string(x);
      return text;
    };
    for (const SectionTotals& t : totals) {
      out.push_back(std::string(t.failed ? "F " : "S ") + (t.key.empty() ? "run" : t.key) + " " +
                    std::to_string(t.runs) + " " + list(t.sites) + " " + list(t.predicates));
    }
    return out;
  };
  EXPECT_EQ(sum({}), (std::vector<std::string>{"S run 1  ", "S unit 1 11 01", "F run 1  ", "F unit 1 011 00011"}))
      << "a counted once, b, and c not yet";
  c.interim_sequence = 1;  // older than the stored one: a duplicate
  EXPECT_EQ(store_->put(c, error), PutStatus::kDuplicate) << error;
  c.interim_sequence.reset();
  c.exit_status = 1;
  c.failed = true;
  c.counts = std::vector<SectionCounts>{{"", {}, {}}, {"unit", {0, 2}, {0, 5}}};
  ASSERT_EQ(store_->put(c, error), PutStatus::kStored) << error;
  EXPECT_EQ(store_->put(c, error), PutStatus::kDuplicate) << error;
  const std::vector<std::string> all = {"S run 1  ", "S unit 1 11 01", "F run 2  ", "F unit 2 112 100111"};
  EXPECT_EQ(sum({}), all);
  CountsQuery release;
  release.version = "2";
  EXPECT_EQ(sum(release), (std::vector<std::string>{"F run 2  ", "F unit 2 112 100111"}));
  CountsQuery group;
  group.failing_signatures = std::vector<std::string>{"SIGSEGV:1"};
  EXPECT_EQ(sum(group), (std::vector<std::string>{"S run 1  ", "S unit 1 11 01", "F run 1  ", "F unit 1 011 00011"}));
  Query query{app, std::nullopt};
  query.summaries = true;
  for (const StoredRun& run : read(query)) EXPECT_TRUE(run.counted) << run.run_id;
  // A final run stored without counts (as before they were kept) is added once by add_counts().
  StoredRun d = make_run(app, "1");
  ASSERT_EQ(store_->put(d, error), PutStatus::kStored) << error;
  std::vector<StoredRun> runs = read(query);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_FALSE(runs[3].counted);
  const std::vector<std::pair<std::string, std::vector<SectionCounts>>> late = {
      {d.run_id, {{"", {}, {}}, {"unit", {1}, {2}}}}, {a.run_id, {{"", {}, {}}}}};
  ASSERT_TRUE(store_->add_counts(app, late, error)) << error;
  ASSERT_TRUE(store_->add_counts(app, late, error)) << error;  // counted already: nothing added
  EXPECT_EQ(sum({}), (std::vector<std::string>{"S run 2  ", "S unit 2 12 011", "F run 2  ", "F unit 2 112 100111"}));
  EXPECT_TRUE(read(query)[3].counted);
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
