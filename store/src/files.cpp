#include "store/files.h"

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

}  // namespace

int64_t write_runs(Store& store, const Query& query, const std::string& directory, const std::string& labels_path,
                   std::string& error) {
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
  int64_t written = 0;
  error.clear();
  bool ok = store.for_each(
      query,
      [&](const Run& run) {
        // Run ids were checked on upload; check again: they become file names.
        if (!safe_file_name(run.run_id)) return true;
        std::string path = directory + "/" + run.run_id + ".report";
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(run.body.data(), static_cast<std::streamsize>(run.body.size()));
        out.close();
        if (!out) {
          error = "cannot write '" + path + "'";
          return false;
        }
        if (labels.is_open()) labels << path << '\t' << (run.failed ? "failure" : "success") << '\n';
        ++written;
        return true;
      },
      error);
  if (labels.is_open()) {
    labels.close();
    if (!labels && error.empty()) error = "cannot write '" + labels_path + "'";
  }
  if (!ok || !error.empty()) return -1;
  return written;
}

}  // namespace sampler::store
