#include "collector/request.h"

#include "collector/console.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "analysis/run_summary.h"
#include "sections/diagnostics.h"
#include "sections/hex.h"
#include "sections/line_reader.h"
#include "sections/lines.h"
#include "sections/report.h"

namespace sampler::collector {
namespace {

std::array<unsigned char, 32> sha256(std::string_view text) {
  std::array<unsigned char, 32> digest{};
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return digest;
}


uint64_t fnv1a(std::string_view text, uint64_t hash = 0xcbf29ce484222325ull) {
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

// Reads a report's structure for validate_report(): the outcome subreport's body and the crash stack.
class Validator : public ReportVisitor {
 public:
  void begin_subreport(std::string_view id, uint64_t line) override {
    ++subreports;
    current_ = id == "outcome" ? kOutcome : id == "main-backtrace" ? kBacktrace : id == "interim" ? kInterim : kOther;
    if (current_ == kOutcome) {
      ++outcomes;
      outcome_line = line;
    }
    if (current_ == kInterim) {  // the last one counts (a program's own interim reports come before sampler-run's)
      interim_line = line;
      interim_body.clear();
    }
    if (current_ == kBacktrace) backtrace_hash = fnv1a("main-backtrace");
  }
  void body_line(std::string_view line, uint64_t) override {
    if (current_ == kOutcome) {
      outcome_body.append(line).append("\n");
    } else if (current_ == kInterim) {
      interim_body.append(line).append("\n");
    } else if (current_ == kBacktrace) {
      // The signal line names the crash; the stack (cbf, or legacy lines) tells crashes apart. Module
      // lines are left out: load addresses differ from run to run.
      if (line.starts_with("signal:")) {
        std::string_view rest = line.substr(7);
        size_t colon = rest.find(':');
        std::string_view name = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        signal_name = std::string(name.substr(0, name.find(':')));
      } else if (!line.starts_with("{{{")) {
        backtrace_hash = fnv1a(line, backtrace_hash);
        have_stack = true;
      }
    }
  }
  void end_subreport(bool) override { current_ = kOther; }

  int outcomes = 0;
  size_t subreports = 0;
  uint64_t outcome_line = 0;
  std::string outcome_body;
  uint64_t interim_line = 0;  // 0: no interim subreport
  std::string interim_body;
  std::string signal_name;
  uint64_t backtrace_hash = 0;
  bool have_stack = false;

 private:
  enum { kOther, kOutcome, kBacktrace, kInterim } current_ = kOther;
};

std::string first_error(const DiagnosticList& list) {
  for (const Diagnostic& d : list.items) {
    if (d.severity == Severity::kError) return "line " + std::to_string(d.line) + ": " + d.message;
  }
  return "malformed report";
}

}  // namespace

std::string hash_key_hex(std::string_view key) {
  std::array<unsigned char, 32> digest = sha256(key);
  return hex_bytes(digest.data(), digest.size());
}

bool KeyTable::load(std::string_view text, std::string& error) {
  uint64_t number = 0;
  while (!text.empty()) {
    std::string_view line = sampler::text::take_line(text);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    size_t tab = line.find('\t');
    if (tab == 0 || tab == std::string_view::npos || tab + 1 == line.size()) {
      error = "line " + std::to_string(number) + ": expected APP<TAB>KEY";
      return false;
    }
    Entry entry;
    entry.holder.app = line.substr(0, tab);
    std::string_view key = line.substr(tab + 1);
    if (const size_t second = key.find('\t'); second != std::string_view::npos) {
      std::string_view what = key.substr(second + 1);
      key = key.substr(0, second);
      entry.holder.reports = false;
      for (;;) {
        const std::string_view word = what.substr(0, what.find(','));
        if (word == "reports") {
          entry.holder.reports = true;
        } else if (word == "symbols") {
          entry.holder.symbols = true;
        } else if (word == "replace-symbols") {
          entry.holder.symbols = entry.holder.replace_symbols = true;
        } else if (word == "read") {
          entry.holder.read = true;
        } else if (word == "plans") {
          entry.holder.plans = true;
        } else {
          error = "line " + std::to_string(number) + ": unknown permission '" + std::string(word) +
                  "' after the key (expected reports, symbols, replace-symbols, read, plans, or several: "
                  "reports,symbols)";
          return false;
        }
        if (word.size() == what.size()) break;
        what.remove_prefix(word.size() + 1);
      }
      if (key.empty()) {
        error = "line " + std::to_string(number) + ": expected APP<TAB>KEY";
        return false;
      }
    }
    if (key.starts_with("sha256:")) {
      std::string_view digits = key.substr(7);
      if (digits.size() != 64) {
        error = "line " + std::to_string(number) + ": a sha256: key needs 64 hexadecimal digits";
        return false;
      }
      for (size_t i = 0; i < 32; ++i) {
        int high = hex_digit_value(digits[2 * i]), low = hex_digit_value(digits[2 * i + 1]);
        if (high < 0 || low < 0) {
          error = "line " + std::to_string(number) + ": a sha256: key needs 64 hexadecimal digits";
          return false;
        }
        entry.hash[i] = static_cast<unsigned char>(high * 16 + low);
      }
    } else {
      entry.hash = sha256(key);
    }
    entry.holder.key_hash = hex_bytes(entry.hash.data(), entry.hash.size());
    entries_.push_back(std::move(entry));
  }
  return true;
}

std::optional<KeyTable::Holder> KeyTable::authenticate(std::string_view authorization) const {
  constexpr std::string_view kScheme = "APIKey ";
  if (!authorization.starts_with(kScheme)) return std::nullopt;
  std::vector<Holder> found = holders(authorization.substr(kScheme.size()));
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::vector<KeyTable::Holder> KeyTable::holders(std::string_view key) const {
  std::array<unsigned char, 32> presented = sha256(key);
  // Every entry is compared, whatever matched: the time taken says nothing about which key is close.
  std::vector<Holder> found;
  for (const Entry& entry : entries_) {
    if (CRYPTO_memcmp(entry.hash.data(), presented.data(), presented.size()) == 0) found.push_back(entry.holder);
  }
  return found;
}

bool RateLimiter::allow(const std::string& key, double now) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = buckets_.try_emplace(key, Bucket{burst_, now});
  Bucket& bucket = it->second;
  if (!inserted) {
    bucket.tokens = std::min(burst_, bucket.tokens + (now - bucket.last) * per_second_);
    bucket.last = now;
  }
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

void RateLimiter::charge(const std::string& key, double tokens) {
  std::lock_guard lock(mutex_);
  if (auto it = buckets_.find(key); it != buckets_.end()) it->second.tokens -= tokens;
}

DecodeStatus decode_body(std::string_view body, std::string_view content_encoding, size_t max_bytes,
                         std::string& text, std::string& error, bool* one_gzip_member) {
  if (one_gzip_member != nullptr) *one_gzip_member = false;
  bool gzip = content_encoding == "gzip" || content_encoding == "x-gzip" ||
              (body.size() >= 2 && static_cast<unsigned char>(body[0]) == 0x1f &&
               static_cast<unsigned char>(body[1]) == 0x8b);
  if (!gzip) {
    if (!content_encoding.empty() && content_encoding != "identity") {
      error = "unsupported Content-Encoding (gzip or none)";
      return DecodeStatus::kCorrupt;
    }
    if (body.size() > max_bytes) {
      error = "the report is larger than " + std::to_string(max_bytes) + " bytes";
      return DecodeStatus::kTooLarge;
    }
    text.assign(body);
    return DecodeStatus::kOk;
  }
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    error = "cannot start decompressing";
    return DecodeStatus::kCorrupt;
  }
  text.clear();
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  stream.avail_in = static_cast<uInt>(body.size());
  char chunk[64 * 1024];
  DecodeStatus status = DecodeStatus::kOk;
  int members = 1;
  for (;;) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    int rc = inflate(&stream, Z_NO_FLUSH);
    size_t got = sizeof chunk - stream.avail_out;
    if (text.size() + got > max_bytes) {
      error = "the report decompresses to more than " + std::to_string(max_bytes) + " bytes";
      status = DecodeStatus::kTooLarge;
      break;
    }
    text.append(chunk, got);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (gzip -c a b) are one report, as gunzip reads them.
      if (stream.avail_in == 0) break;
      ++members;
      if (inflateReset(&stream) != Z_OK) {
        status = DecodeStatus::kCorrupt;
        break;
      }
      continue;
    }
    if (rc == Z_BUF_ERROR && stream.avail_in == 0) {
      error = "the gzip data is cut short";
      status = DecodeStatus::kCorrupt;
      break;
    }
    if (rc != Z_OK) {
      error = std::string("corrupt gzip data") + (stream.msg ? std::string(": ") + stream.msg : "");
      status = DecodeStatus::kCorrupt;
      break;
    }
  }
  inflateEnd(&stream);
  if (one_gzip_member != nullptr) *one_gzip_member = status == DecodeStatus::kOk && members == 1;
  return status;
}

bool validate_report(std::string_view text, ValidReport& report, std::string& error) {
  if (text.find('\0') != std::string_view::npos) {
    uint64_t line = 1;
    for (char c : text.substr(0, text.find('\0'))) line += c == '\n';
    error = "line " + std::to_string(line) + ": a NUL byte (a report is text)";
    return false;
  }
  DiagnosticList diagnostics;
  Validator validator;
  {
    LineReader input(text, "report", diagnostics);
    if (!read_report(input, validator) || diagnostics.error_count() > 0) {
      error = first_error(diagnostics);
      return false;
    }
  }
  {
    // The samples sections checked, counted and summarized for the console in one pass (analysis/run_summary.h).
    analysis::RunSummarizer summarizer;
    LineReader input(text, "report", diagnostics);
    if (!read_report(input, summarizer, summarizer) || diagnostics.error_count() > 0) {
      error = first_error(diagnostics);
      return false;
    }
    report.sections = summarizer.sections();
    report.summary = summarizer.bytes();
  }
  report.subreports = validator.subreports;
  if (validator.outcomes != 1) {
    error = validator.outcomes == 0 ? "line 1: no outcome subreport (sampler-run adds one; it holds the run-id)"
                                    : "line " + std::to_string(validator.outcome_line) + ": a second outcome subreport";
    return false;
  }
  report.outcome = Outcome();  // parse_outcome() sets what the body has: nothing left from an earlier report
  if (!parse_outcome(validator.outcome_body, validator.outcome_line + 1, report.outcome, error)) return false;
  // An interim report: a snapshot of a run still going, whose outcome says neither how it ended nor when.
  // A report whose outcome has its end is final, whatever interim subreport the program left in it
  // (docs/decisions.md, "Interim reports at the collector").
  report.interim_sequence.reset();
  if (validator.interim_line > 0 && !report.outcome.exit_status && !report.outcome.signal) {
    uint64_t sequence = 0;
    if (!parse_interim(validator.interim_body, validator.interim_line + 1, sequence, error)) return false;
    report.interim_sequence = static_cast<int64_t>(sequence);
  }
  report.crash_signature.clear();
  if (validator.have_stack || !validator.signal_name.empty()) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(validator.backtrace_hash));
    report.crash_signature = (validator.signal_name.empty() ? "unknown" : validator.signal_name) + ":" + hash;
  }
  return true;
}

std::string new_uuid() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  unsigned char bytes[16];
  uint64_t a = generator(), b = generator();
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<unsigned char>(a >> (8 * i));
    bytes[8 + i] = static_cast<unsigned char>(b >> (8 * i));
  }
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40);
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);
  std::string h = hex_bytes(bytes, 16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

Collector::Collector(store::Store& store, KeyTable keys, Limits limits)
    : store_(store), keys_(std::move(keys)), limits_(limits), rate_(limits.rate_per_second, limits.rate_burst),
      symbol_parts_(limits.max_symbol_bytes, limits.max_symbol_parts, limits.max_pending_symbol_bytes,
                    limits.symbol_part_timeout_seconds),
      console_(std::make_unique<Console>(store_, keys_)) {}

Collector::~Collector() = default;

Response Collector::failure(int status, std::string_view code, std::string_view message, std::string_view app) {
  Response response;
  response.status = status;
  std::string uuid = new_uuid();
  response.body = "{\"success\": false, \"status\": " + std::to_string(status) + ", \"uuid\": \"" + uuid +
                  "\", \"error\": {\"Code\": " + json_string(code) + ", \"Text\": " + json_string(message) + "}}\n";
  // The log line escapes like the answer: nothing a client sends reaches the log raw.
  response.log = uuid + " " + std::to_string(status) + " " + std::string(code) +
                 (app.empty() ? std::string() : " app=" + json_string(app)) + " " + json_string(message);
  ++rejected_;
  return response;
}

Response Collector::handle(const Request& request, double now) {
  Response response;
  if (request.path == "/api/reports") {
    response = request.method == "POST" ? upload(request, now)
                                        : failure(405, "method-not-allowed", "use POST for /api/reports");
  } else if (request.path.starts_with("/api/symbols-")) {
    response = request.method == "POST" ? upload_symbols(request, now)
                                        : failure(405, "method-not-allowed", "use POST for /api/symbols-*");
  } else if (request.path == "/api/plans") {
    response = request.method == "POST" ? upload_plan(request, now)
                                        : failure(405, "method-not-allowed",
                                                  "use POST for /api/plans (GET /api/plans/ID reads a plan)");
  } else if (request.path.starts_with("/api/plans/")) {
    response = request.method == "GET" ? download_plan(request, now)
                                       : failure(405, "method-not-allowed", "use GET for /api/plans/ID");
  } else if (request.path == "/health") {
    // Open to anyone and called often: one tiny query, never a scan of the runs (that is /metrics', cached).
    std::string error;
    if (!store_.ping(error)) {
      response = failure(503, "storage-unavailable", error);
    } else {
      response.body = "{\"success\": true, \"status\": 200}\n";
    }
  } else if (request.path == "/ui" || request.path.starts_with("/ui/")) {
    response = console_->handle(request);
  } else if (request.path == "/metrics") {
    response.content_type = "text/plain; version=0.0.4";
    response.body = metrics(now);
  } else {
    response = failure(404, "not-found",
                       "no such path (POST /api/reports, POST /api/symbols-gsym|ranges|returnpads, POST /api/plans, "
                       "GET /api/plans/ID, GET /health, GET /metrics, GET /ui/)");
  }
  int digit = response.status / 100;
  ++by_status_[digit >= 2 && digit <= 5 ? static_cast<size_t>(digit) : 0];
  return response;
}

std::optional<Response> Collector::admit(const Request& request, double now, bool KeyTable::Holder::*may,
                                         std::string_view denied, std::string_view too_large_hint,
                                         KeyTable::Holder& holder) {
  std::optional<KeyTable::Holder> found = keys_.authenticate(request.authorization);
  if (!found) return failure(401, "unauthorized", "missing or unknown API key (Authorization: APIKey KEY)");
  holder = std::move(*found);
  const std::string& app = holder.app;
  if (may != nullptr && !(holder.*may)) return failure(403, "not-allowed", denied, app);
  // Per key, as documented: one key flooding does not lock out the application's other keys (its build machine).
  if (!rate_.allow(holder.key_hash, now)) {
    return failure(429, "rate-limited", "too many uploads for this API key", app);
  }
  if (request.body_too_large) {
    return failure(413, "body-too-large",
                   "the request body is larger than " + std::to_string(limits_.max_body_bytes) + " bytes" +
                       std::string(too_large_hint),
                   app);
  }
  return std::nullopt;
}

Response Collector::upload(const Request& request, double now) {
  KeyTable::Holder holder;
  if (std::optional<Response> refused = admit(request, now, &KeyTable::Holder::reports,
                                              "this API key may not upload reports (keys.tsv: reports)", "", holder))
    return *refused;
  const std::string& app = holder.app;
  std::string_view type = request.content_type.substr(0, request.content_type.find(';'));
  if (!type.empty() && type != "text/plain" && type != "application/octet-stream" && type != "application/gzip" &&
      type != "application/x-gzip") {
    return failure(415, "unsupported-media-type",
                   "Content-Type must be text/plain, application/gzip or application/octet-stream", app);
  }
  bytes_ += request.body.size();
  std::string text, error;
  bool one_gzip_member = false;
  const DecodeStatus decoded =
      decode_body(request.body, request.content_encoding, limits_.max_report_bytes, text, error, &one_gzip_member);
  // The work of an upload (decompressing, counting, validating, storing) grows with its text: admit() took one
  // token, the rest of its units are charged now, whether or not the report is then accepted.
  const size_t worked = decoded == DecodeStatus::kTooLarge ? limits_.max_report_bytes : text.size();
  if (const size_t units = (worked + limits_.rate_unit_bytes - 1) / limits_.rate_unit_bytes; units > 1) {
    rate_.charge(holder.key_hash, static_cast<double>(units - 1));
  }
  switch (decoded) {
    case DecodeStatus::kOk: break;
    case DecodeStatus::kTooLarge: return failure(413, "report-too-large", error, app);
    case DecodeStatus::kCorrupt: return failure(400, "bad-encoding", error, app);
  }
  // Counted before parsing: a line costs the analyses of every stored run, whatever it holds.
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) +
                       (!text.empty() && text.back() != '\n');
  if (lines > limits_.max_report_lines) {
    return failure(413, "report-too-large",
                   "the report has " + std::to_string(lines) + " lines, more than " +
                       std::to_string(limits_.max_report_lines) + " (--max-lines)",
                   app);
  }
  ValidReport report;
  if (!validate_report(text, report, error)) return failure(400, "bad-report", error, app);
  if (report.sections > limits_.max_report_sections || report.subreports > limits_.max_subreports) {
    const bool sections = report.sections > limits_.max_report_sections;
    return failure(413, "report-too-large",
                   "the report has " + std::to_string(sections ? report.sections : report.subreports) +
                       (sections ? " samples and timestamps sections" : " subreports") + ", more than " +
                       std::to_string(sections ? limits_.max_report_sections : limits_.max_subreports) +
                       (sections ? " (--max-sections)" : " (--max-subreports)"),
                   app);
  }
  if (!report.outcome.app.empty() && report.outcome.app != app) {
    return failure(403, "wrong-app", "the outcome names application '" + report.outcome.app +
                                         "' but the API key is for '" + app + "'", app);
  }
  store::Run run;
  run.run_id = report.outcome.run_id;
  run.app = app;
  run.version = report.outcome.version;
  run.exit_status = report.outcome.exit_status;
  run.signal = report.outcome.signal;
  run.failed = report.outcome.signal.has_value() || report.outcome.exit_status.value_or(0) != 0;
  run.crash_signature = report.crash_signature;
  run.interim_sequence = report.interim_sequence;
  run.summary = std::move(report.summary);
  if (store_.keeps_counts() && !run.summary.empty()) run.counts = summary_counts(run.summary);
  run.body = std::move(text);
  // The upload's gzip is stored as it came: compressing the report again cost more than all the rest.
  if (one_gzip_member) run.gzip_body = request.body;
  store::PutStatus status = store_.put(run, error);
  if (status == store::PutStatus::kError) return failure(503, "storage-error", error, app);
  console_->stored(app);  // committed: the next page of the application shows it (Console::set_fresh_window)
  bool duplicate = status == store::PutStatus::kDuplicate;
  ++(duplicate ? duplicates_ : stored_);
  Response response;
  response.body = "{\"success\": true, \"status\": 200, \"id\": " + json_string(run.run_id) +
                  ", \"duplicate\": " + (duplicate ? "true" : "false") +
                  current_plan_member(app, run.version, response) + "}\n";
  return response;
}

int64_t Collector::stored_runs(double now) {
  // One request counts at a time; the others (and all within kRunsCountSeconds) take the last count.
  std::unique_lock lock(runs_mutex_, std::try_to_lock);
  if (lock.owns_lock() && (runs_counted_at_ < 0 || now - runs_counted_at_ >= kRunsCountSeconds)) {
    std::string error;
    if (int64_t n = store_.count(error); n >= 0) runs_.store(n);
    runs_counted_at_ = now;
  }
  return runs_.load();
}

std::string Collector::metrics(double now) {
  std::string out;
  auto counter = [&out](const char* name, const char* help, uint64_t value, const std::string& labels = {}) {
    if (labels.empty() || labels.find("2xx") != std::string::npos) {
      out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
    }
    out += std::string(name) + labels + " " + std::to_string(value) + "\n";
  };
  counter("sampler_reports_stored_total", "Reports stored.", stored_.load());
  counter("sampler_reports_duplicate_total", "Reports acknowledged that were already stored.", duplicates_.load());
  counter("sampler_requests_rejected_total", "Requests answered with a failure.", rejected_.load());
  counter("sampler_request_bytes_total", "Bytes of upload bodies received.", bytes_.load());
  // Fewer commits than reports stored: uploads arriving together shared a transaction (group commit).
  counter("sampler_store_commits_total", "Transactions the store committed for uploads.",
          static_cast<uint64_t>(store_.commits()));
  if (int64_t runs = stored_runs(now); runs >= 0) {
    out += "# HELP sampler_store_runs Runs in the store, all applications (counted at most every " +
           std::to_string(static_cast<int>(kRunsCountSeconds)) + " s).\n# TYPE sampler_store_runs gauge\n" +
           "sampler_store_runs " + std::to_string(runs) + "\n";
  }
  const Console::KeptStats kept = console_->kept_stats();
  out += "# HELP sampler_console_kept_bytes The runs the console keeps between predictor pages (an estimate; "
         "serve --console-memory bounds it).\n# TYPE sampler_console_kept_bytes gauge\nsampler_console_kept_bytes " +
         std::to_string(kept.bytes) + "\n# HELP sampler_console_kept_apps The applications whose runs are kept.\n"
         "# TYPE sampler_console_kept_apps gauge\nsampler_console_kept_apps " + std::to_string(kept.apps) + "\n" +
         "# HELP sampler_console_kept_counts_bytes The database's counts the console keeps between predictor pages "
         "(an estimate; serve --console-memory bounds it too).\n# TYPE sampler_console_kept_counts_bytes gauge\n"
         "sampler_console_kept_counts_bytes " + std::to_string(kept.counts_bytes) + "\n";
  counter("sampler_console_kept_dropped_total", "Applications whose kept runs were dropped to stay within "
          "serve --console-memory.", kept.dropped);
  const char* classes[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
  for (size_t digit : {2, 4, 5, 0}) {
    counter("sampler_responses_total", "Responses by status class.", by_status_[digit].load(),
            std::string("{class=\"") + classes[digit] + "\"}");
  }
  return out;
}

}  // namespace sampler::collector
