// Labels files: which runs failed, given by hand (sampler-analyze --labels) over what the reports say.
#pragma once

#include <string>

#include "analysis/runs.h"
#include "sections/diagnostics.h"

namespace sampler::analysis {

/// Applies a labels file: lines "PATH<TAB>success" or "PATH<TAB>failure" (PATH as the report was named on the
/// command line or found in a directory; compared after lexical normalisation). Malformed lines are errors; a
/// label for a report that was not read is a warning. Returns true if no error was reported.
bool apply_labels(const std::string& labels_path, RunSet& runs, DiagnosticSink& sink);

}  // namespace sampler::analysis
