// The upload and the spool: a report gzip-compressed and POSTed to the collector within the time left after the
// program's end, or kept in the spool until a later run reaches the collector.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "launcher/settings.h"

namespace sampler::launcher {

using Clock = std::chrono::steady_clock;

enum class UploadStatus { kSent, kRejected, kUnreachable };

/// POSTs a gzip report to URL/api/reports with "Authorization: APIKey KEY", within `timeout_ms`. kRejected: the
/// collector answered with a 4xx that retrying will not change (the report is dropped); kUnreachable: no
/// answer, 5xx, 408 or 429 (the report waits in the spool). `answer` gets the JSON answer or curl's error.
/// `ca_file`, when not empty, is the PEM file of the certificate authorities to trust for https (else the
/// system's).
UploadStatus upload_report(const std::string& url, const std::string& api_key, std::string_view gzip_body,
                           uint64_t timeout_ms, std::string& answer, const std::string& ca_file = {});

/// gzip of `text` (the upload's body and the spool's files), one member: at gzip's default level up to 1 MiB, at
/// its fastest level above. Compression stops at `compress_until`: the rest of `text` goes in stored
/// (uncompressed) blocks, at copying speed, and `left_uncompressed` (when given) says how many bytes that was.
/// "" if zlib fails.
std::string gzip_text(std::string_view text, Clock::time_point compress_until,
                      size_t* left_uncompressed = nullptr);

/// Sends report `run_id` (its whole `text`) to settings.upload_url by `deadline` (the program's end plus
/// --upload-timeout-ms), then what waited in the spool while time remains; spools it when the collector cannot
/// be reached. Returns what became of it ("sent to URL: ANSWER", "refused by ...", "spooled in ...", "lost ...").
std::string deliver(const LaunchSettings& settings, const std::string& run_id, std::string_view text,
                    Clock::time_point deadline);

}  // namespace sampler::launcher
