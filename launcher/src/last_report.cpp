// The last report, for --show-last (last_report.h).
#include "last_report.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

#include "launcher/launcher.h"
#include "private_files.h"
#include "sections/diagnostics.h"

namespace sampler::launcher {
namespace {

// The last report for --show-last, one file "last": a line "sampler-run-last BYTES", the status line, then the
// report's BYTES; what follows is left from an earlier, longer report. Written in place, never replaced: a new
// file renamed over the old one frees the old one's blocks, and on a filesystem mounted with `discard` (this
// machine's) that waits for the disk, several ms per run (docs/performance.md). flock() keeps two launchers from
// mixing their writes, and --show-last from reading half of one.
constexpr std::string_view kLastHeader = "sampler-run-last ";

}  // namespace

bool write_last(const std::string& path, std::string_view status, std::string_view report) {
  int fd = open_private_file(path);
  if (fd < 0) return false;
  flock(fd, LOCK_EX);
  std::string bytes = std::string(kLastHeader) + std::to_string(report.size()) + "\n";
  bytes.append(status).append(report);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  // Shrink only when much is left over: freeing blocks is what costs.
  struct stat st{};
  if (done == bytes.size() && fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) > bytes.size() + (1u << 20)) {
    if (ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) done = 0;
  }
  close(fd);
  return done == bytes.size();
}

namespace {

// Reads what write_last() wrote; false when there is none or it is not in that form.
bool read_last(const std::string& path, std::string& status, std::string& report) {
  std::string bytes, why;
  if (!read_private_file(path, kMaxReportBytes + (1u << 20), bytes, why)) return false;
  std::string_view rest = bytes;
  if (!rest.starts_with(kLastHeader)) return false;
  rest.remove_prefix(kLastHeader.size());
  size_t size = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), size);
  if (ec != std::errc() || end == rest.data() + rest.size() || *end != '\n') return false;
  rest.remove_prefix(static_cast<size_t>(end - rest.data()) + 1);
  size_t newline = rest.find('\n');
  if (newline == std::string_view::npos || rest.size() - newline - 1 < size) return false;
  status = rest.substr(0, newline + 1);
  report = rest.substr(newline + 1, size);
  return true;
}

}  // namespace

int show_last(const LaunchSettings& settings) {
  std::string report, status;
  if (settings.state_dir.empty()) {
    std::fprintf(stderr, "sampler-run: no state directory (no private home directory of this user's)\n");
    return 1;
  }
  if (!read_last(settings.state_dir + "/last", status, report)) {
    std::fprintf(stderr, "sampler-run: no report has been sent yet (nothing in '%s')\n",
                 escape_control_characters(settings.state_dir).c_str());
    return 1;
  }
  if (status.ends_with('\n')) status.pop_back();
  std::fprintf(stderr, "sampler-run: %s\n", escape_control_characters(status).c_str());
  std::fwrite(report.data(), 1, report.size(), stdout);
  return 0;
}

}  // namespace sampler::launcher
