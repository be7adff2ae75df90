// Labels files (analysis/labels.h): outcomes given by hand, over what the reports say.
#include "analysis/labels.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "sections/line_reader.h"

namespace sampler::analysis {

namespace fs = std::filesystem;

bool apply_labels(const std::string& labels_path, RunSet& runs, DiagnosticSink& sink) {
  int fd = ::open(labels_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    sink.error(labels_path, 0, std::string("cannot open: ") + std::strerror(errno));
    return false;
  }
  std::unordered_map<std::string, size_t> by_name;
  for (size_t r = 0; r < runs.size(); ++r) by_name.emplace(fs::path(runs.names[r]).lexically_normal().string(), r);
  bool ok = true;
  LineReader reader(fd, labels_path, sink);
  for (std::string_view line; reader.next(line);) {
    if (line.empty() || line.front() == '#') continue;
    size_t tab = line.rfind('\t');
    std::string_view label = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
    if (label != "success" && label != "failure") {
      sink.error(labels_path, reader.line_number(), "expected PATH, a tab, then 'success' or 'failure'");
      ok = false;
      continue;
    }
    std::string path = fs::path(std::string(line.substr(0, tab))).lexically_normal().string();
    auto found = by_name.find(path);
    if (found == by_name.end()) {
      sink.warning(labels_path, reader.line_number(), "no report '" + path + "' was read; label ignored");
      continue;
    }
    runs.failed[found->second] = label == "failure" ? 1 : 0;
  }
  ::close(fd);
  return ok && !reader.failed();
}

}  // namespace sampler::analysis
