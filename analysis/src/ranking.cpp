// Ranking and iterative elimination (analysis/ranking.h).
#include "analysis/ranking.h"

#include <algorithm>
#include <map>

namespace sampler::analysis {

RankedPredicate score_predicate(uint32_t predicate, const Counts& counts, uint64_t num_failing,
                                uint64_t num_succeeding, const RankOptions& options) {
  RankedPredicate r;
  r.predicate = predicate;
  r.counts = counts;
  r.num_failing = num_failing;
  r.num_succeeding = num_succeeding;
  r.score = score(options.metric, counts, num_failing, num_succeeding);
  r.importance = importance(counts, num_failing);
  r.increase = increase(counts);
  r.increase_low = increase_lower_bound(counts, options.z);
  r.failure = failure(counts);
  r.context = context(counts);
  return r;
}

bool ranks_before(const RankedPredicate& a, const RankedPredicate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.counts.f != b.counts.f) return a.counts.f > b.counts.f;
  return a.predicate < b.predicate;
}

namespace {

// The counts over the runs still in play.
struct Tally {
  std::vector<uint64_t> f, s;                    // per predicate
  std::vector<uint64_t> f_observed, s_observed;  // per site
  uint64_t num_failing = 0, num_succeeding = 0;

  void apply(const RunSet& runs, size_t run, int64_t sign) {
    bool failing = runs.failed[run] != 0;
    auto bump = [sign](uint64_t& value) { value = static_cast<uint64_t>(static_cast<int64_t>(value) + sign); };
    bump(failing ? num_failing : num_succeeding);
    std::vector<uint64_t>& by_predicate = failing ? f : s;
    std::vector<uint64_t>& by_site = failing ? f_observed : s_observed;
    runs.for_each_predicate(run, [&](uint32_t p) { bump(by_predicate[p]); });
    runs.for_each_site(run, [&](uint32_t site) { bump(by_site[site]); });
  }
};

// Every predictive predicate of the tally, unordered.
std::vector<RankedPredicate> predictive(const Tally& tally, const std::vector<uint32_t>& predicate_site,
                                        const RankOptions& options) {
  std::vector<RankedPredicate> found;
  for (uint32_t p = 0; p < predicate_site.size(); ++p) {
    if (tally.f[p] == 0) continue;
    uint32_t site = predicate_site[p];
    Counts counts{tally.f[p], tally.s[p], tally.f_observed[site], tally.s_observed[site]};
    if (!is_predictive(counts, options.z)) continue;
    found.push_back(score_predicate(p, counts, tally.num_failing, tally.num_succeeding, options));
  }
  return found;
}

}  // namespace

Ranking rank(const RunSet& runs, const std::vector<uint32_t>& predicate_site, size_t site_count,
             const RankOptions& options) {
  Ranking ranking;
  Tally tally;
  tally.f.assign(predicate_site.size(), 0);
  tally.s.assign(predicate_site.size(), 0);
  tally.f_observed.assign(site_count, 0);
  tally.s_observed.assign(site_count, 0);
  for (size_t r = 0; r < runs.size(); ++r) tally.apply(runs, r, +1);
  ranking.num_failing = tally.num_failing;
  ranking.num_succeeding = tally.num_succeeding;

  ranking.first = predictive(tally, predicate_site, options);
  std::sort(ranking.first.begin(), ranking.first.end(), ranks_before);

  std::vector<uint8_t> active(runs.size(), 1);
  std::vector<RankedPredicate> candidates = ranking.first;
  while (tally.num_failing > 0 && ranking.rounds.size() < options.max_rounds) {
    if (!ranking.rounds.empty()) candidates = predictive(tally, predicate_site, options);
    if (candidates.empty()) break;
    Round round;
    round.top = *std::min_element(candidates.begin(), candidates.end(), ranks_before);
    std::map<int32_t, uint64_t> groups;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (!active[r]) continue;
      if (!runs.has_predicate(r, round.top.predicate)) continue;
      active[r] = 0;
      tally.apply(runs, r, -1);
      if (runs.failed[r]) {
        ++round.failing_discarded;
        if (runs.crash_group[r] >= 0) ++groups[runs.crash_group[r]];
      } else {
        ++round.succeeding_discarded;
      }
    }
    round.crash_groups.assign(groups.begin(), groups.end());
    std::stable_sort(round.crash_groups.begin(), round.crash_groups.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    ranking.rounds.push_back(std::move(round));
  }
  ranking.failing_unexplained = tally.num_failing;
  return ranking;
}

}  // namespace sampler::analysis
