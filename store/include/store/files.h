// Stored runs back out as files, for the tools that read report files: `sampler-collector export` and
// `sampler-analyze --database` (which analyses the files with labels from the stored outcomes).
#pragma once

#include <bitset>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "store/store.h"

namespace sampler::store {

/// Which runs count as failures (sampler-analyze --failure-statuses): a run that died of a signal always does;
/// a run that exited does when its exit status is in `statuses` (default: every non-zero status).
struct FailureRule {
  FailureRule() { statuses.set().reset(0); }
  std::bitset<256> statuses;
  bool failed(const Run& run) const;
};

/// Reads a --failure-statuses list: comma-separated statuses and ranges, "1,2,128-255" (0..255; "none" for an
/// empty set, when only signals count). Returns false and sets `error` on anything else.
bool parse_failure_statuses(std::string_view text, FailureRule& rule, std::string& error);

/// Writes every run `query` selects into `directory` (created), one file RUNID.report per run (run ids that
/// could not be file names are skipped). When `labels_path` is not empty, also writes there one line
/// "DIRECTORY/RUNID.report<TAB>failure" or "...<TAB>success" per run, from the stored outcome (sampler-analyze's
/// --labels format), failures as `rule` says. `written`, when given, is called after each run with its report's
/// size (a progress line counts them). Runs whose last report is interim (outcome unknown: Run::interim_sequence)
/// are written only with `include_unfinished`, labelled by the rule (a success: neither exit status nor signal).
/// Returns the number of runs written, or -1 with `error` set.
int64_t write_runs(Store& store, const Query& query, const std::string& directory, const std::string& labels_path,
                   std::string& error, const FailureRule& rule = FailureRule(),
                   const std::function<void(uint64_t bytes)>& written = {}, bool include_unfinished = true);

}  // namespace sampler::store
