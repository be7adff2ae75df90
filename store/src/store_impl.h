// The implementations' constructors, for open_store().
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "store/store.h"

namespace sampler::store {

/// The conflict clause of both stores' INSERT INTO runs: the stored row takes the incoming report's columns when
/// the report supersedes it (store.h, supersedes(): the same rule in SQL); otherwise the row stays as it is and
/// the report is a duplicate (no row changed, none returned). `more` names the store's own columns of runs,
/// replaced with the others: SQLite's body; PostgreSQL's counted (its bodies are in run_bodies, replaced by the
/// same statement).
inline std::string keep_latest_report(std::string_view more) {
  return "DO UPDATE SET version = excluded.version, received = excluded.received, "
         "exit_status = excluded.exit_status, signal = excluded.signal, failed = excluded.failed, "
         "crash_signature = excluded.crash_signature, body_size = excluded.body_size, " +
         std::string(more) + " = excluded." + std::string(more) + ", " +
         "interim_sequence = excluded.interim_sequence, summary = excluded.summary "
         "WHERE runs.interim_sequence IS NOT NULL AND excluded.received - runs.received <= " +
         std::to_string(kGoingSeconds) +
         " AND (excluded.interim_sequence IS NULL OR excluded.interim_sequence > runs.interim_sequence)";
}

/// The columns of a run's report in both stores' Store::for_each() queries, in their order: the stored body,
/// interim_sequence, the summary. Neither body nor summary when `query.bodies` is false; with `query.summaries`, the
/// summary, and the body only of a run without one; else the body alone. `body` is the store's expression of the
/// stored body, `null` its null of the same type.
inline std::string report_columns(const Query& query, std::string_view body, std::string_view null) {
  const std::string stored = !query.bodies     ? std::string(null)
                             : query.summaries ? "CASE WHEN summary IS NULL THEN " + std::string(body) + " END"
                                               : std::string(body);
  return stored + ", interim_sequence, " + std::string(query.bodies && query.summaries ? "summary" : null);
}

/// Both stores' condition for Query::crashes_only: a range of the index on (app, crash_signature), the empty
/// signature being the least; `<> ''` is none, and PostgreSQL then read every run of the application (63 ms for
/// 10^5 runs, for each application page: docs/performance.md, "The database's counts kept between pages").
inline constexpr const char* kCrashesOnly = " AND crash_signature > ''";

/// Both stores' condition on the ids of Store::for_each()'s runs: those after `query.after`, and those of
/// `query.also` (" AND ...", or "" for every run). The ids are integers, written in the statement.
inline std::string after_condition(const Query& query) {
  if (query.after <= 0) return "";
  std::string condition = " AND (id > " + std::to_string(query.after);
  if (!query.also.empty()) {
    condition += " OR id IN (";
    for (size_t i = 0; i < query.also.size(); ++i) condition += (i ? "," : "") + std::to_string(query.also[i]);
    condition += ")";
  }
  return condition + ")";
}

/// Store::count_days()' query, the same on both stores: runs per release and day, failing as FailureRule's
/// default says (a signal; else an exit status whose low byte is not 0; else, without one, the stored flag); each
/// run still going (interim, stored after $2) in a row of its own, and the runs with ids up to $3 apart from the
/// others (DaysQuery). Columns: version, day, first id, runs, failures, first and last received, going, settled,
/// last id.
/// Parameters: $1 the application, $2 the oldest `received` of a run still going, $3 DaysQuery::settled; then
/// after_condition()'s.
inline std::string count_days_sql(const DaysQuery& query) {
  Query ids;
  ids.after = query.after;
  ids.also = query.also;
  return "SELECT version, received / 86400, min(id), count(*), "
         "sum(CASE WHEN signal IS NOT NULL OR (exit_status IS NULL AND failed) OR (exit_status & 255) <> 0 "
         "THEN 1 ELSE 0 END), min(received), max(received), "
         "CASE WHEN interim_sequence IS NOT NULL AND received >= CAST($2 AS BIGINT) THEN id ELSE 0 END, "
         "CASE WHEN id <= CAST($3 AS BIGINT) THEN 1 ELSE 0 END, max(id) "
         "FROM runs WHERE app = $1" + after_condition(ids) + " GROUP BY 1, 2, 8, 9";
}

/// Store::count_between()' query, the same on both stores (the index on (app, id)).
inline constexpr const char* kCountBetween =
    "SELECT count(*) FROM runs WHERE app = $1 AND id > CAST($2 AS BIGINT) AND id <= CAST($3 AS BIGINT)";

std::unique_ptr<Store> open_sqlite(const std::string& path, std::string& error);
std::unique_ptr<Store> open_postgresql(std::string_view url, std::string& error);

}  // namespace sampler::store
