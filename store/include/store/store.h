// Where collected reports live: one interface, a SQLite and a PostgreSQL implementation, the same
// test suite over both (tests/store). The collector writes runs; the analysis and `sampler-collector export`
// read them. The store knows reports only as text plus the columns the collector derived from them: it never
// knows HTTP, and it never parses a report.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sampler::store {

/// One section's part of what a run adds to its application's counts, which the PostgreSQL store keeps summed in
/// SQL (docs/collection.md, "The console"). Made by the collector from the run's summary; the store only adds.
struct SectionCounts {
  /// The samples section: its unit, scheme and shape, as the collector writes it (collector/console.h,
  /// summary_counts()); empty for the run itself (a run with a samples subreport, ranked).
  std::string key;
  std::vector<uint32_t> sites;       ///< the section's lines the run observed
  std::vector<uint32_t> predicates;  ///< its true predicates (line * predicates per site + predicate)
};

/// One run of an application: the report's text and the columns queries need.
struct Run {
  std::string run_id;           ///< the launcher's random run id; a second run of the app with it is a duplicate
  std::string app;              ///< application name (from the API key, never from the report); run ids are
                                ///< unique per application, so one application's ids never touch another's
  std::string version;          ///< application version ("" when unknown)
  std::optional<int> exit_status;  ///< set when the program exited
  std::optional<int> signal;       ///< set when the program died of a signal
  bool failed = false;          ///< the outcome the analysis uses
  std::string crash_signature;  ///< "" unless the program crashed with a main-backtrace
  /// Set for an interim report (the run still going when it was sent: its outcome is unknown), to the report's
  /// sequence number; unset for the final report. A run keeps its latest report: see Store::put().
  std::optional<int64_t> interim_sequence;
  int64_t received = 0;         ///< seconds since the epoch, set by the store on insert when 0
  std::string body;             ///< the whole report, uncompressed (stored compressed)
  /// Optional, for put(): one gzip member that decompresses to exactly `body` (the upload as the client sent it).
  /// The store keeps these bytes instead of compressing `body` again: the collector's costliest step saved.
  std::string_view gzip_body;
  /// From for_each() with Query::stored_bodies: the body as stored (`body` is then empty), and its size once
  /// decompressed: decompress_body(stored_body, body_size, text) gives it back.
  std::string stored_body;
  int64_t body_size = 0;
  /// The run's summary (analysis/run_summary.h), made by the collector from the report and stored beside it as
  /// bytes the store never reads; replaced with the report. Empty: none (a run stored before summaries were
  /// kept, until fill_summaries() gives it one).
  std::string summary;
  /// For put(), on a store that keeps counts (Store::keeps_counts()): what the run adds to them, made from its
  /// summary; unset when there is none. Counted only for a final report (an interim one is not ranked, and a
  /// final report is never replaced), in the transaction that stores it.
  std::optional<std::vector<SectionCounts>> counts;
  /// From for_each() with Query::summaries on a store that keeps counts: the run's counts are in them (false for
  /// interim reports and for runs stored before counts were kept: add_counts() adds theirs).
  bool counted = false;
  /// From for_each(): the run's row id, the order runs were stored in (Query::after). A replaced report keeps it.
  int64_t stored_id = 0;
};

/// kConflict: put_symbols() found different bytes under the key and was not allowed to replace them.
enum class PutStatus { kStored, kDuplicate, kConflict, kError };

/// A symbol file for one ELF build ID, as `sampler-symbols push` uploaded it: GSYM, or one of
/// the two symbfiles. The collector checked it with the formats library before storing it. Keyed by (app,
/// build_id, kind): an application's symbols are its own, and another application's key cannot change them.
struct SymbolFile {
  std::string build_id;   ///< lower-case hex
  std::string kind;       ///< "gsym", "ranges" or "returnpads"
  std::string app;        ///< the application whose API key uploaded it
  int64_t received = 0;   ///< seconds since the epoch, set by the store on insert when 0
  std::string bytes;      ///< the file (stored compressed)
};

enum class GetStatus { kFound, kMissing, kError };

/// A sampling plan (docs/collection.md, "Sampling plans") as a key with `plans` uploaded it: the file's text, kept
/// by application and plan id (the plan file's `id` line). The collector checked it with the plan codec before
/// storing it. An application's plans are its own: another application's key neither reads nor replaces them.
struct Plan {
  std::string app;       ///< the application whose API key uploaded it
  std::string id;        ///< the plan's id (1 to 64 of [0-9A-Za-z_-])
  int64_t received = 0;  ///< seconds since the epoch, set by the store on insert when 0
  std::string text;      ///< the whole plan file (stored compressed)
};

/// Where a read stood among the store's writers (Query::position), for a reader that keeps what it read and next
/// reads only the runs stored after it (Query::after): the console (collector/src/console.cpp). On PostgreSQL,
/// transactions take run ids before they commit, so a run with a lower id than every run a read saw may still
/// come; every transaction that may hold such an id began before `reader`, a transaction id taken after the
/// read's snapshot. A later read whose `oldest_running` is above it sees every run with an id up to the highest
/// the first saw (docs/decisions.md, "The runs kept between pages"). SQLite writes one transaction at a time, in
/// id order: `reader` is 0, and a read sees every run up to the highest id it saw.
struct ReadPosition {
  uint64_t reader = 0;          ///< a transaction id taken after the read's snapshot (0: none needed)
  uint64_t oldest_running = 0;  ///< the oldest transaction still running when the read's snapshot was taken
  /// Whether every run stored with an id up to the highest that the read at `earlier` saw is seen from here.
  bool sees_all_before(const ReadPosition& earlier) const {
    return earlier.reader == 0 || oldest_running > earlier.reader;
  }
};

/// Which runs to read.
struct Query {
  std::string app;
  std::optional<std::string> version;
  /// Only the runs with a crash signature, with their bodies (what the application's page's crash groups need:
  /// the crashes' stacks); the other runs are not read at all.
  bool crashes_only = false;
  /// Bodies come as stored (Run::stored_body), not decompressed: a reader that holds many runs at once keeps
  /// them small, and decompresses each when it reads it.
  bool stored_bodies = false;
  /// Each run comes with its summary (Run::summary) instead of its body; a run without one comes with its body
  /// (as stored_bodies gives it) and an empty summary, for the reader to summarize. Ranking reads no report.
  bool summaries = false;
  /// When not 0, only the application's `newest` runs stored last (by the order they were stored: an index on
  /// (app, id) finds them without a scan), still oldest first.
  size_t newest = 0;
  /// False: each run comes with its columns alone, neither its body nor its summary (Run::body, stored_body and
  /// summary empty): what a list of runs shows, without the database reading or sending the reports.
  bool bodies = true;
  /// Only the runs whose Run::stored_id is above this (the runs stored after those a reader kept).
  int64_t after = 0;
  /// With `after`: the runs with these ids too (ids at or below it: the runs a reader kept while they were still
  /// going, read again to see whether their final report has come).
  std::vector<int64_t> also;
  /// When set, for_each() fills it with where its read stood (ReadPosition).
  ReadPosition* position = nullptr;
};

/// One application's runs of one release received on one day (Store::count_days()): what the application's
/// page shows of its releases and their charts, counted by the database instead of read run by run.
struct DayCounts {
  std::string version;
  int64_t day = 0;             ///< received / 86400 (days since the epoch, UTC)
  int64_t first_stored = 0;    ///< the store's order of the day's first run (releases are shown in that order)
  uint64_t runs = 0;
  uint64_t failures = 0;       ///< failing as store::FailureRule's default says (store/files.h)
  int64_t first_received = 0;  ///< the day's earliest and latest `received`
  int64_t last_received = 0;
  int64_t last_stored = 0;     ///< the highest id of the row's runs
  /// A run still going (going(): its report may yet be replaced) is counted in a row of its own: its id; 0 for a
  /// row of runs that are over.
  int64_t going = 0;
  /// Whether the row's runs all have ids up to DaysQuery::settled (a row of its own otherwise).
  bool settled = false;
};

/// How long a run still going waits for its next report: a report of a run whose last one is interim and older
/// than this (by `received`) changes nothing (supersedes()); the run is over, its last interim report its last.
/// So a reader that keeps what it read of runs (the console) asks again only for the runs going since, however
/// many were abandoned (docs/decisions.md, "The runs kept between pages").
constexpr int64_t kGoingSeconds = 7 * 86400;
/// Whether a run whose report was stored `received` may still have it replaced at `now` (seconds since the epoch).
/// `slack` widens the time for a reader whose clock may be behind a writer's.
inline bool going(int64_t received, int64_t now, int64_t slack = 0) { return now - received <= kGoingSeconds + slack; }
/// The slack a reader gives going(): how far behind another collector's clock its own may be.
constexpr int64_t kClockSlack = 3600;

/// Which runs Store::count_days() counts: all of an application's, or, for a reader that keeps the counts it was
/// given (the console's application page), those stored after `after` and those of `also` (runs it saw going).
struct DaysQuery {
  std::string app;
  int64_t after = 0;
  std::vector<int64_t> also;
  /// The runs with ids up to this one are counted apart from the others (DayCounts::settled).
  int64_t settled = 0;
  /// The time runs still going are told by (going(), with kClockSlack); 0: the store's clock.
  int64_t now = 0;
  /// When set, count_days() fills it with where its read stood (ReadPosition).
  ReadPosition* position = nullptr;
};

/// One row of an application's counts as the store keeps them (Store::changed_counts()): the counts of the final
/// runs of one (release, crash signature, outcome, section key) that the writers of one shard added, and the
/// sequence number of the write that last changed it. The sum of a key's rows over their shards is its count.
struct CountsRow {
  std::string version, crash_signature;
  bool failed = false;
  std::string key;  ///< SectionCounts::key
  int32_t shard = 0;
  uint64_t runs = 0;
  std::vector<uint64_t> sites, predicates;
  int64_t sequence = 0;
};

/// Which runs' counts to sum (Store::sum_counts()): one application, one release or all, and either every run or
/// the successful runs with the failing runs of some crash signatures (a crash group's page).
struct CountsQuery {
  std::string app;
  std::optional<std::string> version;
  std::optional<std::vector<std::string>> failing_signatures;
};

/// The counts of one section key (SectionCounts::key) over the failing or the successful runs a CountsQuery
/// selects: how many runs had the section (for the empty key: how many runs), and per line and per predicate the
/// runs that observed it or found it true (index = id; shorter than the section where the rest are 0).
struct SectionTotals {
  bool failed = false;
  std::string key;
  uint64_t runs = 0;
  std::vector<uint64_t> sites, predicates;
};

/// Storage. Every method is safe to call from several threads at once. No exceptions: errors come back as text.
class Store {
 public:
  virtual ~Store() = default;
  /// Stores `run` durably (committed before returning kStored), or recognises its application's run id
  /// (kDuplicate: nothing changes). A run keeps its latest report (supersedes() below): a stored interim report
  /// is replaced (kStored) by the final one or by an interim one of a higher sequence. On kError, `error` says why. Concurrent puts share transactions (group
  /// commit): each still returns only once the transaction holding its run has committed.
  virtual PutStatus put(const Run& run, std::string& error) = 0;
  /// Transactions committed by put() since opening (fewer than puts when puts were grouped).
  virtual int64_t commits() = 0;
  /// Calls `visit` for each run matching `query`, oldest first; `visit` returns false to stop early.
  /// Returns false (and sets `error`) on a storage error or a body that cannot be decompressed.
  virtual bool for_each(const Query& query, const std::function<bool(const Run&)>& visit, std::string& error) = 0;
  /// Stores the summaries of `app`'s runs that have none (runs stored before summaries were kept): pairs of run id
  /// and summary, in one transaction. A run that got a summary meanwhile (its report was replaced) keeps it.
  virtual bool fill_summaries(std::string_view app, const std::vector<std::pair<std::string, std::string>>& summaries,
                              std::string& error) = 0;
  /// `app`'s runs per release and day (DayCounts), one GROUP BY in the database, in no particular order. A run
  /// fails by FailureRule's default: a signal, or an exit status whose low byte is not 0, or, without either,
  /// its stored `failed` flag.
  /// With DaysQuery::after, only the runs it selects; a run still going is counted in a row of its own.
  virtual bool count_days(const DaysQuery& query, std::vector<DayCounts>& days, std::string& error) = 0;
  /// Whether the store keeps each application's counts (PostgreSQL): put() adds a final run's Run::counts and
  /// sum_counts() answers; otherwise the console counts the runs itself.
  virtual bool keeps_counts() const { return false; }
  /// The counts of the runs `query` selects, summed by the database (kept only for final reports: Run::counts).
  virtual bool sum_counts(const CountsQuery& query, std::vector<SectionTotals>& totals, std::string& error) {
    (void)query;
    (void)totals;
    error = "this store keeps no counts";
    return false;
  }
  /// The rows of `app`'s counts (CountsRow) last changed by a write whose sequence number is above `after`, in no
  /// particular order; `position` (when not null) is where the read stood: a write with a sequence number up to
  /// the highest a read saw began before ReadPosition::reader, as a run's id does. What a reader that keeps the
  /// rows it read asks for again (the console: docs/decisions.md, "The runs kept between pages").
  virtual bool changed_counts(std::string_view app, int64_t after, std::vector<CountsRow>& rows,
                              ReadPosition* position, std::string& error) {
    (void)app;
    (void)after;
    (void)rows;
    (void)position;
    error = "this store keeps no counts";
    return false;
  }
  /// Adds the counts of `app`'s final runs stored before counts were kept (Run::counted false): pairs of run id
  /// and counts, in one transaction; a run counted meanwhile is not counted again.
  virtual bool add_counts(std::string_view app,
                          const std::vector<std::pair<std::string, std::vector<SectionCounts>>>& counts,
                          std::string& error) {
    (void)app;
    (void)counts;
    error = "this store keeps no counts";
    return false;
  }
  /// A text that changes whenever one of `app`'s symbol files is stored or replaced: a reader that keeps what it
  /// made from them (the console's crash groups) compares it with the one it made them with. One small query.
  virtual bool symbols_stamp(std::string_view app, std::string& stamp, std::string& error) = 0;
  /// Stores a symbol file under (app, build_id, kind). kDuplicate: the same bytes were already there. Different
  /// bytes replace the stored ones when `may_replace` (kStored: a newer converter's output wins); else kConflict
  /// and the stored file stays.
  virtual PutStatus put_symbols(const SymbolFile& file, bool may_replace, std::string& error) = 0;
  /// The bytes `app` stored under (build_id, kind): kFound fills `bytes`.
  virtual GetStatus get_symbols(std::string_view app, std::string_view build_id, std::string_view kind,
                                std::string& bytes, std::string& error) = 0;
  /// Stores `plan` under (app, id) and makes it the current plan of (app, `version`), in one transaction.
  /// kDuplicate: the same text was already stored under the id (it is made current all the same); kConflict: a
  /// different text is stored under the id, and nothing changes (a run's plan id must mean one plan).
  virtual PutStatus put_plan(const Plan& plan, std::string_view version, std::string& error) = 0;
  /// The text of the plan `app` stored under `id`: kFound fills `text`.
  virtual GetStatus get_plan(std::string_view app, std::string_view id, std::string& text, std::string& error) = 0;
  /// The id of the current plan of (app, version), the one last put for them: kFound fills `id`. One lookup by
  /// primary key: the collector asks it for every report it stores.
  virtual GetStatus current_plan(std::string_view app, std::string_view version, std::string& id,
                                 std::string& error) = 0;
  /// Where a read begun now would stand (ReadPosition::oldest_running; `reader` 0): a reader that kept runs asks
  /// it after its read, so that runs the read saw are known seen as soon as the transactions that may still
  /// have held lower ids have ended, not only at its next read. One tiny query.
  virtual bool position(ReadPosition& now, std::string& error) {
    (void)error;
    now = ReadPosition{};
    return true;
  }
  /// The number of `app`'s runs with ids above `after` and up to `up_to` (an index's range): a reader that read them
  /// while some might still have been uncommitted, and knows (position()) that all are committed now, tells
  /// whether it saw every one.
  virtual bool count_between(std::string_view app, int64_t after, int64_t up_to, int64_t& count,
                             std::string& error) = 0;
  /// Number of runs stored (all applications), or -1 on error. A scan of the runs: not for every request.
  virtual int64_t count(std::string& error) = 0;
  /// Whether the database answers, at the cost of one tiny query (the schema version): for health checks.
  virtual bool ping(std::string& error) = 0;
  /// The schema version the database is at after opening (migrations applied).
  virtual int schema_version() const = 0;
};

/// Whether `incoming` replaces the stored report `stored` of the same run: the final report always does, unless
/// the stored one is final too (the first final report stays); an interim one only a lower interim sequence.
/// A run whose interim report is older than kGoingSeconds keeps it (both `received` set: 0 is the store's now).
inline bool supersedes(const Run& incoming, const Run& stored) {
  if (!stored.interim_sequence) return false;
  if (incoming.received != 0 && stored.received != 0 && !going(stored.received, incoming.received)) return false;
  return !incoming.interim_sequence || *incoming.interim_sequence > *stored.interim_sequence;
}

/// The schema version this build creates and migrates to.
constexpr int kSchemaVersion = 10;

/// The counts `query` selects summed over `rows` (Store::changed_counts()' rows of query.app), as
/// Store::sum_counts() sums them in the database: per outcome and section key, ordered by both.
std::vector<SectionTotals> sum_rows(const std::vector<const CountsRow*>& rows, const CountsQuery& query);

/// Opens (creating and migrating when needed) the store a URL names: "sqlite:PATH" or "postgresql://..."
/// (also "postgres://..."). Returns nullptr and sets `error` when the URL is malformed or opening fails.
std::unique_ptr<Store> open_store(std::string_view url, std::string& error);

/// Body compression shared by the implementations (zlib; the original size travels with the bytes).
std::string compress_body(std::string_view text);
/// Reads back what compress_body() wrote or a Run::gzip_body (zlib or gzip, told apart by their headers).
/// Returns false when `stored` is neither, or does not decompress to exactly `size` bytes.
bool decompress_body(std::string_view stored, int64_t size, std::string& text);

}  // namespace sampler::store
