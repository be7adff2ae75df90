// The SQLite store: one file, no set-up (the default). One connection for writing, serialised by a mutex: SQLite
// takes one writer at a time anyway, and puts that arrive together share one transaction (group_commit.h). Each
// for_each() reads on a connection of its own: WAL mode lets readers (the console's pages, export, the analysis
// in other processes) read while the collector writes, so that a long scan never holds up uploads.
// synchronous=NORMAL in WAL mode keeps every committed transaction across a crash of the process (kill -9);
// only a power cut can lose the last ones, which docs/collection.md says (FULL is a setting away).
#include <sqlite3.h>

#include <ctime>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>

#include "group_commit.h"
#include "store_impl.h"

namespace sampler::store {
namespace {

// Schema migrations: entry i takes the database from version i to i + 1. Never edit a released entry; append.
constexpr const char* kMigrations[] = {
    // 0 -> 1: runs with their queryable columns; the body compressed (compress_body), its size beside it.
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id TEXT NOT NULL UNIQUE,"
    "  app TEXT NOT NULL,"
    "  version TEXT NOT NULL,"
    "  received INTEGER NOT NULL,"
    "  exit_status INTEGER,"
    "  signal INTEGER,"
    "  failed INTEGER NOT NULL,"
    "  crash_signature TEXT NOT NULL,"
    "  body_size INTEGER NOT NULL,"
    "  body BLOB NOT NULL);"
    "CREATE INDEX runs_app_version ON runs(app, version);"
    "CREATE INDEX runs_app_crash ON runs(app, crash_signature);",
    // 1 -> 2: symbol files by build ID, compressed like bodies.
    "CREATE TABLE symbols ("
    "  build_id TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  app TEXT NOT NULL,"
    "  received INTEGER NOT NULL,"
    "  body_size INTEGER NOT NULL,"
    "  body BLOB NOT NULL,"
    "  PRIMARY KEY (build_id, kind));",
    // 2 -> 3: run ids and symbol files per application, so that one application's key never reaches another's
    // runs or symbols. SQLite cannot change a table's keys in place: both tables are copied once.
    "CREATE TABLE runs_v3 ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id TEXT NOT NULL,"
    "  app TEXT NOT NULL,"
    "  version TEXT NOT NULL,"
    "  received INTEGER NOT NULL,"
    "  exit_status INTEGER,"
    "  signal INTEGER,"
    "  failed INTEGER NOT NULL,"
    "  crash_signature TEXT NOT NULL,"
    "  body_size INTEGER NOT NULL,"
    "  body BLOB NOT NULL,"
    "  UNIQUE (app, run_id));"
    "INSERT INTO runs_v3 SELECT id, run_id, app, version, received, exit_status, signal, failed, crash_signature, "
    "  body_size, body FROM runs;"
    "DROP TABLE runs;"
    "ALTER TABLE runs_v3 RENAME TO runs;"
    "CREATE INDEX runs_app_version ON runs(app, version);"
    "CREATE INDEX runs_app_crash ON runs(app, crash_signature);"
    "CREATE TABLE symbols_v3 ("
    "  build_id TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  app TEXT NOT NULL,"
    "  received INTEGER NOT NULL,"
    "  body_size INTEGER NOT NULL,"
    "  body BLOB NOT NULL,"
    "  PRIMARY KEY (app, build_id, kind));"
    "INSERT INTO symbols_v3 SELECT build_id, kind, app, received, body_size, body FROM symbols;"
    "DROP TABLE symbols;"
    "ALTER TABLE symbols_v3 RENAME TO symbols;",
    // 3 -> 4: a run's interim reports (the latest kept until the final one comes): NULL for a final report.
    "ALTER TABLE runs ADD COLUMN interim_sequence INTEGER;",
    // 4 -> 5: sampling plans, by application and plan id (compressed like bodies), and the current plan of each
    // application and release.
    "CREATE TABLE plans ("
    "  app TEXT NOT NULL,"
    "  plan_id TEXT NOT NULL,"
    "  received INTEGER NOT NULL,"
    "  body_size INTEGER NOT NULL,"
    "  body BLOB NOT NULL,"
    "  PRIMARY KEY (app, plan_id));"
    "CREATE TABLE current_plans ("
    "  app TEXT NOT NULL,"
    "  version TEXT NOT NULL,"
    "  plan_id TEXT NOT NULL,"
    "  since INTEGER NOT NULL,"
    "  PRIMARY KEY (app, version));",
    // 5 -> 6: each run's summary (store.h, Run::summary); NULL for the runs stored before, until the console
    // fills it (fill_summaries) the first time it reads them.
    "ALTER TABLE runs ADD COLUMN summary BLOB;",
    // 6 -> 7: PostgreSQL's move of the bodies out of its runs table (a scan of the runs' columns then reads no
    // report); SQLite keeps them in place (its console reads on a connection of its own, beside the writer) and
    // takes the version number only, so that both stores' versions mean the same build.
    "",
    // 7 -> 8: an application's newest runs (the console's latest runs) found by an index, not a scan; the
    // columns count_days() groups and counts are in it too (a covering index: its GROUP BY reads no row).
    "CREATE INDEX runs_app_id ON runs(app, id, version, received, exit_status, signal, failed);",
    // 8 -> 9: PostgreSQL's run ids taken after their transaction's id (ReadPosition, store.h); SQLite writes
    // one transaction at a time, in id order, and takes the version number only.
    "",
    // 9 -> 10: PostgreSQL's counts with the sequence number of their last write; SQLite keeps no counts.
    "",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return stmt_; }
  explicit operator bool() const { return stmt_ != nullptr; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteStore : public Store {
 public:
  SqliteStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteStore() override {
    sqlite3_finalize(plan_lookup_);
    sqlite3_close_v2(plan_lookup_db_);
    sqlite3_finalize(insert_);
    sqlite3_close_v2(db_);
  }

  bool migrate(std::string& error) {
    if (!exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)", error)) return false;
    if (!exec("BEGIN IMMEDIATE", error)) return false;
    int version = 0;
    {
      Statement select(db_, "SELECT version FROM schema_version");
      if (select && sqlite3_step(select.get()) == SQLITE_ROW) version = sqlite3_column_int(select.get(), 0);
    }
    if (version > kSchemaVersion) {
      error = "the database's schema version " + std::to_string(version) + " is newer than this build's (" +
              std::to_string(kSchemaVersion) + ")";
      exec("ROLLBACK", error);
      return false;
    }
    bool ok = true;
    for (int v = version; ok && v < kSchemaVersion; ++v) ok = exec(kMigrations[v], error);
    if (ok && version != kSchemaVersion) {
      ok = exec("DELETE FROM schema_version", error) &&
           exec(("INSERT INTO schema_version VALUES (" + std::to_string(kSchemaVersion) + ")").c_str(), error);
    }
    if (!ok) {
      std::string ignored;
      exec("ROLLBACK", ignored);
      return false;
    }
    version_ = kSchemaVersion;
    return exec("COMMIT", error);
  }

  PutStatus put(const Run& run, std::string& error) override { return group_.put(run, error); }

  int64_t commits() override { return static_cast<int64_t>(group_.batches()); }

  // A connection of its own, read-only: its snapshot is the committed runs when the read starts, and the writer
  // goes on committing beside it (WAL). Null when it does not open, with `error` set.
  using Reader = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;
  Reader open_reader(std::string& error) {
    sqlite3* reader = nullptr;
    const int opened = sqlite3_open_v2(path_.c_str(), &reader, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    Reader closer(reader, sqlite3_close_v2);
    if (opened != SQLITE_OK) {
      error = std::string("sqlite: ") + (reader != nullptr ? sqlite3_errmsg(reader) : sqlite3_errstr(opened));
      return Reader(nullptr, sqlite3_close_v2);
    }
    sqlite3_busy_timeout(reader, 10000);
    return closer;
  }

  bool count_days(const DaysQuery& query, std::vector<DayCounts>& days, std::string& error) override {
    Reader reader = open_reader(error);
    if (!reader) return false;
    const std::string sql = count_days_sql(query);
    Statement select(reader.get(), sql.c_str());
    if (!select) return fail(reader.get(), error);
    sqlite3_stmt* s = select.get();
    const int64_t now = query.now != 0 ? query.now : static_cast<int64_t>(std::time(nullptr));
    sqlite3_bind_text(s, sqlite3_bind_parameter_index(s, "$1"), query.app.data(), static_cast<int>(query.app.size()),
                      SQLITE_STATIC);
    sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, "$2"), now - kGoingSeconds - kClockSlack);
    sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, "$3"), query.settled);
    if (query.position != nullptr) *query.position = ReadPosition{};  // one writer at a time, in id order
    for (;;) {
      const int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) return true;
      if (rc != SQLITE_ROW) return fail(reader.get(), error);
      DayCounts& d = days.emplace_back();
      d.version = text(s, 0);
      d.day = sqlite3_column_int64(s, 1);
      d.first_stored = sqlite3_column_int64(s, 2);
      d.runs = static_cast<uint64_t>(sqlite3_column_int64(s, 3));
      d.failures = static_cast<uint64_t>(sqlite3_column_int64(s, 4));
      d.first_received = sqlite3_column_int64(s, 5);
      d.last_received = sqlite3_column_int64(s, 6);
      d.going = sqlite3_column_int64(s, 7);
      d.settled = sqlite3_column_int64(s, 8) != 0;
      d.last_stored = sqlite3_column_int64(s, 9);
    }
  }

  bool symbols_stamp(std::string_view app, std::string& stamp, std::string& error) override {
    Reader reader = open_reader(error);
    if (!reader) return false;
    // A replaced file has a new time, size or compressed length (a replacement within the same second by bytes of
    // the same two lengths is the one change this misses).
    Statement select(reader.get(), "SELECT group_concat(build_id || ' ' || kind || ' ' || received || ' ' || "
                                   "body_size || ' ' || length(body), ';') FROM (SELECT * FROM symbols WHERE "
                                   "app = ?1 ORDER BY build_id, kind)");
    if (!select) return fail(reader.get(), error);
    sqlite3_stmt* s = select.get();
    sqlite3_bind_text(s, 1, app.data(), static_cast<int>(app.size()), SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_ROW) return fail(reader.get(), error);
    stamp = text(s, 0);
    return true;
  }

  bool for_each(const Query& query, const std::function<bool(const Run&)>& visit, std::string& error) override {
    Reader closer = open_reader(error);
    if (!closer) return false;
    sqlite3* reader = closer.get();
    auto failed = [&error, reader] { return fail(reader, error); };
    std::string sql =
        std::string("SELECT run_id, app, version, received, exit_status, signal, failed, crash_signature, body_size, ") +
        report_columns(query, "body", "NULL") + ", id FROM runs WHERE app = ?1" +
        (query.version ? " AND version = ?2" : "") + (query.crashes_only ? kCrashesOnly : "") +
        after_condition(query);
    if (query.position != nullptr) *query.position = ReadPosition{};  // one writer at a time, in id order
    sql = query.newest == 0 ? sql + " ORDER BY id"
                            : "SELECT * FROM (" + sql + " ORDER BY id DESC LIMIT " + std::to_string(query.newest) +
                                  ") ORDER BY id";
    Statement select(reader, sql.c_str());
    if (!select) return failed();
    sqlite3_stmt* s = select.get();
    sqlite3_bind_text(s, 1, query.app.data(), static_cast<int>(query.app.size()), SQLITE_STATIC);
    if (query.version) {
      sqlite3_bind_text(s, 2, query.version->data(), static_cast<int>(query.version->size()), SQLITE_STATIC);
    }
    Run run;
    for (;;) {
      int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) return true;
      if (rc != SQLITE_ROW) return failed();
      run.run_id = text(s, 0);
      run.app = text(s, 1);
      run.version = text(s, 2);
      run.received = sqlite3_column_int64(s, 3);
      run.exit_status.reset();
      run.signal.reset();
      if (sqlite3_column_type(s, 4) != SQLITE_NULL) run.exit_status = sqlite3_column_int(s, 4);
      if (sqlite3_column_type(s, 5) != SQLITE_NULL) run.signal = sqlite3_column_int(s, 5);
      run.failed = sqlite3_column_int(s, 6) != 0;
      run.crash_signature = text(s, 7);
      run.stored_id = sqlite3_column_int64(s, 12);
      run.interim_sequence.reset();
      if (sqlite3_column_type(s, 10) != SQLITE_NULL) run.interim_sequence = sqlite3_column_int64(s, 10);
      std::string_view stored(static_cast<const char*>(sqlite3_column_blob(s, 9)),
                              static_cast<size_t>(sqlite3_column_bytes(s, 9)));
      run.body.clear();
      run.stored_body.clear();
      run.body_size = sqlite3_column_int64(s, 8);
      run.summary.assign(static_cast<const char*>(sqlite3_column_blob(s, 11)),
                         static_cast<size_t>(sqlite3_column_bytes(s, 11)));
      if (sqlite3_column_type(s, 9) == SQLITE_NULL) {
        // not asked for (a summary instead, or neither)
      } else if (query.stored_bodies || query.summaries) {
        run.stored_body.assign(stored);
      } else if (!decompress_body(stored, run.body_size, run.body)) {
        error = "run " + run.run_id + ": the stored body is corrupt";
        return false;
      }
      if (!visit(run)) return true;
    }
  }

  bool fill_summaries(std::string_view app, const std::vector<std::pair<std::string, std::string>>& summaries,
                      std::string& error) override {
    std::lock_guard lock(mutex_);
    if (!exec("BEGIN IMMEDIATE", error)) return false;
    Statement update(db_, "UPDATE runs SET summary = ?3 WHERE app = ?1 AND run_id = ?2 AND summary IS NULL");
    bool ok = static_cast<bool>(update);
    for (size_t i = 0; ok && i < summaries.size(); ++i) {
      sqlite3_stmt* s = update.get();
      sqlite3_reset(s);
      const auto& [run_id, summary] = summaries[i];
      sqlite3_bind_text(s, 1, app.data(), static_cast<int>(app.size()), SQLITE_STATIC);
      sqlite3_bind_text(s, 2, run_id.data(), static_cast<int>(run_id.size()), SQLITE_STATIC);
      sqlite3_bind_blob(s, 3, summary.data(), static_cast<int>(summary.size()), SQLITE_STATIC);
      ok = sqlite3_step(s) == SQLITE_DONE;
    }
    if (!ok) fail(error);
    if (!ok || !exec("COMMIT", error)) {
      std::string ignored;
      exec("ROLLBACK", ignored);
      return false;
    }
    return true;
  }

  PutStatus put_symbols(const SymbolFile& file, bool may_replace, std::string& error) override {
    std::string body = compress_body(file.bytes);
    if (body.empty()) {
      error = "cannot compress the symbol file";
      return PutStatus::kError;
    }
    std::lock_guard lock(mutex_);
    // Read, compare and write in one transaction: another process on the same file cannot slip in between.
    if (!exec("BEGIN IMMEDIATE", error)) return PutStatus::kError;
    std::string stored;
    PutStatus status = PutStatus::kStored;
    switch (get_symbols_locked(file.app, file.build_id, file.kind, stored, error)) {
      case GetStatus::kError: status = PutStatus::kError; break;
      case GetStatus::kMissing: break;
      case GetStatus::kFound:
        status = stored == file.bytes ? PutStatus::kDuplicate : may_replace ? PutStatus::kStored : PutStatus::kConflict;
    }
    if (status == PutStatus::kStored) {
      Statement upsert(db_,
                       "INSERT INTO symbols (build_id, kind, app, received, body_size, body) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (app, build_id, kind) DO UPDATE SET "
                       "received = excluded.received, body_size = excluded.body_size, body = excluded.body");
      sqlite3_stmt* s = upsert.get();
      if (s != nullptr) {
        sqlite3_bind_text(s, 1, file.build_id.data(), static_cast<int>(file.build_id.size()), SQLITE_STATIC);
        sqlite3_bind_text(s, 2, file.kind.data(), static_cast<int>(file.kind.size()), SQLITE_STATIC);
        sqlite3_bind_text(s, 3, file.app.data(), static_cast<int>(file.app.size()), SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, file.received != 0 ? file.received : static_cast<int64_t>(std::time(nullptr)));
        sqlite3_bind_int64(s, 5, static_cast<int64_t>(file.bytes.size()));
        sqlite3_bind_blob(s, 6, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
      }
      if (s == nullptr || sqlite3_step(s) != SQLITE_DONE) status = fail(error);
    }
    if (status == PutStatus::kError || !exec("COMMIT", error)) {
      std::string ignored;
      exec("ROLLBACK", ignored);
      return PutStatus::kError;
    }
    return status;
  }

  GetStatus get_symbols(std::string_view app, std::string_view build_id, std::string_view kind, std::string& bytes,
                        std::string& error) override {
    std::lock_guard lock(mutex_);
    return get_symbols_locked(app, build_id, kind, bytes, error);
  }

  PutStatus put_plan(const Plan& plan, std::string_view version, std::string& error) override {
    std::string body = compress_body(plan.text);
    if (body.empty()) {
      error = "cannot compress the plan";
      return PutStatus::kError;
    }
    const int64_t received = plan.received != 0 ? plan.received : static_cast<int64_t>(std::time(nullptr));
    std::lock_guard lock(mutex_);
    // Read, compare and write in one transaction, as put_symbols() does.
    if (!exec("BEGIN IMMEDIATE", error)) return PutStatus::kError;
    std::string stored;
    PutStatus status = PutStatus::kStored;
    switch (get_plan_locked(plan.app, plan.id, stored, error)) {
      case GetStatus::kError: status = PutStatus::kError; break;
      case GetStatus::kMissing: break;
      case GetStatus::kFound: status = stored == plan.text ? PutStatus::kDuplicate : PutStatus::kConflict;
    }
    if (status == PutStatus::kStored) {
      Statement insert(db_, "INSERT INTO plans (app, plan_id, received, body_size, body) VALUES (?1, ?2, ?3, ?4, ?5)");
      sqlite3_stmt* s = insert.get();
      if (s != nullptr) {
        sqlite3_bind_text(s, 1, plan.app.data(), static_cast<int>(plan.app.size()), SQLITE_STATIC);
        sqlite3_bind_text(s, 2, plan.id.data(), static_cast<int>(plan.id.size()), SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, received);
        sqlite3_bind_int64(s, 4, static_cast<int64_t>(plan.text.size()));
        sqlite3_bind_blob(s, 5, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
      }
      if (s == nullptr || sqlite3_step(s) != SQLITE_DONE) status = fail(error);
    }
    if (status == PutStatus::kStored || status == PutStatus::kDuplicate) {
      Statement current(db_,
                        "INSERT INTO current_plans (app, version, plan_id, since) VALUES (?1, ?2, ?3, ?4) "
                        "ON CONFLICT (app, version) DO UPDATE SET plan_id = excluded.plan_id, since = excluded.since");
      sqlite3_stmt* s = current.get();
      if (s != nullptr) {
        sqlite3_bind_text(s, 1, plan.app.data(), static_cast<int>(plan.app.size()), SQLITE_STATIC);
        sqlite3_bind_text(s, 2, version.data(), static_cast<int>(version.size()), SQLITE_STATIC);
        sqlite3_bind_text(s, 3, plan.id.data(), static_cast<int>(plan.id.size()), SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, received);
      }
      if (s == nullptr || sqlite3_step(s) != SQLITE_DONE) status = fail(error);
    }
    if (status == PutStatus::kError || !exec("COMMIT", error)) {
      std::string ignored;
      exec("ROLLBACK", ignored);
      return PutStatus::kError;
    }
    return status;
  }

  GetStatus get_plan(std::string_view app, std::string_view id, std::string& text, std::string& error) override {
    std::lock_guard lock(mutex_);
    return get_plan_locked(app, id, text, error);
  }

  GetStatus current_plan(std::string_view app, std::string_view version, std::string& id,
                         std::string& error) override {
    // Asked for every report stored: on a read-only connection of its own, with its statement prepared once, so
    // that the lookup never waits for the writer's batch (WAL: readers and the writer go on side by side).
    std::lock_guard lock(plan_lookup_mutex_);
    auto failed = [this, &error] {
      error = std::string("sqlite: ") +
              (plan_lookup_db_ != nullptr ? sqlite3_errmsg(plan_lookup_db_) : "cannot open the database");
      return GetStatus::kError;
    };
    if (plan_lookup_ == nullptr) {
      if (plan_lookup_db_ == nullptr) {
        if (sqlite3_open_v2(path_.c_str(), &plan_lookup_db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) !=
            SQLITE_OK) {
          failed();
          sqlite3_close_v2(plan_lookup_db_);  // opened again at the next lookup
          plan_lookup_db_ = nullptr;
          return GetStatus::kError;
        }
        sqlite3_busy_timeout(plan_lookup_db_, 10000);
      }
      if (sqlite3_prepare_v3(plan_lookup_db_, "SELECT plan_id FROM current_plans WHERE app = ?1 AND version = ?2", -1,
                             SQLITE_PREPARE_PERSISTENT, &plan_lookup_, nullptr) != SQLITE_OK) {
        return failed();
      }
    }
    sqlite3_stmt* s = plan_lookup_;
    sqlite3_bind_text(s, 1, app.data(), static_cast<int>(app.size()), SQLITE_STATIC);
    sqlite3_bind_text(s, 2, version.data(), static_cast<int>(version.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(s);
    GetStatus status = GetStatus::kFound;
    if (rc == SQLITE_ROW) {
      id = text(s, 0);
    } else {
      status = rc == SQLITE_DONE ? GetStatus::kMissing : failed();
    }
    sqlite3_reset(s);  // ends the read transaction: the next lookup sees what was committed since
    sqlite3_clear_bindings(s);
    return status;
  }

  bool count_between(std::string_view app, int64_t after, int64_t up_to, int64_t& count,
                     std::string& error) override {
    Reader reader = open_reader(error);
    if (!reader) return false;
    Statement select(reader.get(), kCountBetween);
    if (!select) return fail(reader.get(), error);
    sqlite3_stmt* s = select.get();
    sqlite3_bind_text(s, 1, app.data(), static_cast<int>(app.size()), SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, after);
    sqlite3_bind_int64(s, 3, up_to);
    if (sqlite3_step(s) != SQLITE_ROW) return fail(reader.get(), error);
    count = sqlite3_column_int64(s, 0);
    return true;
  }

  int64_t count(std::string& error) override {
    std::lock_guard lock(mutex_);
    Statement select(db_, "SELECT COUNT(*) FROM runs");
    if (!select || sqlite3_step(select.get()) != SQLITE_ROW) {
      fail(error);
      return -1;
    }
    return sqlite3_column_int64(select.get(), 0);
  }

  bool ping(std::string& error) override {
    std::lock_guard lock(mutex_);
    Statement select(db_, "SELECT version FROM schema_version");
    if (!select || sqlite3_step(select.get()) != SQLITE_ROW) return fail(error) != PutStatus::kError;
    return true;
  }

  int schema_version() const override { return version_; }

 private:
  GetStatus get_symbols_locked(std::string_view app, std::string_view build_id, std::string_view kind,
                               std::string& bytes, std::string& error) {
    return read_body("SELECT body_size, body FROM symbols WHERE app = ?1 AND build_id = ?2 AND kind = ?3",
                     {app, build_id, kind}, "symbols " + std::string(build_id) + " " + std::string(kind), bytes,
                     error);
  }

  GetStatus get_plan_locked(std::string_view app, std::string_view id, std::string& plan, std::string& error) {
    return read_body("SELECT body_size, body FROM plans WHERE app = ?1 AND plan_id = ?2", {app, id},
                     "plan " + std::string(id), plan, error);
  }

  // One compressed body (symbols, plans): `select` takes `keys` as its text parameters ?1, ?2, ... and answers
  // (body_size, body); `what` names it in the error of a body that does not decompress.
  GetStatus read_body(const char* select_sql, std::initializer_list<std::string_view> keys, const std::string& what,
                      std::string& body, std::string& error) {
    Statement select(db_, select_sql);
    if (!select) {
      fail(error);
      return GetStatus::kError;
    }
    sqlite3_stmt* s = select.get();
    int parameter = 1;
    for (std::string_view key : keys)
      sqlite3_bind_text(s, parameter++, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) return GetStatus::kMissing;
    if (rc != SQLITE_ROW) {
      fail(error);
      return GetStatus::kError;
    }
    std::string_view stored(static_cast<const char*>(sqlite3_column_blob(s, 1)),
                            static_cast<size_t>(sqlite3_column_bytes(s, 1)));
    if (!decompress_body(stored, sqlite3_column_int64(s, 0), body)) {
      error = what + ": the stored file is corrupt";
      return GetStatus::kError;
    }
    return GetStatus::kFound;
  }

  // One transaction for the whole batch; the INSERT prepared once (parsing it cost as much as running it).
  void write_batch(std::vector<PendingPut*>& batch) {
    std::lock_guard lock(mutex_);
    std::string error;
    bool ok = exec("BEGIN IMMEDIATE", error);
    if (ok && insert_ == nullptr) {
      const std::string sql =
          std::string("INSERT INTO runs (run_id, app, version, received, exit_status, signal, failed, "
                      "crash_signature, body_size, body, interim_sequence, summary) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT (app, run_id) ") +
          keep_latest_report("body");
      ok = sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &insert_, nullptr) == SQLITE_OK;
      if (!ok) fail(error);
    }
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    for (size_t i = 0; ok && i < batch.size(); ++i) {
      const Run& run = *batch[i]->run;
      std::string_view body = batch[i]->compressed;
      sqlite3_stmt* s = insert_;
      sqlite3_reset(s);
      sqlite3_bind_text(s, 1, run.run_id.data(), static_cast<int>(run.run_id.size()), SQLITE_STATIC);
      sqlite3_bind_text(s, 2, run.app.data(), static_cast<int>(run.app.size()), SQLITE_STATIC);
      sqlite3_bind_text(s, 3, run.version.data(), static_cast<int>(run.version.size()), SQLITE_STATIC);
      sqlite3_bind_int64(s, 4, run.received != 0 ? run.received : now);
      if (run.exit_status) sqlite3_bind_int(s, 5, *run.exit_status); else sqlite3_bind_null(s, 5);
      if (run.signal) sqlite3_bind_int(s, 6, *run.signal); else sqlite3_bind_null(s, 6);
      sqlite3_bind_int(s, 7, run.failed ? 1 : 0);
      sqlite3_bind_text(s, 8, run.crash_signature.data(), static_cast<int>(run.crash_signature.size()),
                        SQLITE_STATIC);
      sqlite3_bind_int64(s, 9, static_cast<int64_t>(run.body.size()));
      sqlite3_bind_blob(s, 10, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
      if (run.interim_sequence) sqlite3_bind_int64(s, 11, *run.interim_sequence); else sqlite3_bind_null(s, 11);
      if (!run.summary.empty()) {
        sqlite3_bind_blob(s, 12, run.summary.data(), static_cast<int>(run.summary.size()), SQLITE_STATIC);
      } else {
        sqlite3_bind_null(s, 12);
      }
      if (sqlite3_step(s) != SQLITE_DONE) {
        fail(error);
        ok = false;
        break;
      }
      // A run id twice in one batch: the later one replaces the earlier or changes nothing, as it would in its own
      // transaction.
      batch[i]->status = sqlite3_changes(db_) == 0 ? PutStatus::kDuplicate : PutStatus::kStored;
    }
    if (insert_ != nullptr) {
      sqlite3_reset(insert_);
      sqlite3_clear_bindings(insert_);
    }
    if (ok) ok = exec("COMMIT", error);
    if (!ok) {
      std::string ignored;
      exec("ROLLBACK", ignored);
      for (PendingPut* p : batch) {
        p->status = PutStatus::kError;
        p->error = error;
      }
    }
  }

  static std::string text(sqlite3_stmt* s, int column) {
    const unsigned char* p = sqlite3_column_text(s, column);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s, column)))
             : std::string();
  }
  // A reader connection's error (open_reader()).
  static bool fail(sqlite3* reader, std::string& error) {
    error = std::string("sqlite: ") + sqlite3_errmsg(reader);
    return false;
  }
  PutStatus fail(std::string& error) {
    error = std::string("sqlite: ") + sqlite3_errmsg(db_);
    return PutStatus::kError;
  }
  bool exec(const char* sql, std::string& error) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) == SQLITE_OK) return true;
    error = std::string("sqlite: ") + (message ? message : sqlite3_errmsg(db_));
    sqlite3_free(message);
    return false;
  }

  sqlite3* db_;
  std::string path_;  // for the readers' connections
  std::mutex mutex_;  // the writing connection: one batch, count or symbol lookup at a time
  sqlite3_stmt* insert_ = nullptr;
  std::mutex plan_lookup_mutex_;  // current_plan()'s own read-only connection and statement
  sqlite3* plan_lookup_db_ = nullptr;
  sqlite3_stmt* plan_lookup_ = nullptr;
  GroupCommit group_{[this](std::vector<PendingPut*>& batch) { write_batch(batch); }};
  int version_ = 0;
};

}  // namespace

std::unique_ptr<Store> open_sqlite(const std::string& path, std::string& error) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    error = "cannot open '" + path + "': " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return nullptr;
  }
  // Other processes (export, a second collector on the same file) wait for the lock instead of failing at once.
  sqlite3_busy_timeout(db, 10000);
  auto store = std::make_unique<SqliteStore>(db, path);
  char* message = nullptr;
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nullptr, nullptr, &message) !=
      SQLITE_OK) {
    error = "cannot open '" + path + "': " + (message ? message : "cannot set WAL mode");
    sqlite3_free(message);
    return nullptr;
  }
  if (!store->migrate(error)) {
    error = "'" + path + "': " + error;
    return nullptr;
  }
  return store;
}

}  // namespace sampler::store
