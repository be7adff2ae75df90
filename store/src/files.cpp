#include "store/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace sampler::store {
namespace {

bool safe_file_name(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Writes a new file at `path`: what was there is removed first (a link is removed, its target untouched) and the
// file is created with O_EXCL, so a link planted in the output directory never redirects uploaded content.
bool write_new_file(const std::string& path, std::string_view bytes, std::string& error) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    error = "cannot replace '" + path + "': " + std::strerror(errno);
    return false;
  }
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = "cannot create '" + path + "': " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || done != bytes.size()) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace

bool FailureRule::failed(const Run& run) const {
  if (run.signal) return true;
  // A run stored without an exit status (an outcome from a launcher that did not know it) keeps the stored flag.
  if (!run.exit_status) return run.failed;
  return statuses[static_cast<size_t>(*run.exit_status) & 255u];
}

bool parse_failure_statuses(std::string_view text, FailureRule& rule, std::string& error) {
  rule.statuses.reset();
  if (text == "none") return true;
  auto number = [](std::string_view digits, unsigned& value) {
    if (digits.empty() || digits.size() > 3) return false;
    value = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    return value <= 255;
  };
  if (text.empty()) {
    error = "--failure-statuses wants a list such as 1,2,128-255 (or 'none')";
    return false;
  }
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    size_t dash = item.find('-');
    unsigned low = 0, high = 0;
    bool ok = dash == std::string_view::npos ? number(item, low) && number(item, high)
                                             : number(item.substr(0, dash), low) && number(item.substr(dash + 1), high);
    if (!ok || low > high) {
      error = "--failure-statuses: '" + std::string(item.substr(0, 40)) +
              "' is not an exit status (0-255) or a range LOW-HIGH";
      return false;
    }
    for (unsigned s = low; s <= high; ++s) rule.statuses.set(s);
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

int64_t write_runs(Store& store, const Query& query, const std::string& directory, const std::string& labels_path,
                   std::string& error, const FailureRule& rule, const std::function<void(uint64_t bytes)>& written,
                   bool include_unfinished) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) {
    error = "cannot create '" + directory + "': " + ec.message();
    return -1;
  }
  std::ofstream labels;
  if (!labels_path.empty()) {
    labels.open(labels_path, std::ios::trunc);
    if (!labels) {
      error = "cannot write '" + labels_path + "'";
      return -1;
    }
  }
  int64_t count = 0;
  error.clear();
  bool ok = store.for_each(
      query,
      [&](const Run& run) {
        // Run ids were checked on upload; check again: they become file names.
        if (!safe_file_name(run.run_id) || (run.interim_sequence && !include_unfinished)) return true;
        std::string path = directory + "/" + run.run_id + ".report";
        if (!write_new_file(path, run.body, error)) return false;
        if (labels.is_open()) labels << path << '\t' << (rule.failed(run) ? "failure" : "success") << '\n';
        ++count;
        if (written) written(run.body.size());
        return true;
      },
      error);
  if (labels.is_open()) {
    labels.close();
    if (!labels && error.empty()) error = "cannot write '" + labels_path + "'";
  }
  if (!ok || !error.empty()) return -1;
  return count;
}

}  // namespace sampler::store
