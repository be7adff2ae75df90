// The `outcome` subreport a launcher adds to a report (docs/formats.md, "The outcome subreport"): how the run
// ended and what ran. One "KEY<TAB>VALUE" line per fact; unknown keys are carried and ignored, so the format can
// grow. Both ends use this: sampler-run writes it, the collector reads it into the store's columns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sampler::collector {

struct Outcome {
  std::string run_id;   ///< 1..64 characters of [0-9A-Za-z_-]
  std::string app;
  std::string version;
  std::optional<int> exit_status;
  std::optional<int> signal;
  double wall_seconds = 0;
  double cpu_seconds = 0;
  std::string sparsity;  ///< as given to the runtime ("" when sampling was off)
  std::string seed;
  std::vector<std::pair<std::string, std::string>> build_ids;  ///< (file, build ID in hex)
};

/// The subreport's text, from <report id="outcome"> to </report>, each line ending in "\n".
std::string format_outcome(const Outcome& outcome);

/// The `interim` subreport (docs/formats.md, "The interim subreport") of a snapshot sent while the run goes on:
/// from <report id="interim"> to </report>, its one line "sequence<TAB>N".
std::string format_interim(uint64_t sequence);

/// Reads the body of an interim subreport (lines without the tags) into `sequence` (1 or more). Returns false and
/// sets `error` (the line counted from `first_line`) when it holds no such line.
bool parse_interim(std::string_view body, uint64_t first_line, uint64_t& sequence, std::string& error);

/// Reads the body of an outcome subreport (lines without the tags). Returns false and sets `error` (with the
/// line's number counted from `first_line`) on a malformed line or a missing/invalid run-id.
bool parse_outcome(std::string_view body, uint64_t first_line, Outcome& outcome, std::string& error);

/// True for run ids this format allows (they become file names in `sampler-collector export`).
bool valid_run_id(std::string_view id);

}  // namespace sampler::collector
