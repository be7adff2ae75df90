// Stored runs back out as files, for the tools that read report files: `sampler-collector export` and
// `sampler-analyze --database` (which analyses the files with labels from the stored outcomes).
#pragma once

#include <cstdint>
#include <string>

#include "store/store.h"

namespace sampler::store {

/// Writes every run `query` selects into `directory` (created), one file RUNID.report per run (run ids that
/// could not be file names are skipped). When `labels_path` is not empty, also writes there one line
/// "DIRECTORY/RUNID.report<TAB>failure" or "...<TAB>success" per run, from the stored outcome (sampler-analyze's
/// --labels format). Returns the number of runs written, or -1 with `error` set.
int64_t write_runs(Store& store, const Query& query, const std::string& directory, const std::string& labels_path,
                   std::string& error);

}  // namespace sampler::store
