// The upload and the spool (upload.h): a report is compressed and sent within the time left, or waits in the
// spool for the next run that reaches the collector.
#include "upload.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "launcher/http_client.h"
#include "plans.h"
#include "private_files.h"

namespace sampler::launcher {
namespace {

namespace fs = std::filesystem;

// The spool: RUNID.report.gz files, oldest first; bounded by age and total size.
struct SpoolEntry {
  fs::path path;
  fs::file_time_type time;
  uintmax_t size;
};

std::vector<SpoolEntry> spool_entries(const std::string& dir) {
  std::vector<SpoolEntry> entries;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.path().string().ends_with(".report.gz")) continue;
    std::error_code ignored;
    SpoolEntry e{entry.path(), entry.last_write_time(ignored), entry.file_size(ignored)};
    if (!ignored) entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const SpoolEntry& a, const SpoolEntry& b) { return a.time < b.time; });
  return entries;
}

void prune_spool(const LaunchSettings& settings) {
  std::vector<SpoolEntry> entries = spool_entries(settings.spool_dir);
  auto now = fs::file_time_type::clock::now();
  uintmax_t total = 0;
  for (const SpoolEntry& e : entries) total += e.size;
  for (const SpoolEntry& e : entries) {
    bool too_old = now - e.time > std::chrono::seconds(settings.spool_max_age_seconds);
    if (!too_old && total <= settings.spool_max_bytes) continue;
    std::error_code ignored;
    if (fs::remove(e.path, ignored)) {
      total -= e.size;
      say(settings, "dropped spooled report " + e.path.filename().string() + (too_old ? " (too old)" : " (spool full)"));
    }
  }
}

}  // namespace

std::string gzip_text(std::string_view text, Clock::time_point compress_until, size_t* left_uncompressed) {
  // Above this, gzip's fastest level: a fifth of the default's time for a slightly larger body.
  constexpr size_t kFastLevelBytes = 1u << 20;
  // Input goes to zlib in slices of this size; the clock is read between them.
  constexpr size_t kSlice = 1u << 20;
  if (left_uncompressed != nullptr) *left_uncompressed = 0;
  z_stream stream{};
  const int level = text.size() > kFastLevelBytes ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION;
  if (deflateInit2(&stream, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 64, '\0');
  size_t given = 0;
  bool storing = false;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (stream.avail_in == 0 && given < text.size()) {
      if (!storing && given > 0 && Clock::now() >= compress_until) {
        // Out of time: stored blocks for the rest (deflateParams first flushes what it has at the old level).
        storing = deflateParams(&stream, Z_NO_COMPRESSION, Z_DEFAULT_STRATEGY) == Z_OK;
        if (storing && left_uncompressed != nullptr) *left_uncompressed = text.size() - given;
      }
      const size_t slice = std::min(kSlice, text.size() - given);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data() + given));
      stream.avail_in = static_cast<uInt>(slice);
      given += slice;
    }
    // Room for a slice stored as it is, whatever the bound assumed about switching levels.
    if (out.size() - stream.total_out < kSlice + 1024) out.resize(out.size() + kSlice + 1024);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + stream.total_out);
    stream.avail_out = static_cast<uInt>(out.size() - stream.total_out);
    rc = deflate(&stream, given == text.size() ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) break;
  }
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return rc == Z_STREAM_END ? out : std::string();
}

UploadStatus upload_report(const std::string& url, const std::string& api_key, std::string_view gzip_body,
                           uint64_t timeout_ms, std::string& answer, const std::string& ca_file) {
  long status = 0;
  if (!http_post(api_endpoint(url, "/api/reports"),
                 {"Authorization: APIKey " + api_key, "Content-Type: text/plain", "Content-Encoding: gzip"}, gzip_body,
                 timeout_ms, status, answer, ca_file)) {
    return UploadStatus::kUnreachable;
  }
  if (status == 200) return UploadStatus::kSent;
  if (status >= 400 && status < 500 && status != 408 && status != 429) return UploadStatus::kRejected;
  return UploadStatus::kUnreachable;
}

std::string deliver(const LaunchSettings& settings, const std::string& run_id, std::string_view text,
                    Clock::time_point deadline) {
  std::string result;
  std::error_code ec;
  // The bound (--upload-timeout-ms, from the program's end) is shared out: compressing may take until its
  // half, sending (this report, then spooled ones) until three quarters, and the last quarter is for writing
  // the spool and the state files. A report too large to compress in time is sent partly uncompressed.
  const std::chrono::milliseconds bound(settings.upload_timeout_ms);
  size_t uncompressed = 0;
  std::string gz = gzip_text(text, deadline - bound / 2, &uncompressed);
  if (uncompressed > 0) {
    say(settings, "compressing the report took half of --upload-timeout-ms: its last " +
                      std::to_string(uncompressed) + " bytes go uncompressed");
  }
  const Clock::time_point send_until = deadline - bound / 4;
  auto remaining = [&send_until] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(send_until - Clock::now()).count();
    return static_cast<uint64_t>(std::max<int64_t>(left, 0));
  };
  std::string answer;
  UploadStatus sent = upload_report(settings.upload_url, settings.api_key, gz, remaining(), answer,
                                   settings.ca_file);
  if (sent == UploadStatus::kSent) {
    result = "sent to " + settings.upload_url + ": " + answer;
    say(settings, "report " + run_id + " " + result);
    // The answer names the release's current plan: fetched now when it is not the one cached, for the next runs.
    refresh_served_plan(settings, answer, remaining());
    // The collector answers: send what waited, oldest first, while time remains.
    std::string why;
    bool spool_usable = !settings.spool_dir.empty() && make_private_dir(settings.spool_dir, why);
    for (const SpoolEntry& entry : spool_usable ? spool_entries(settings.spool_dir) : std::vector<SpoolEntry>()) {
      if (remaining() == 0) break;
      std::string spooled, spooled_answer;
      if (!read_private_file(entry.path.string(), settings.spool_max_bytes, spooled, why)) {
        say(settings, "spooled report not sent: " + why);
        continue;
      }
      UploadStatus s = upload_report(settings.upload_url, settings.api_key, spooled, remaining(),
                                   spooled_answer, settings.ca_file);
      if (s == UploadStatus::kUnreachable) break;
      fs::remove(entry.path, ec);
      say(settings, "spooled report " + entry.path.filename().string() +
                        (s == UploadStatus::kSent ? " sent" : " refused, dropped: " + spooled_answer));
    }
  } else if (sent == UploadStatus::kRejected) {
    result = "refused by " + settings.upload_url + ": " + answer;
    say(settings, "report " + run_id + " " + result);
  } else {
    std::string why = "no spool directory";
    bool spooled = !settings.spool_dir.empty() && make_private_dir(settings.spool_dir, why) &&
                   write_private_file(settings.spool_dir + "/" + run_id + ".report.gz", gz);
    result = (spooled ? "spooled in " + settings.spool_dir : "lost (" + why + ")") + ": " + settings.upload_url +
             " unreachable: " + answer;
    say(settings, "report " + run_id + " " + result);
    if (spooled) prune_spool(settings);
  }
  return result;
}

}  // namespace sampler::launcher
