// Helpers for the runtime's behaviour tests: run a program with a chosen environment and capture what it did,
// and read a report back with the formats library.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sampler::testing {

struct RunResult {
  int exit_code = -1;    ///< exit status, or -1 if killed
  int signal = 0;        ///< terminating signal, or 0
  pid_t pid = 0;
  std::string out;
  std::string err;
};

struct RunOptions {
  /// Variables set on top of a clean environment (PATH and HOME are kept; every SAMPLER_* is removed first).
  std::map<std::string, std::string> env;
  std::string input;
  /// Descriptor 3 of the child opened (write-only, truncated) on this file, if set.
  std::optional<std::string> fd3_file;
};

/// Runs argv[0] (a path) and waits for it. Core dumps are disabled in the child.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

std::string read_file(const std::string& path);
bool file_exists(const std::string& path);

/// A fresh directory under the test's temporary area, removed at exit of the test program.
std::string make_temp_dir();

/// One section of a samples subreport.
struct Section {
  std::string kind;  ///< "samples" or "timestamps"
  std::string unit;
  std::string scheme;
  std::string when;
  std::vector<std::vector<std::string>> rows;  ///< fields of each line
  bool complete = true;
};

/// A report as the formats library reads it.
struct ParsedReport {
  std::vector<std::string> subreport_ids;
  std::vector<bool> subreport_complete;
  std::vector<std::vector<std::string>> bodies;  ///< body lines per subreport
  std::vector<Section> sections;                  ///< of every samples subreport, in order
  std::vector<std::string> diagnostics;           ///< errors and warnings of the reader
};

ParsedReport parse_report(const std::string& text);

/// Sections matching unit and scheme (and kind), in report order.
std::vector<const Section*> find_sections(const ParsedReport& report, const std::string& unit,
                                          const std::string& scheme, const std::string& kind = "samples");

/// The integer fields of a section's rows.
std::vector<std::vector<uint64_t>> numbers(const Section& section);

}  // namespace sampler::testing
