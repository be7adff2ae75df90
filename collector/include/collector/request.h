// The collector's request path: small functions with no HTTP library in
// them, so that tests and the fuzz target call them directly. The server (server.h) only moves bytes between
// libmicrohttpd and Collector::handle().
//
//   authenticate (KeyTable) -> rate limit (RateLimiter) -> decode (gzip, bounded) -> validate (the formats
//   library) -> store (store::Store)
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/outcome.h"
#include "collector/symbols_api.h"
#include "store/store.h"

namespace sampler::collector {

/// Every limit of the collector, with its default; each is a `serve` option (docs/collection.md).
struct Limits {
  size_t max_body_bytes = 4u << 20;       ///< --max-body: a request body larger than this gets 413
  size_t max_report_bytes = 64u << 20;    ///< --max-report: decompressed size; a larger report (gzip bomb) gets 413
  // What a report holds, bounded by what a real one needs (10^6 sites write 6 MB in 10^6 lines; a section per unit
  // and scheme; a handful of subreports): a report key cannot make each stored run cost the analyses far more.
  size_t max_report_lines = 16u << 20;    ///< --max-lines: lines of a report; more get 413
  size_t max_report_sections = 1u << 17;  ///< --max-sections: samples and timestamps sections; more get 413
  size_t max_subreports = 256;            ///< --max-subreports: subreports of a report; more get 413
  double rate_per_second = 50;            ///< --rate: uploads per second per API key, sustained (429 beyond)
  double rate_burst = 200;                ///< --burst: uploads per API key allowed at once before the rate applies
  /// What one token of the rate limit buys: an upload costs a token per started unit of report text it decompresses
  /// to, so that a key's CPU, not only its count of uploads, is bounded (a typical report is well under a unit).
  size_t rate_unit_bytes = 1u << 20;
  unsigned timeout_seconds = 30;          ///< --timeout: an idle connection (slow or stalled client) is closed
  unsigned max_connections = 256;         ///< --max-connections: further connections are refused
  /// --request-timeout: a request (its headers and body) not received in full this long after it began is dropped,
  /// however steadily its bytes trickle in (the idle timeout alone lets a slow sender hold a connection forever).
  unsigned request_seconds = 60;
  unsigned max_connections_per_client = 32;  ///< --max-connections-per-client: from one address at once
  unsigned threads = 32;  ///< --threads: request threads; those waiting for a commit share it (group commit)
  // Symbol uploads (collector/symbols_api.h). Each part is a request body: at most max_body_bytes.
  size_t max_symbol_bytes = 512u << 20;   ///< --max-symbols: a whole symbol file larger than this gets 413
  uint32_t max_symbol_parts = 4096;       ///< a FileParts above this gets 400
  size_t max_pending_symbol_bytes = size_t{1} << 30;  ///< partial files together; beyond: 503, try later
  double symbol_part_timeout_seconds = 600;  ///< a partial file without a new part for this long is dropped
};

/// API keys from keys.tsv (APP<TAB>KEY[<TAB>WHAT] per line, '#' comments). Keys are kept only as SHA-256 hashes; a
/// KEY written as "sha256:HEX" is already one, so the file itself need not hold secrets. WHAT is what the key may
/// do, comma-separated: "reports" (POST /api/reports), "symbols" (POST /api/symbols-*), "replace-symbols"
/// (symbols, and different bytes may replace a stored file), "read" (the console, GET /ui/: what is stored for
/// the line's application), "plans" (POST /api/plans: the sampling plan every run of a release then gets); without
/// it, reports only: an application's key reaches all its users, who must not
/// replace its symbols nor read what others sent (docs/decisions.md). One key on several lines holds each line's
/// rights for that line's application.
class KeyTable {
 public:
  /// Whom a key names and what it may upload.
  struct Holder {
    std::string app;
    std::string key_hash;  ///< the key's SHA-256 in hex: names the key (its rate limit) without holding it
    bool reports = true;
    bool symbols = false;
    bool replace_symbols = false;
    bool read = false;
    bool plans = false;
  };
  /// Parses the file's text; returns false and sets `error` ("line N: ...") on a malformed line.
  bool load(std::string_view text, std::string& error);
  /// The holder of the key the Authorization header ("APIKey KEY") carries, or nullopt. The presented key's hash
  /// is compared with every stored hash in constant time, without stopping at a match.
  std::optional<Holder> authenticate(std::string_view authorization) const;
  /// Every line that holds `key` (the key itself, not a header), in file order: each its application and rights.
  /// Compared as authenticate() compares (every entry, in constant time).
  std::vector<Holder> holders(std::string_view key) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Holder holder;
    std::array<unsigned char, 32> hash;
  };
  std::vector<Entry> entries_;
};

/// SHA-256 of `key` (what KeyTable keeps), in lower-case hex: for writing "sha256:" keys.
std::string hash_key_hex(std::string_view key);

/// A token bucket per API key (KeyTable::Holder::key_hash): keys of one application are limited apart.
class RateLimiter {
 public:
  RateLimiter(double per_second, double burst) : per_second_(per_second), burst_(burst) {}
  /// True if `key` may make one more request at time `now` (seconds, monotonic); it then costs one token.
  bool allow(const std::string& key, double now);
  /// Takes `tokens` more from `key`'s bucket for work its request turned out to cost. The bucket may go below
  /// zero: the key then waits until the rate has paid the debt.
  void charge(const std::string& key, double tokens);

 private:
  struct Bucket {
    double tokens;
    double last;
  };
  double per_second_, burst_;
  std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;
};

enum class DecodeStatus { kOk, kTooLarge, kCorrupt };

/// The report's text from the request body: gunzipped when Content-Encoding says gzip or the body starts with
/// gzip's magic bytes, never more than `max_bytes` of output (a gzip bomb stops there). `one_gzip_member`, when
/// given, is set to whether the body was exactly one gzip member (the store can then keep it as it is).
DecodeStatus decode_body(std::string_view body, std::string_view content_encoding, size_t max_bytes,
                         std::string& text, std::string& error, bool* one_gzip_member = nullptr);

/// What validation learns from a well-formed report.
struct ValidReport {
  Outcome outcome;
  std::string crash_signature;  ///< "SIGNAME:HASH" of the main-backtrace's stack, "" without one
  /// An interim report's sequence: set when the report has an interim subreport and its outcome neither an
  /// exit-status nor a signal (the run still going); unset for a final report.
  std::optional<int64_t> interim_sequence;
  size_t subreports = 0;        ///< subreports, as the formats library reads them
  size_t sections = 0;          ///< samples and timestamps sections
  std::string summary;          ///< what the console ranks the run by (analysis/run_summary.h)
};

/// Checks `text` with the formats library (subreport structure, samples sections, the outcome subreport).
/// Returns false and sets `error` to the first problem, "line N: ...".
bool validate_report(std::string_view text, ValidReport& report, std::string& error);

/// A random (version 4) UUID: the id that ties a failure answer to its line in the server's log.
std::string new_uuid();


/// What the server hands to handle(): the parts of an HTTP request the collector looks at.
struct Request {
  std::string_view method;
  std::string_view path;
  std::string_view authorization;
  std::string_view content_type;
  std::string_view content_encoding;
  std::string_view body;
  bool body_too_large = false;  ///< the server stopped reading at Limits::max_body_bytes
  std::string_view file_id, file_part, file_parts;  ///< symbol uploads' headers (symbfile format)
  std::string_view cookie;  ///< the Cookie header (the console's key)
  /// The `version` query argument, decoded (POST /api/plans?version=V: the release a plan is for); unset when the
  /// request has none.
  std::optional<std::string_view> version;
  bool secure = false;      ///< served over TLS (directly, or a proxy's X-Forwarded-Proto: https): cookies get Secure
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string log;  ///< a line for the server's log ("" for none); failures carry the answer's uuid
  std::vector<std::pair<std::string, std::string>> headers;  ///< further headers (the console's Set-Cookie, ...)
};

class Console;  // collector/console.h

/// The request path: routes /api/reports, /api/symbols-* (symbols_api.h), /api/plans (plans_api.cpp), /health and
/// /metrics, answered in
/// the symbfile upload API's JSON, and the console's pages under /ui/ (console.h).
class Collector {
 public:
  Collector(store::Store& store, KeyTable keys, Limits limits);
  ~Collector();
  /// The console, to configure before serving (its site information directory).
  Console& console() { return *console_; }
  /// True if the Authorization header carries a known key. The server asks before reading a body: a request
  /// without a key is answered (401, by handle()) without holding its body in memory.
  bool knows_key(std::string_view authorization) const { return keys_.authenticate(authorization).has_value(); }
  /// Thread-safe. `now` is monotonic seconds (the rate limiter's clock).
  Response handle(const Request& request, double now);
  /// A failure answer in the API's JSON, with a fresh uuid that its log line repeats; counted as rejected.
  Response failure(int status, std::string_view code, std::string_view message, std::string_view app = {});
  const Limits& limits() const { return limits_; }

 private:
  Response upload(const Request& request, double now);
  Response upload_symbols(const Request& request, double now);  // collector/src/symbols_api.cpp
  Response upload_plan(const Request& request, double now);     // collector/src/plans_api.cpp
  Response download_plan(const Request& request, double now);   // collector/src/plans_api.cpp
  /// The `"plan"` member of a stored report's answer: the id of the current plan of (app, version), null when it
  /// has none; "" (no member: the client keeps what it has) when the store cannot say.
  std::string current_plan_member(const std::string& app, const std::string& version, Response& response);
  /// The checks every request of the API passes first, in order: a known key (else 401), allowed to do this (`may`,
  /// nullptr for any key of the application; else 403 with `denied`), within its rate (429), a body within the
  /// limit (413, `too_large_hint` appended). Sets
  /// `holder` once the key is known.
  std::optional<Response> admit(const Request& request, double now, bool KeyTable::Holder::*may,
                                std::string_view denied, std::string_view too_large_hint, KeyTable::Holder& holder);
  std::string metrics(double now);
  /// The runs in the store for /metrics: counted (a scan) at most every kRunsCountSeconds; -1 before a count.
  int64_t stored_runs(double now);
  static constexpr double kRunsCountSeconds = 10;

  store::Store& store_;
  KeyTable keys_;
  Limits limits_;
  RateLimiter rate_;
  SymbolAssembler symbol_parts_;
  std::atomic<uint64_t> stored_{0}, duplicates_{0}, rejected_{0}, bytes_{0};
  std::array<std::atomic<uint64_t>, 6> by_status_{};  // 2xx..5xx by first digit, [0] other
  std::mutex runs_mutex_;  // held by the request counting the runs
  std::atomic<int64_t> runs_{-1};
  double runs_counted_at_ = -1;  // with runs_mutex_ held
  std::unique_ptr<Console> console_;
};

}  // namespace sampler::collector
