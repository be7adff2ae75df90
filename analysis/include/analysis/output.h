// What sampler-analyze shows: the ranked table as TSV (docs/analysis.md, "The table": one header line, then one
// predictor per line, best first, each with the predicate's text as the site information gives it), as JSON, and as one
// self-contained HTML page (no external scripts, fonts or network; readable without JavaScript, which only adds
// sorting by column).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/ranking.h"
#include "analysis/runs.h"

namespace sampler::analysis {

/// Everything an output shows.
struct Analysis {
  const Catalogue* catalogue = nullptr;
  const RunSet* runs = nullptr;
  const Ranking* ranking = nullptr;
  RankOptions options;
  uint64_t left_out = 0;  ///< reports that could not be read
};

/// One line of the table: the elimination's predictors first (round 1, 2, ...), then the other predictive
/// predicates of the first ranking (over all runs), best first. With RankOptions::all_predicates, then every
/// predicate whose statistics over all runs those rows do not give (Ranking::unranked, and the predictors of
/// round 2 on), best first over all runs, with round 0.
struct Row {
  const RankedPredicate* predicate = nullptr;
  size_t round = 0;  ///< 1-based elimination round that chose it; 0 if none did
};

/// At most `top` rows (SIZE_MAX: all).
std::vector<Row> table_rows(const Analysis& analysis, size_t top);

/// Columns: rank, round ("-" if none), the metric's score, increase, increase_low, failure, context, importance,
/// F, S, F_obs, S_obs, file, line, function, scheme, predicate. Control characters from the site information
/// are written as \xNN.
std::string format_tsv(const Analysis& analysis, size_t top);

/// {"runs", "failing", "succeeding", "left_out", "metric", "predictors": [...], "rounds": [...],
///  "crash_groups": [...]}; docs/analysis.md lists every field.
std::string format_json(const Analysis& analysis, size_t top);

/// The HTML page. `source_dir`, if not empty, is where the sites' source files are looked up to show each
/// predictor's line of source.
std::string format_html(const Analysis& analysis, size_t top, const std::string& source_dir);

/// "file:line" text, the function and the predicate of predicate `id`, for messages and tests.
std::string describe_predicate(const Catalogue& catalogue, uint32_t id);

}  // namespace sampler::analysis
