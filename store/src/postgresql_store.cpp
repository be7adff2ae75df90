// The PostgreSQL store: for several collectors behind a load balancer sharing one database. A small pool of
// connections (libpq connections are not thread-safe; one per request thread at most), the same schema as
// SQLite's, and migrations serialised by a lock on schema_version so that collectors starting together migrate
// once.
#include <libpq-fe.h>

#include <condition_variable>
#include <ctime>
#include <map>
#include <mutex>
#include <tuple>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "group_commit.h"
#include "store_impl.h"

namespace sampler::store {
namespace {

constexpr const char* kMigrations[] = {
    // 0 -> 1
    "CREATE TABLE runs ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  run_id TEXT NOT NULL UNIQUE,"
    "  app TEXT NOT NULL,"
    "  version TEXT NOT NULL,"
    "  received BIGINT NOT NULL,"
    "  exit_status INTEGER,"
    "  signal INTEGER,"
    "  failed BOOLEAN NOT NULL,"
    "  crash_signature TEXT NOT NULL,"
    "  body_size BIGINT NOT NULL,"
    "  body BYTEA NOT NULL);"
    "CREATE INDEX runs_app_version ON runs (app, version);"
    "CREATE INDEX runs_app_crash ON runs (app, crash_signature);",
    // 1 -> 2: symbol files by build ID, compressed like bodies.
    "CREATE TABLE symbols ("
    "  build_id TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  app TEXT NOT NULL,"
    "  received BIGINT NOT NULL,"
    "  body_size BIGINT NOT NULL,"
    "  body BYTEA NOT NULL,"
    "  PRIMARY KEY (build_id, kind));",
    // 2 -> 3: run ids and symbol files per application, so that one application's key never reaches another's
    // runs or symbols (the constraints' names are PostgreSQL's defaults for the ones above).
    "ALTER TABLE runs DROP CONSTRAINT runs_run_id_key;"
    "ALTER TABLE runs ADD CONSTRAINT runs_app_run_id_key UNIQUE (app, run_id);"
    "ALTER TABLE symbols DROP CONSTRAINT symbols_pkey;"
    "ALTER TABLE symbols ADD PRIMARY KEY (app, build_id, kind);",
    // 3 -> 4: a run's interim reports (the latest kept until the final one comes): NULL for a final report.
    "ALTER TABLE runs ADD COLUMN interim_sequence BIGINT;",
    // 4 -> 5: sampling plans, by application and plan id (compressed like bodies), and the current plan of each
    // application and release.
    "CREATE TABLE plans ("
    "  app TEXT NOT NULL,"
    "  plan_id TEXT NOT NULL,"
    "  received BIGINT NOT NULL,"
    "  body_size BIGINT NOT NULL,"
    "  body BYTEA NOT NULL,"
    "  PRIMARY KEY (app, plan_id));"
    "CREATE TABLE current_plans ("
    "  app TEXT NOT NULL,"
    "  version TEXT NOT NULL,"
    "  plan_id TEXT NOT NULL,"
    "  since BIGINT NOT NULL,"
    "  PRIMARY KEY (app, version));",
    // 5 -> 6: each run's summary (store.h, Run::summary); NULL for the runs stored before, until the console
    // fills it (fill_summaries) the first time it reads them.
    "ALTER TABLE runs ADD COLUMN summary BYTEA;",
    // 6 -> 7: the reports' bodies in a table of their own, by the run's row id, so that a scan of the runs'
    // columns and summaries (the console's pages) reads no report: bodies of a few KB sit inline in a row, below
    // the size at which PostgreSQL moves a value out of it (TOAST). The old rows' space in runs is reused as
    // rows are replaced; VACUUM FULL runs gives it back at once (docs/collection.md, "Storage").
    "CREATE TABLE run_bodies (run BIGINT PRIMARY KEY, body BYTEA NOT NULL);"
    "INSERT INTO run_bodies (run, body) SELECT id, body FROM runs;"
    "ALTER TABLE runs DROP COLUMN body;"
    // And the counts a ranking needs, summed at ingest in the transaction that stores a final report: per
    // application, release, crash signature, outcome and samples section (its key: the collector's, see
    // store.h, SectionCounts), the runs, and per line and per predicate of the section the runs that observed
    // it or found it true (array element i: id i), in kCountShards rows whose sum is the count (below).
    // `counted` says which runs are in them: not the interim
    // reports, nor the runs stored before, until a console page adds theirs (add_counts()).
    "CREATE TABLE run_counts ("
    "  app TEXT NOT NULL,"
    "  version TEXT NOT NULL,"
    "  crash_signature TEXT NOT NULL,"
    "  failed BOOLEAN NOT NULL,"
    "  section BYTEA NOT NULL,"
    "  runs BIGINT NOT NULL,"
    "  sites BIGINT[] NOT NULL,"
    "  predicates BIGINT[] NOT NULL,"
    "  shard INTEGER NOT NULL,"
    "  PRIMARY KEY (app, version, crash_signature, failed, section, shard));"
    "ALTER TABLE runs ADD COLUMN counted BOOLEAN NOT NULL DEFAULT false;"
    // Element-wise sum of two count arrays (the shorter one taken as padded with zeros). PL/pgSQL changes its
    // local array in place: 0.18 ms for 670 elements here, against 0.5 ms for unnest() and array_agg() in SQL.
    "CREATE FUNCTION sampler_add_counts(a BIGINT[], b BIGINT[]) RETURNS BIGINT[] LANGUAGE plpgsql IMMUTABLE AS "
    "$$ DECLARE sum BIGINT[] := a; BEGIN "
    "FOR i IN 1 .. cardinality(b) LOOP sum[i] := coalesce(sum[i], 0) + b[i]; END LOOP; RETURN sum; END $$;",
    // 7 -> 8: an application's newest runs (the console's latest runs) found by an index, not a scan; the
    // columns count_days() groups and counts are in it too, so that its GROUP BY reads the index alone (an
    // index-only scan), not the runs' rows with their summaries.
    "CREATE INDEX runs_app_id ON runs (app, id) INCLUDE (version, received, exit_status, signal, failed);",
    // 8 -> 9: a run's id taken after its transaction's id, so that a transaction that may still commit a run
    // with a lower id than a reader saw began before the reader's own (store.h, ReadPosition): nextval() alone
    // may run before the transaction has an id.
    "CREATE FUNCTION sampler_run_id() RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS "
    "$$ BEGIN PERFORM pg_current_xact_id(); RETURN nextval('runs_id_seq'); END $$;"
    "ALTER TABLE runs ALTER COLUMN id SET DEFAULT sampler_run_id();",
    // 9 -> 10: each row of run_counts with the sequence number of the write that last changed it, taken after
    // the writing transaction's id as a run's id is, so that a reader that keeps the rows asks only for those
    // changed since (store.h, Store::changed_counts()). Not indexed: an application has a few hundred rows,
    // found by the primary key's first column, and an indexed column changed by every upsert of counts would
    // make each one write index entries, where without it PostgreSQL updates the row within its page (a
    // heap-only update) as before.
    "CREATE SEQUENCE run_counts_sequence;"
    "CREATE FUNCTION sampler_counts_sequence() RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS "
    "$$ BEGIN PERFORM pg_current_xact_id(); RETURN nextval('run_counts_sequence'); END $$;"
    "ALTER TABLE run_counts ADD COLUMN sequence BIGINT NOT NULL DEFAULT 0;",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

constexpr size_t kPoolSize = 16;
// Rows of run_counts per key, added to by transactions on different connections: a transaction holds the rows it
// added to until its commit (an fsync), so transactions adding to one row take turns, one commit each; on rows
// of their own (the shard is the server process's id modulo this), concurrent batches commit together.
constexpr int kCountShards = 64;
// Batches in flight at once: while one waits for its commit's fsync, the next is already on its way (the server
// flushes concurrent commits together). More gives smaller batches and no more throughput (bench/collector).
constexpr size_t kConcurrentBatches = 4;

struct Result {
  explicit Result(PGresult* r) : result(r) {}
  ~Result() { PQclear(result); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  PGresult* result;
};

class PostgresqlStore : public Store {
 public:
  explicit PostgresqlStore(std::string conninfo) : conninfo_(std::move(conninfo)) {}
  ~PostgresqlStore() override {
    for (PGconn* c : idle_) PQfinish(c);
  }

  bool open(std::string& error) {
    PGconn* c = connect(error);
    if (c == nullptr) return false;
    bool ok = migrate(c, error);
    release(c);
    return ok;
  }

  PutStatus put(const Run& run, std::string& error) override { return group_.put(run, error); }

  int64_t commits() override { return static_cast<int64_t>(group_.batches()); }

  bool for_each(const Query& query, const std::function<bool(const Run&)>& visit, std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    const char* values[] = {query.app.c_str(), query.version ? query.version->c_str() : nullptr};
    // A body is fetched from run_bodies by the run's row id only where it is wanted: the other rows' scan reads
    // the narrow runs table alone.
    constexpr const char* kBody = "(SELECT body FROM run_bodies WHERE run = runs.id)";
    std::string sql =
        std::string("SELECT run_id, app, version, received, exit_status, signal, failed, crash_signature, body_size, ") +
        report_columns(query, kBody, "NULL::bytea") + ", counted, id FROM runs WHERE app = $1" +
        (query.version ? " AND version = $2" : "") + (query.crashes_only ? kCrashesOnly : "") +
        after_condition(query);
    if (query.position != nullptr && !begin_read(c, *query.position, error)) {
      release(c);
      return false;
    }
    sql = query.newest == 0 ? sql + " ORDER BY id"
                            : "SELECT * FROM (" + sql + " ORDER BY id DESC LIMIT " + std::to_string(query.newest) +
                                  ") AS newest ORDER BY id";
    // Binary results: the body arrives as its bytes, not hex text; rows one at a time, never all in memory.
    if (!PQsendQueryParams(c, sql.c_str(), query.version ? 2 : 1, nullptr, values, nullptr, nullptr, 1) ||
        !PQsetSingleRowMode(c)) {
      error = std::string("postgresql: ") + PQerrorMessage(c);
      trim(error);
      if (query.position != nullptr) rollback(c);
      release(c);
      return false;
    }
    bool ok = true, going = true;
    Run run;
    while (PGresult* raw = PQgetResult(c)) {
      Result r(raw);
      ExecStatusType status = PQresultStatus(r.result);
      if (status == PGRES_SINGLE_TUPLE && ok && going) {
        PGresult* p = r.result;
        run.run_id.assign(PQgetvalue(p, 0, 0), static_cast<size_t>(PQgetlength(p, 0, 0)));
        run.app.assign(PQgetvalue(p, 0, 1), static_cast<size_t>(PQgetlength(p, 0, 1)));
        run.version.assign(PQgetvalue(p, 0, 2), static_cast<size_t>(PQgetlength(p, 0, 2)));
        run.received = int_value(p, 3);
        run.exit_status.reset();
        run.signal.reset();
        if (!PQgetisnull(p, 0, 4)) run.exit_status = static_cast<int>(int_value(p, 4));
        if (!PQgetisnull(p, 0, 5)) run.signal = static_cast<int>(int_value(p, 5));
        run.failed = PQgetvalue(p, 0, 6)[0] != 0;
        run.crash_signature.assign(PQgetvalue(p, 0, 7), static_cast<size_t>(PQgetlength(p, 0, 7)));
        run.interim_sequence.reset();
        if (!PQgetisnull(p, 0, 10)) run.interim_sequence = int_value(p, 10);
        run.stored_id = int_value(p, 13);
        std::string_view stored(PQgetvalue(p, 0, 9), static_cast<size_t>(PQgetlength(p, 0, 9)));
        run.body.clear();
        run.stored_body.clear();
        run.body_size = int_value(p, 8);
        run.summary.assign(PQgetvalue(p, 0, 11), static_cast<size_t>(PQgetlength(p, 0, 11)));
        run.counted = PQgetvalue(p, 0, 12)[0] != 0;
        const bool absent = PQgetisnull(p, 0, 9);  // not asked for (a summary instead, or neither)
        const bool as_stored = query.stored_bodies || query.summaries;
        if (!absent && as_stored) run.stored_body.assign(stored);
        if (!absent && !as_stored && !decompress_body(stored, run.body_size, run.body)) {
          error = "run " + run.run_id + ": the stored body is corrupt";
          ok = false;
        } else if (!visit(run)) {
          going = false;
        }
      } else if (status != PGRES_SINGLE_TUPLE && status != PGRES_TUPLES_OK && ok) {
        error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
        trim(error);
        ok = false;
      }
    }
    if (query.position != nullptr) ok = end_read(c, ok, error);
    release(c);
    return ok;
  }

  // Begins a read that knows its position on `c`: its snapshot's oldest running transaction, and a transaction
  // id of its own taken after the snapshot (the snapshot's xmax would not do: a transaction that has an id but
  // began after the last one ended may be above it), in one repeatable-read transaction that the rows' query
  // then reads in and the caller ends with end_read() (its commit record is not flushed: it wrote nothing). On
  // failure nothing is left open.
  bool begin_read(PGconn* c, ReadPosition& position, std::string& error) {
    if (!exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ", error)) return false;
    Result r(PQexec(c, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text, pg_current_xact_id()::text"));
    if (PQresultStatus(r.result) != PGRES_TUPLES_OK || PQntuples(r.result) != 1) {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
      rollback(c);
      return false;
    }
    position.oldest_running = std::strtoull(PQgetvalue(r.result, 0, 0), nullptr, 10);
    position.reader = std::strtoull(PQgetvalue(r.result, 0, 1), nullptr, 10);
    return true;
  }

  // Ends what begin_read() began: false (and `error`, unless `ok` was already false) when the commit fails.
  bool end_read(PGconn* c, bool ok, std::string& error) {
    std::string end_error;
    if (!exec(c, "COMMIT", end_error) && ok) {
      error = end_error;
      return false;
    }
    return ok;
  }

  bool position(ReadPosition& now, std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    Result r(PQexec(c, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text"));
    const bool ok = PQresultStatus(r.result) == PGRES_TUPLES_OK && PQntuples(r.result) == 1;
    if (ok) {
      now = ReadPosition{};
      now.oldest_running = std::strtoull(PQgetvalue(r.result, 0, 0), nullptr, 10);
    } else {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    }
    release(c);
    return ok;
  }

  bool symbols_stamp(std::string_view app, std::string& stamp, std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    const std::string a(app);
    const char* values[] = {a.c_str()};
    // A row's xmin is the transaction that wrote its version: a replaced file's changes.
    constexpr const char* kStamp = "SELECT coalesce(string_agg(build_id || ' ' || kind || ' ' || xmin::text, ';' "
                                   "ORDER BY build_id, kind), '') FROM symbols WHERE app = $1";
    Result r(PQexecParams(c, kStamp, 1, nullptr, values, nullptr, nullptr, 0));
    const bool ok = PQresultStatus(r.result) == PGRES_TUPLES_OK && PQntuples(r.result) == 1;
    if (ok) {
      stamp = PQgetvalue(r.result, 0, 0);
    } else {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    }
    release(c);
    return ok;
  }

  bool count_days(const DaysQuery& query, std::vector<DayCounts>& days, std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    const int64_t now = query.now != 0 ? query.now : static_cast<int64_t>(std::time(nullptr));
    const std::string since = std::to_string(now - kGoingSeconds - kClockSlack),
                      settled = std::to_string(query.settled), sql = count_days_sql(query);
    const char* values[] = {query.app.c_str(), since.c_str(), settled.c_str()};
    if (query.position != nullptr && !begin_read(c, *query.position, error)) {
      release(c);
      return false;
    }
    Result r(PQexecParams(c, sql.c_str(), 3, nullptr, values, nullptr, nullptr, 0));
    bool ok = PQresultStatus(r.result) == PGRES_TUPLES_OK;
    if (!ok) {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    }
    for (int row = 0; ok && row < PQntuples(r.result); ++row) {
      DayCounts& d = days.emplace_back();
      d.version.assign(PQgetvalue(r.result, row, 0), static_cast<size_t>(PQgetlength(r.result, row, 0)));
      d.day = std::strtoll(PQgetvalue(r.result, row, 1), nullptr, 10);
      d.first_stored = std::strtoll(PQgetvalue(r.result, row, 2), nullptr, 10);
      d.runs = std::strtoull(PQgetvalue(r.result, row, 3), nullptr, 10);
      d.failures = std::strtoull(PQgetvalue(r.result, row, 4), nullptr, 10);
      d.first_received = std::strtoll(PQgetvalue(r.result, row, 5), nullptr, 10);
      d.last_received = std::strtoll(PQgetvalue(r.result, row, 6), nullptr, 10);
      d.going = std::strtoll(PQgetvalue(r.result, row, 7), nullptr, 10);
      d.settled = PQgetvalue(r.result, row, 8)[0] == '1';
      d.last_stored = std::strtoll(PQgetvalue(r.result, row, 9), nullptr, 10);
    }
    if (query.position != nullptr) ok = end_read(c, ok, error);
    release(c);
    return ok;
  }

  bool fill_summaries(std::string_view app, const std::vector<std::pair<std::string, std::string>>& summaries,
                      std::string& error) override {
    if (summaries.empty()) return true;
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    // One statement: the run ids and summaries as rows of a VALUES list, the summaries as binary parameters. A
    // summary stored meanwhile (a newer report's) is kept by coalesce(), not by a condition `summary IS NULL`:
    // statistics gathered before the summaries were cleared (all present) make the planner expect one such run,
    // and it then joins every run with every VALUES row (57 s for the first 2,000 of 10^5 runs; docs/performance.md,
    // "The first page after a migration").
    const std::string a(app);
    std::string sql = "UPDATE runs SET summary = coalesce(runs.summary, s.summary) FROM (VALUES ";
    std::vector<const char*> values{a.c_str()};
    std::vector<int> lengths{0}, formats{0};
    for (size_t i = 0; i < summaries.size(); ++i) {
      const std::string id = "$" + std::to_string(2 * i + 2), summary = "$" + std::to_string(2 * i + 3);
      sql += (i == 0 ? "(" : ", (") + id + "::text, " + summary + "::bytea)";
      values.push_back(summaries[i].first.c_str());
      values.push_back(summaries[i].second.data());
      lengths.insert(lengths.end(), {0, static_cast<int>(summaries[i].second.size())});
      formats.insert(formats.end(), {0, 1});
    }
    sql += ") AS s(run_id, summary) WHERE runs.app = $1 AND runs.run_id = s.run_id";
    Result r(PQexecParams(c, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), lengths.data(),
                          formats.data(), 0));
    const bool ok = PQresultStatus(r.result) == PGRES_COMMAND_OK;
    if (!ok) {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    }
    release(c);
    return ok;
  }

  bool keeps_counts() const override { return true; }

  bool sum_counts(const CountsQuery& query, std::vector<SectionTotals>& totals, std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    std::string signatures;
    if (query.failing_signatures) signatures = text_array(*query.failing_signatures);
    const char* values[] = {query.app.c_str(), query.version ? query.version->c_str() : nullptr,
                            query.failing_signatures ? signatures.c_str() : nullptr};
    // One scan of the application's count rows, summed per outcome and section: the runs, then element by
    // element the sites' and the predicates' arrays (ids whose sum is 0 left out). Binary results: the section
    // key arrives as its bytes, the numbers as big-endian integers (each cast to a fixed width).
    Result r(PQexecParams(
        c,
        "WITH selected AS (SELECT failed, section, runs, sites, predicates FROM run_counts WHERE app = $1 AND "
        "($2::text IS NULL OR version = $2) AND ($3::text[] IS NULL OR NOT failed OR crash_signature = ANY($3))) "
        "SELECT failed, section, 0, 0::bigint, sum(runs)::bigint FROM selected GROUP BY failed, section "
        "UNION ALL SELECT failed, section, 1, n - 1, sum(x)::bigint FROM selected, "
        "unnest(sites) WITH ORDINALITY AS u(x, n) GROUP BY failed, section, n HAVING sum(x) > 0 "
        "UNION ALL SELECT failed, section, 2, n - 1, sum(x)::bigint FROM selected, "
        "unnest(predicates) WITH ORDINALITY AS u(x, n) GROUP BY failed, section, n HAVING sum(x) > 0",
        3, nullptr, values, nullptr, nullptr, 1));
    const bool ok = PQresultStatus(r.result) == PGRES_TUPLES_OK;
    if (!ok) {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    } else {
      std::map<std::pair<bool, std::string>, SectionTotals> found;
      for (int row = 0; row < PQntuples(r.result); ++row) {
        const bool failed = PQgetvalue(r.result, row, 0)[0] != 0;
        const std::string key(PQgetvalue(r.result, row, 1), static_cast<size_t>(PQgetlength(r.result, row, 1)));
        const int64_t what = int_value(r.result, 2, row);
        const size_t id = static_cast<size_t>(int_value(r.result, 3, row));
        const uint64_t sum = static_cast<uint64_t>(int_value(r.result, 4, row));
        SectionTotals& t = found[{failed, key}];
        t.failed = failed;
        t.key = key;
        if (what == 0) {
          t.runs = sum;
        } else {
          std::vector<uint64_t>& counts = what == 1 ? t.sites : t.predicates;
          if (counts.size() <= id) counts.resize(id + 1, 0);
          counts[id] = sum;
        }
      }
      totals.clear();
      for (auto& entry : found) totals.push_back(std::move(entry.second));
    }
    release(c);
    return ok;
  }

  bool changed_counts(std::string_view app, int64_t after, std::vector<CountsRow>& rows, ReadPosition* position,
                      std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    const std::string a(app), from = std::to_string(after);
    const char* values[] = {a.c_str(), from.c_str()};
    if (position != nullptr && !begin_read(c, *position, error)) {
      release(c);
      return false;
    }
    // Binary results: the section key as its bytes, the arrays in PostgreSQL's binary array format.
    Result r(PQexecParams(c,
                          "SELECT version, crash_signature, failed, section, shard, runs, sites, predicates, sequence "
                          "FROM run_counts WHERE app = $1 AND sequence > $2::bigint",
                          2, nullptr, values, nullptr, nullptr, 1));
    bool ok = PQresultStatus(r.result) == PGRES_TUPLES_OK;
    if (!ok) {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    }
    for (int row = 0; ok && row < PQntuples(r.result); ++row) {
      CountsRow& counts = rows.emplace_back();
      auto text = [&](int column) {
        return std::string(PQgetvalue(r.result, row, column), static_cast<size_t>(PQgetlength(r.result, row, column)));
      };
      counts.version = text(0);
      counts.crash_signature = text(1);
      counts.failed = PQgetvalue(r.result, row, 2)[0] != 0;
      counts.key = text(3);
      counts.shard = static_cast<int32_t>(int_value(r.result, 4, row));
      counts.runs = static_cast<uint64_t>(int_value(r.result, 5, row));
      counts.sequence = int_value(r.result, 8, row);
      if (!binary_counts(text(6), counts.sites) || !binary_counts(text(7), counts.predicates)) {
        error = "postgresql: a count array of run_counts does not read";
        ok = false;
      }
    }
    if (position != nullptr) ok = end_read(c, ok, error);
    release(c);
    return ok;
  }

  // A one-dimensional BIGINT[] without nulls in PostgreSQL's binary format (array_send()): the number of
  // dimensions, a null flag, the element type; per dimension its size and lower bound; per element its length
  // (8) and its big-endian value.
  static bool binary_counts(std::string_view bytes, std::vector<uint64_t>& counts) {
    size_t at = 0;
    auto word = [&](int width, uint64_t& value) {
      if (bytes.size() - at < static_cast<size_t>(width)) return false;
      value = 0;
      for (int i = 0; i < width; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[at++]);
      return true;
    };
    uint64_t dimensions = 0, nulls = 0, type = 0, size = 0, lower = 0;
    if (!word(4, dimensions) || !word(4, nulls) || !word(4, type) || nulls != 0 || dimensions > 1) return false;
    if (dimensions == 0) return at == bytes.size();
    if (!word(4, size) || !word(4, lower) || size > (bytes.size() - at) / 12) return false;
    counts.assign(size, 0);
    for (uint64_t& count : counts) {
      uint64_t length = 0;
      if (!word(4, length) || length != 8 || !word(8, count)) return false;
    }
    return at == bytes.size();
  }

  bool add_counts(std::string_view app, const std::vector<std::pair<std::string, std::vector<SectionCounts>>>& counts,
                  std::string& error) override {
    if (counts.empty()) return true;
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    std::unordered_map<std::string, const std::vector<SectionCounts>*> of;
    std::vector<std::string> run_ids;
    for (const auto& [run_id, sections] : counts) {
      of.emplace(run_id, &sections);
      run_ids.push_back(run_id);
    }
    const std::string a(app), ids = text_array(run_ids);
    const char* values[] = {a.c_str(), ids.c_str()};
    bool ok = exec(c, "BEGIN", error);
    if (ok) {
      // The row lock of UPDATE: a run counted by another page (or replaced by its final report) meanwhile is
      // left out here, so no run is counted twice. The ids as `= ANY`, not a join: with statistics from before
      // the runs were uncounted the planner expects one uncounted run and would join each with every id.
      Result r(PQexecParams(c,
                            "UPDATE runs SET counted = true WHERE app = $1 AND run_id = ANY($2::text[]) AND NOT "
                            "counted AND interim_sequence IS NULL RETURNING run_id, version, crash_signature, failed",
                            2, nullptr, values, nullptr, nullptr, 0));
      ok = PQresultStatus(r.result) == PGRES_TUPLES_OK;
      if (!ok) {
        error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
        trim(error);
      } else {
        CountRows rows;
        for (int row = 0; row < PQntuples(r.result); ++row) {
          auto found = of.find(PQgetvalue(r.result, row, 0));
          if (found == of.end()) continue;
          add_run_counts(rows, a, PQgetvalue(r.result, row, 1), PQgetvalue(r.result, row, 2),
                         PQgetvalue(r.result, row, 3)[0] == 't', *found->second);
        }
        ok = write_counts(c, rows, error);
      }
    }
    if (!ok || !exec(c, "COMMIT", error)) {
      rollback(c);
      ok = false;
    }
    release(c);
    return ok;
  }

  PutStatus put_symbols(const SymbolFile& file, bool may_replace, std::string& error) override {
    std::string body = compress_body(file.bytes);
    if (body.empty()) {
      error = "cannot compress the symbol file";
      return PutStatus::kError;
    }
    PGconn* c = acquire(error);
    if (c == nullptr) return PutStatus::kError;
    std::string received =
        std::to_string(file.received != 0 ? file.received : static_cast<int64_t>(std::time(nullptr)));
    std::string size = std::to_string(file.bytes.size());
    const char* values[] = {file.build_id.c_str(), file.kind.c_str(), file.app.c_str(), received.c_str(),
                            size.c_str(), body.data()};
    int lengths[6] = {0, 0, 0, 0, 0, static_cast<int>(body.size())};
    int formats[6] = {0, 0, 0, 0, 0, 1};
    // A new file is inserted; a stored one is compared (after reading it under a row lock, so that collectors
    // pushing at once agree) and replaced only when allowed.
    PutStatus status = PutStatus::kError;
    std::string stored;
    if (exec(c, "BEGIN", error)) {
      Result inserted(PQexecParams(c,
                                   "INSERT INTO symbols (build_id, kind, app, received, body_size, body) "
                                   "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (app, build_id, kind) DO NOTHING",
                                   6, nullptr, values, lengths, formats, 0));
      if (PQresultStatus(inserted.result) != PGRES_COMMAND_OK) {
        error = std::string("postgresql: ") + PQresultErrorMessage(inserted.result);
        trim(error);
      } else if (std::string_view(PQcmdTuples(inserted.result)) != "0") {
        status = PutStatus::kStored;
      } else {
        switch (get_symbols(c, file.app, file.build_id, file.kind, " FOR UPDATE", stored, error)) {
          case GetStatus::kError: break;
          case GetStatus::kMissing: error = "postgresql: the symbol file vanished while being stored"; break;
          case GetStatus::kFound:
            status = stored == file.bytes ? PutStatus::kDuplicate
                     : may_replace        ? PutStatus::kStored
                                          : PutStatus::kConflict;
            if (status == PutStatus::kStored) {
              Result updated(PQexecParams(c,
                                          "UPDATE symbols SET received = $4, body_size = $5, body = $6 "
                                          "WHERE build_id = $1 AND kind = $2 AND app = $3",
                                          6, nullptr, values, lengths, formats, 0));
              if (PQresultStatus(updated.result) != PGRES_COMMAND_OK) {
                error = std::string("postgresql: ") + PQresultErrorMessage(updated.result);
                trim(error);
                status = PutStatus::kError;
              }
            }
        }
      }
      if (status == PutStatus::kError || !exec(c, "COMMIT", error)) {
        rollback(c);
        status = PutStatus::kError;
      }
    }
    release(c);
    return status;
  }

  GetStatus get_symbols(std::string_view app, std::string_view build_id, std::string_view kind, std::string& bytes,
                        std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return GetStatus::kError;
    GetStatus status = get_symbols(c, app, build_id, kind, "", bytes, error);
    release(c);
    return status;
  }

  PutStatus put_plan(const Plan& plan, std::string_view version, std::string& error) override {
    std::string body = compress_body(plan.text);
    if (body.empty()) {
      error = "cannot compress the plan";
      return PutStatus::kError;
    }
    PGconn* c = acquire(error);
    if (c == nullptr) return PutStatus::kError;
    const std::string received =
        std::to_string(plan.received != 0 ? plan.received : static_cast<int64_t>(std::time(nullptr)));
    const std::string size = std::to_string(plan.text.size()), release_name(version);
    const char* values[] = {plan.app.c_str(), plan.id.c_str(), received.c_str(), size.c_str(), body.data()};
    int lengths[5] = {0, 0, 0, 0, static_cast<int>(body.size())};
    int formats[5] = {0, 0, 0, 0, 1};
    // A new id is inserted; a stored one is compared under a row lock (collectors storing at once agree), as
    // put_symbols() does; then the plan becomes the release's current one in the same transaction.
    PutStatus status = PutStatus::kError;
    if (exec(c, "BEGIN", error)) {
      Result inserted(PQexecParams(c,
                                   "INSERT INTO plans (app, plan_id, received, body_size, body) "
                                   "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (app, plan_id) DO NOTHING",
                                   5, nullptr, values, lengths, formats, 0));
      std::string stored;
      if (PQresultStatus(inserted.result) != PGRES_COMMAND_OK) {
        error = std::string("postgresql: ") + PQresultErrorMessage(inserted.result);
        trim(error);
      } else if (std::string_view(PQcmdTuples(inserted.result)) != "0") {
        status = PutStatus::kStored;
      } else {
        switch (get_plan(c, plan.app, plan.id, " FOR UPDATE", stored, error)) {
          case GetStatus::kError: break;
          case GetStatus::kMissing: error = "postgresql: the plan vanished while being stored"; break;
          case GetStatus::kFound: status = stored == plan.text ? PutStatus::kDuplicate : PutStatus::kConflict;
        }
      }
      if (status == PutStatus::kStored || status == PutStatus::kDuplicate) {
        const char* current_values[] = {plan.app.c_str(), release_name.c_str(), plan.id.c_str(), received.c_str()};
        Result current(PQexecParams(c,
                                    "INSERT INTO current_plans (app, version, plan_id, since) "
                                    "VALUES ($1, $2, $3, $4) ON CONFLICT (app, version) DO UPDATE SET "
                                    "plan_id = excluded.plan_id, since = excluded.since",
                                    4, nullptr, current_values, nullptr, nullptr, 0));
        if (PQresultStatus(current.result) != PGRES_COMMAND_OK) {
          error = std::string("postgresql: ") + PQresultErrorMessage(current.result);
          trim(error);
          status = PutStatus::kError;
        }
      }
      if (status == PutStatus::kError || !exec(c, "COMMIT", error)) {
        rollback(c);
        status = PutStatus::kError;
      }
    }
    release(c);
    return status;
  }

  GetStatus get_plan(std::string_view app, std::string_view id, std::string& text, std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return GetStatus::kError;
    GetStatus status = get_plan(c, app, id, "", text, error);
    release(c);
    return status;
  }

  GetStatus current_plan(std::string_view app, std::string_view version, std::string& id,
                         std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return GetStatus::kError;
    const std::string a(app), v(version);
    const char* values[] = {a.c_str(), v.c_str()};
    Result r(PQexecParams(c, "SELECT plan_id FROM current_plans WHERE app = $1 AND version = $2", 2, nullptr, values,
                          nullptr, nullptr, 0));
    GetStatus status = GetStatus::kError;
    if (PQresultStatus(r.result) != PGRES_TUPLES_OK) {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    } else if (PQntuples(r.result) == 0) {
      status = GetStatus::kMissing;
    } else {
      id.assign(PQgetvalue(r.result, 0, 0), static_cast<size_t>(PQgetlength(r.result, 0, 0)));
      status = GetStatus::kFound;
    }
    release(c);
    return status;
  }

  bool count_between(std::string_view app, int64_t after, int64_t up_to, int64_t& count,
                     std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    const std::string a(app), from = std::to_string(after), to = std::to_string(up_to);
    const char* values[] = {a.c_str(), from.c_str(), to.c_str()};
    Result r(PQexecParams(c, kCountBetween, 3, nullptr, values, nullptr, nullptr, 0));
    const bool ok = PQresultStatus(r.result) == PGRES_TUPLES_OK && PQntuples(r.result) == 1;
    if (ok) {
      count = std::strtoll(PQgetvalue(r.result, 0, 0), nullptr, 10);
    } else {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    }
    release(c);
    return ok;
  }

  int64_t count(std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return -1;
    Result r(PQexec(c, "SELECT COUNT(*) FROM runs"));
    int64_t n = -1;
    if (PQresultStatus(r.result) == PGRES_TUPLES_OK && PQntuples(r.result) == 1) {
      n = std::strtoll(PQgetvalue(r.result, 0, 0), nullptr, 10);
    } else {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    }
    release(c);
    return n;
  }

  bool ping(std::string& error) override {
    PGconn* c = acquire(error);
    if (c == nullptr) return false;
    bool ok = exec(c, "SELECT version FROM schema_version", error);
    release(c);
    return ok;
  }

  int schema_version() const override { return version_; }

 private:
  // The file `app` stored under (build_id, kind) on connection `c`; `lock` is appended to the query.
  GetStatus get_symbols(PGconn* c, std::string_view app, std::string_view build_id, std::string_view kind,
                        const char* lock, std::string& bytes, std::string& error) {
    return read_body(c, std::string("SELECT body_size, body FROM symbols WHERE app = $1 AND build_id = $2 AND "
                                    "kind = $3") + lock,
                     {std::string(app), std::string(build_id), std::string(kind)},
                     "symbols " + std::string(build_id) + " " + std::string(kind), bytes, error);
  }

  // The plan `app` stored under `id` on connection `c`; `lock` is appended to the query.
  GetStatus get_plan(PGconn* c, std::string_view app, std::string_view id, const char* lock, std::string& text,
                     std::string& error) {
    return read_body(c, std::string("SELECT body_size, body FROM plans WHERE app = $1 AND plan_id = $2") + lock,
                     {std::string(app), std::string(id)}, "plan " + std::string(id), text, error);
  }

  // A text[] literal of `items`, each quoted.
  static std::string text_array(const std::vector<std::string>& items) {
    std::string out = "{";
    for (size_t i = 0; i < items.size(); ++i) {
      out += i == 0 ? "\"" : ",\"";
      for (char ch : items[i]) {
        if (ch == '"' || ch == '\\') out += '\\';
        out += ch;
      }
      out += "\"";
    }
    return out + "}";
  }

  // Counts to add to run_counts, by its key (application, release, crash signature, failed, section), in the
  // key's order: every transaction locks the rows it adds to in the same order, so two never wait on each other.
  struct CountSums {
    uint64_t runs = 0;
    std::vector<uint64_t> sites, predicates;
  };
  using CountRows = std::map<std::tuple<std::string, std::string, std::string, bool, std::string>, CountSums>;

  static void add_run_counts(CountRows& rows, const std::string& app, const std::string& version,
                             const std::string& crash_signature, bool failed,
                             const std::vector<SectionCounts>& sections) {
    for (const SectionCounts& section : sections) {
      CountSums& sums = rows[{app, version, crash_signature, failed, section.key}];
      ++sums.runs;
      for (auto [ids, into] :
           {std::pair{&section.sites, &sums.sites}, std::pair{&section.predicates, &sums.predicates}}) {
        for (uint32_t id : *ids) {
          if (into->size() <= id) into->resize(id + 1, 0);
          ++(*into)[id];
        }
      }
    }
  }

  // Adds `rows` to run_counts on `c`, inside the caller's transaction: one multi-row upsert.
  bool write_counts(PGconn* c, const CountRows& rows, std::string& error) {
    if (rows.empty()) return true;
    constexpr int kColumns = 8;
    const std::string shard = std::to_string(PQbackendPID(c) % kCountShards);
    std::string sql = "INSERT INTO run_counts (app, version, crash_signature, failed, section, runs, sites, "
                      "predicates, shard, sequence) VALUES ";
    std::vector<std::string> texts;  // runs, sites, predicates per row
    texts.reserve(rows.size() * 3);
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    auto array = [](const std::vector<uint64_t>& counts) {
      std::string out = "{";
      for (size_t i = 0; i < counts.size(); ++i) out += (i == 0 ? "" : ",") + std::to_string(counts[i]);
      return out + "}";
    };
    size_t i = 0;
    for (const auto& [key, sums] : rows) {
      const auto& [app, version, crash_signature, failed, section] = key;
      sql += i == 0 ? "(" : ", (";
      for (int k = 0; k < kColumns; ++k) {
        sql += (k == 0 ? "$" : ", $") + std::to_string(i * kColumns + static_cast<size_t>(k) + 1);
        if (k >= 6) sql += "::bigint[]";
      }
      sql += ", " + shard + ", sampler_counts_sequence())";
      texts.push_back(std::to_string(sums.runs));
      texts.push_back(array(sums.sites));
      texts.push_back(array(sums.predicates));
      const std::string* t = &texts[texts.size() - 3];
      for (const char* v : {app.c_str(), version.c_str(), crash_signature.c_str(), failed ? "true" : "false",
                            section.data(), t[0].c_str(), t[1].c_str(), t[2].c_str()}) {
        values.push_back(v);
      }
      for (int k = 0; k < kColumns; ++k) {
        lengths.push_back(k == 4 ? static_cast<int>(section.size()) : 0);
        formats.push_back(k == 4 ? 1 : 0);
      }
      ++i;
    }
    sql += " ON CONFLICT (app, version, crash_signature, failed, section, shard) DO UPDATE SET "
           "runs = run_counts.runs + excluded.runs, "
           "sites = sampler_add_counts(run_counts.sites, excluded.sites), "
           "predicates = sampler_add_counts(run_counts.predicates, excluded.predicates), "
           "sequence = excluded.sequence";
    Result r(PQexecParams(c, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), lengths.data(),
                          formats.data(), 0));
    if (PQresultStatus(r.result) == PGRES_COMMAND_OK) return true;
    error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
    trim(error);
    return false;
  }

  // One compressed body (symbols, plans) on connection `c`: `sql` takes `keys` as $1, $2, ... and answers
  // (body_size, body); `what` names it in the error of a body that does not decompress.
  GetStatus read_body(PGconn* c, const std::string& sql, const std::vector<std::string>& keys, const std::string& what,
                      std::string& body, std::string& error) {
    std::vector<const char*> values;
    for (const std::string& key : keys) values.push_back(key.c_str());
    Result r(PQexecParams(c, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr,
                          1));
    GetStatus status = GetStatus::kError;
    if (PQresultStatus(r.result) != PGRES_TUPLES_OK) {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
    } else if (PQntuples(r.result) == 0) {
      status = GetStatus::kMissing;
    } else {
      std::string_view stored(PQgetvalue(r.result, 0, 1), static_cast<size_t>(PQgetlength(r.result, 0, 1)));
      if (decompress_body(stored, int_value(r.result, 0), body)) {
        status = GetStatus::kFound;
      } else {
        error = what + ": the stored file is corrupt";
      }
    }
    return status;
  }

  // The whole batch is one statement: a multi-row INSERT into runs and, for the rows it inserted or replaced, their
  // bodies into run_bodies (a data-modifying WITH): one transaction, one round trip and one fsync'd commit.
  // RETURNING names the rows written; the others were duplicates. One statement may not
  // touch a row twice, so a run id that comes twice in the batch is settled here first, by the rule the statement
  // applies to stored rows (supersedes()): the same result as one put after the other.
  void write_batch(std::vector<PendingPut*>& batch) {
    std::string error;
    auto fail_all = [&batch, &error] {
      for (PendingPut* p : batch) {
        p->status = PutStatus::kError;
        p->error = error;
      }
    };
    std::vector<PendingPut*> rows;  // one per (app, run id): the report that wins within the batch
    {
      std::unordered_map<std::string, size_t> row_of;
      for (PendingPut* p : batch) {
        p->status = PutStatus::kDuplicate;
        auto [it, inserted] = row_of.emplace(p->run->app + '\n' + p->run->run_id, rows.size());
        if (inserted) {
          rows.push_back(p);
        } else if (supersedes(*p->run, *rows[it->second]->run)) {
          rows[it->second] = p;
        }
      }
    }
    PGconn* c = acquire(error);
    if (c == nullptr) return fail_all();
    constexpr int kColumns = 12;
    const size_t n = rows.size();
    std::string sql =
        "WITH written AS (INSERT INTO runs (run_id, app, version, received, exit_status, signal, failed, "
        "crash_signature, body_size, interim_sequence, summary, counted) VALUES ";
    std::string bodies = "bodies (app, run_id, body) AS (VALUES ";
    // A final report with counts is counted in this transaction (store.h, Run::counts): the counts of the rows
    // written are added after the INSERT, before the commit.
    auto counted = [](const Run& run) { return run.counts.has_value() && !run.interim_sequence; };
    bool any_counted = false;
    std::vector<std::string> numbers(n * 5);  // received, exit_status, signal, body_size, interim_sequence as text
    std::vector<const char*> values(n * kColumns);
    std::vector<int> lengths(n * kColumns, 0), formats(n * kColumns, 0);
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    for (size_t i = 0; i < n; ++i) {
      const Run& run = *rows[i]->run;
      // Parameter k of row i is $(i * kColumns + k + 1); the body (k = 9) goes to run_bodies, with the row's
      // application and run id (k = 1, 0) to find the row id the INSERT gave it.
      auto parameter = [i](int k) { return "$" + std::to_string(i * kColumns + static_cast<size_t>(k) + 1); };
      sql += i == 0 ? "(" : ", (";
      for (int k = 0; k < kColumns; ++k) {
        if (k != 9) sql += (k == 0 ? "" : ", ") + parameter(k);
      }
      sql += counted(run) ? ", true)" : ", false)";
      any_counted = any_counted || counted(run);
      bodies += (i == 0 ? "(" : ", (") + parameter(1) + "::text, " + parameter(0) + "::text, " + parameter(9) +
                "::bytea)";
      std::string* text = &numbers[i * 5];
      text[0] = std::to_string(run.received != 0 ? run.received : now);
      text[1] = run.exit_status ? std::to_string(*run.exit_status) : "";
      text[2] = run.signal ? std::to_string(*run.signal) : "";
      text[3] = std::to_string(run.body.size());
      text[4] = run.interim_sequence ? std::to_string(*run.interim_sequence) : "";
      const char** v = &values[i * kColumns];
      v[0] = run.run_id.c_str();
      v[1] = run.app.c_str();
      v[2] = run.version.c_str();
      v[3] = text[0].c_str();
      v[4] = run.exit_status ? text[1].c_str() : nullptr;
      v[5] = run.signal ? text[2].c_str() : nullptr;
      v[6] = run.failed ? "true" : "false";
      v[7] = run.crash_signature.c_str();
      v[8] = text[3].c_str();
      v[9] = rows[i]->compressed.data();
      v[10] = run.interim_sequence ? text[4].c_str() : nullptr;
      v[11] = run.summary.empty() ? nullptr : run.summary.data();
      lengths[i * kColumns + 9] = static_cast<int>(rows[i]->compressed.size());
      formats[i * kColumns + 9] = 1;
      lengths[i * kColumns + 11] = static_cast<int>(run.summary.size());
      formats[i * kColumns + 11] = 1;
    }
    sql += " ON CONFLICT (app, run_id) " + keep_latest_report("counted") + " RETURNING id, app, run_id), " + bodies +
           "), stored AS (INSERT INTO run_bodies (run, body) SELECT written.id, bodies.body FROM written JOIN bodies "
           "ON bodies.app = written.app AND bodies.run_id = written.run_id "
           "ON CONFLICT (run) DO UPDATE SET body = excluded.body) SELECT app, run_id FROM written";
    if (any_counted && !exec(c, "BEGIN", error)) {
      release(c);
      return fail_all();
    }
    Result r(PQexecParams(c, sql.c_str(), static_cast<int>(n * kColumns), nullptr, values.data(), lengths.data(),
                          formats.data(), 0));
    if (PQresultStatus(r.result) != PGRES_TUPLES_OK) {
      error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
      trim(error);
      if (any_counted) rollback(c);
      release(c);
      return fail_all();
    }
    // Keyed by application and run id: the same run id of two applications is two runs.
    std::unordered_set<std::string> written;
    for (int row = 0; row < PQntuples(r.result); ++row) {
      written.emplace(std::string(PQgetvalue(r.result, row, 0), static_cast<size_t>(PQgetlength(r.result, row, 0))) +
                      '\n' +
                      std::string(PQgetvalue(r.result, row, 1), static_cast<size_t>(PQgetlength(r.result, row, 1))));
    }
    CountRows counts;
    for (PendingPut* p : rows) {
      if (!written.contains(p->run->app + '\n' + p->run->run_id)) continue;
      p->status = PutStatus::kStored;
      const Run& run = *p->run;
      if (counted(run)) add_run_counts(counts, run.app, run.version, run.crash_signature, run.failed, *run.counts);
    }
    if (any_counted && (!write_counts(c, counts, error) || !exec(c, "COMMIT", error))) {
      rollback(c);
      release(c);
      return fail_all();
    }
    release(c);
  }

  static void trim(std::string& text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  }

  // Binary integers come big-endian, 4 or 8 bytes.
  static int64_t int_value(PGresult* p, int column, int row = 0) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(PQgetvalue(p, row, column));
    int length = PQgetlength(p, row, column);
    uint64_t value = 0;
    for (int i = 0; i < length; ++i) value = (value << 8) | bytes[i];
    if (length == 4) return static_cast<int32_t>(static_cast<uint32_t>(value));
    return static_cast<int64_t>(value);
  }

  PGconn* connect(std::string& error) {
    PGconn* c = PQconnectdb(conninfo_.c_str());
    if (PQstatus(c) != CONNECTION_OK) {
      error = std::string("postgresql: cannot connect: ") + PQerrorMessage(c);
      trim(error);
      PQfinish(c);
      return nullptr;
    }
    // No JIT: the console's scans are estimated costly enough to be compiled, and compiling took longer than
    // running them (docs/performance.md, "Readers beside uploads").
    // Two statements: a server without the `jit` setting (before PostgreSQL 11) must still keep notices quiet.
    Result quiet(PQexec(c, "SET client_min_messages = warning"));
    Result no_jit(PQexec(c, "SET jit = off"));
    return c;
  }

  bool exec(PGconn* c, const char* sql, std::string& error) {
    Result r(PQexec(c, sql));
    if (PQresultStatus(r.result) == PGRES_COMMAND_OK || PQresultStatus(r.result) == PGRES_TUPLES_OK) return true;
    error = std::string("postgresql: ") + PQresultErrorMessage(r.result);
    trim(error);
    return false;
  }

  bool migrate(PGconn* c, std::string& error) {
    if (!exec(c, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)", error)) {
      // Two collectors creating it at once: one loses the race on the catalog; the table is there now.
      std::string ignored;
      if (!exec(c, "SELECT 1 FROM schema_version LIMIT 1", ignored)) return false;
    }
    if (!exec(c, "BEGIN", error)) return false;
    if (!exec(c, "LOCK TABLE schema_version IN EXCLUSIVE MODE", error)) return rollback(c);
    int version = 0;
    {
      Result r(PQexec(c, "SELECT version FROM schema_version"));
      if (PQresultStatus(r.result) == PGRES_TUPLES_OK && PQntuples(r.result) > 0) {
        version = std::atoi(PQgetvalue(r.result, 0, 0));
      }
    }
    if (version > kSchemaVersion) {
      error = "the database's schema version " + std::to_string(version) + " is newer than this build's (" +
              std::to_string(kSchemaVersion) + ")";
      return rollback(c);
    }
    for (int v = version; v < kSchemaVersion; ++v) {
      if (!exec(c, kMigrations[v], error)) return rollback(c);
    }
    if (version != kSchemaVersion) {
      std::string set = "DELETE FROM schema_version; INSERT INTO schema_version VALUES (" +
                        std::to_string(kSchemaVersion) + ")";
      if (!exec(c, set.c_str(), error)) return rollback(c);
    }
    version_ = kSchemaVersion;
    return exec(c, "COMMIT", error);
  }

  bool rollback(PGconn* c) {
    std::string ignored;
    exec(c, "ROLLBACK", ignored);
    return false;
  }

  PGconn* acquire(std::string& error) {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [this] { return !idle_.empty() || open_ < kPoolSize; });
    if (!idle_.empty()) {
      PGconn* c = idle_.back();
      idle_.pop_back();
      lock.unlock();
      // A connection the server dropped (restart, idle timeout) is replaced once.
      if (PQstatus(c) != CONNECTION_OK) {
        PQreset(c);
        if (PQstatus(c) != CONNECTION_OK) {
          error = std::string("postgresql: ") + PQerrorMessage(c);
          trim(error);
          release(c);
          return nullptr;
        }
      }
      return c;
    }
    ++open_;
    lock.unlock();
    PGconn* c = connect(error);
    if (c == nullptr) {
      std::lock_guard again(mutex_);
      --open_;
      available_.notify_one();
    }
    return c;
  }

  void release(PGconn* c) {
    std::lock_guard lock(mutex_);
    idle_.push_back(c);
    available_.notify_one();
  }

  std::string conninfo_;
  GroupCommit group_{[this](std::vector<PendingPut*>& batch) { write_batch(batch); }, kConcurrentBatches};
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<PGconn*> idle_;
  size_t open_ = 0;
  int version_ = 0;
};

}  // namespace

std::unique_ptr<Store> open_postgresql(std::string_view url, std::string& error) {
  auto store = std::make_unique<PostgresqlStore>(std::string(url));
  if (!store->open(error)) return nullptr;
  return store;
}

}  // namespace sampler::store
