// The last report sampler-run sent or spooled, kept for --show-last (launcher/launcher.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sampler::launcher {

/// The largest report read back from the program (the collector's default --max-report).
inline constexpr size_t kMaxReportBytes = 64u << 20;

/// The size of the shared counters' memfd (SAMPLER_SHARED_FD): sparse, so only what the program's units fill
/// takes memory (docs/performance.md has the figures: a gzip-sized program fills a few hundred KiB).
inline constexpr size_t kSharedCountersBytes = 64u << 20;

/// Writes the last report (`status`, one line with its "\n", then `report`) into the file `path`, in place.
bool write_last(const std::string& path, std::string_view status, std::string_view report);

}  // namespace sampler::launcher
