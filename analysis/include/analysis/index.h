// The index of a shard of reports (`sampler-analyze index`), and reading any number of them back
// (`sampler-analyze rank`): what the statistics need of each run, so that shards can be read in parallel by any
// job runner and ranked together. docs/formats.md, "The analysis index", describes the format:
//
//     sampler-index 1
//     section<TAB>UNIT<TAB>SCHEME<TAB>COUNTERS<TAB>SITES<TAB>LABEL       then SITES lines: site<TAB>FIELDS...
//     crash<TAB>GROUP<TAB>SIGNATURE
//     run<TAB>failure|success<TAB>crash|-<TAB>GROUP|-<TAB>SITE-DELTAS<TAB>PREDICATE-DELTAS<TAB>NAME
//
// written gzip-compressed (the reader takes plain text too). Sites and predicates are numbered in section order;
// a run's lists are sorted and written as differences from the previous number, comma-separated.
#pragma once

#include <string>
#include <vector>

#include "analysis/runs.h"
#include "sections/diagnostics.h"

namespace sampler::analysis {

/// Writes the index of `runs` (whose ids refer to `catalogue`) to `path`, gzip-compressed. Problems go to
/// `sink`; returns true if none.
bool write_index(const std::string& path, const Catalogue& catalogue, const RunSet& runs, DiagnosticSink& sink);

/// Reads indexes and merges them: sections by (unit, scheme) (the same key with a different number of sites or
/// counters in two indexes is an error, and the later index's runs lose that section), crash groups by
/// signature, runs appended in the order of `paths`. A malformed line is an error naming it; the rest is read.
/// Returns true if no error was reported.
bool read_indexes(const std::vector<std::string>& paths, Catalogue& catalogue, RunSet& runs, DiagnosticSink& sink);

}  // namespace sampler::analysis
