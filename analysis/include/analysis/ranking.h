// Ranking predicates and iterative elimination (Liblit et al., PLDI 2005, sections 3.2 and 3.3).
//
// Counts every predicate's F, S, F observed and S observed over the runs, keeps the predictive ones
// (statistics.h: Increase > 0 at 95% confidence), ranks them by the chosen metric; then repeatedly takes the top
// predicate, discards every run where it was observed true, and ranks again on the runs left, until no failing
// run is left or no predicate is predictive. Discarding subtracts the discarded runs' counts, so the whole
// elimination costs one pass over the runs' lists plus one scoring pass over the predicates per round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/runs.h"
#include "analysis/statistics.h"

namespace sampler::analysis {

/// One ranked predicate and its scores over the runs it was ranked on.
struct RankedPredicate {
  uint32_t predicate = 0;
  Counts counts;
  uint64_t num_failing = 0;     ///< NumF of the runs it was ranked on
  uint64_t num_succeeding = 0;  ///< NumS of the runs it was ranked on
  double score = 0;             ///< the chosen metric
  double importance = 0;
  double increase = 0;
  double increase_low = 0;      ///< lower bound of Increase's confidence interval
  double failure = 0;
  double context = 0;
};

/// One round of the elimination: its top predicate and the runs it explained (the runs discarded after it).
struct Round {
  RankedPredicate top;
  uint64_t failing_discarded = 0;
  uint64_t succeeding_discarded = 0;
  /// (crash group, failing runs of that group discarded), most runs first.
  std::vector<std::pair<int32_t, uint64_t>> crash_groups;
};

struct RankOptions {
  Metric metric = Metric::kImportance;
  double z = kZ95;
  size_t max_rounds = SIZE_MAX;
  /// Also score, over all runs, the predicates that do not pass the test (Ranking::unranked).
  bool all_predicates = false;
};

struct Ranking {
  uint64_t num_failing = 0, num_succeeding = 0;  ///< over all runs
  std::vector<RankedPredicate> first;  ///< every predictive predicate over all runs, best first
  /// With RankOptions::all_predicates: every other predicate whose site was observed in some run, over all runs,
  /// best first (by the same metric and ties); empty otherwise.
  std::vector<RankedPredicate> unranked;
  std::vector<Round> rounds;           ///< the elimination, in order
  uint64_t failing_unexplained = 0;    ///< failing runs left when the elimination stopped
};

/// Scores of predicate counts over NumF/NumS runs.
RankedPredicate score_predicate(uint32_t predicate, const Counts& counts, uint64_t num_failing,
                                uint64_t num_succeeding, const RankOptions& options);

/// True if a ranks before b: higher score, then higher F(P), then lower predicate id (site order).
bool ranks_before(const RankedPredicate& a, const RankedPredicate& b);

/// The first round's counts: per predicate the failing (f) and successful (s) runs where it was true, per site the
/// failing and successful runs that observed it, and the failing and successful runs.
struct RunCounts {
  std::vector<uint64_t> f, s;                    ///< per predicate
  std::vector<uint64_t> f_observed, s_observed;  ///< per site
  uint64_t num_failing = 0, num_succeeding = 0;
};

/// Ranks and eliminates. `predicate_site` maps predicate ids to site ids (Catalogue::predicate_site). `counted`,
/// when given, is the first round's counts over `runs` made elsewhere (the console sums them in PostgreSQL); they
/// must be what counting `runs` gives: the elimination subtracts the runs it discards from them.
Ranking rank(const RunSet& runs, const std::vector<uint32_t>& predicate_site, size_t site_count,
             const RankOptions& options, const RunCounts* counted = nullptr);

}  // namespace sampler::analysis
