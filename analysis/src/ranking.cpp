// Ranking and iterative elimination (analysis/ranking.h).
#include "analysis/ranking.h"

#include <algorithm>
#include <array>
#include <cstring>
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
using Tally = RunCounts;

// Counts runs' lists faster than one id at a time: ids are counted in 16-bit counters, four to a 64-bit word,
// so that a bitset list adds a byte of bits (8 ids) with two additions of words from a table (no carry crosses a
// counter: the counters are flushed to the tally every 65535 runs).
class BatchCounter {
 public:
  explicit BatchCounter(size_t ids) : counts_((ids + 63) / 64 * 64 + 64, 0) {}

  void add(const uint8_t* list) {
    id_list::for_each_word(
        list,
        [this](uint64_t w, uint64_t bits) {
          uint16_t* at = counts_.data() + w * 64;
          for (int b = 0; b < 8; ++b, bits >>= 8, at += 8) {
            const Spread& spread = kSpread[bits & 0xff];
            add_word(at, spread[0]);
            add_word(at + 4, spread[1]);
          }
        },
        [this](uint32_t id) { ++counts_[id]; });
  }

  // Adds the counters to `total` (subtracts them, when `subtract`) and clears them.
  void flush(std::vector<uint64_t>& total, bool subtract) {
    for (size_t i = 0; i < total.size(); ++i) subtract ? total[i] -= counts_[i] : total[i] += counts_[i];
    std::fill(counts_.begin(), counts_.end(), 0);
  }

 private:
  using Spread = std::array<uint64_t, 2>;
  // Byte b -> its bits 0-3 and 4-7 as one 16-bit lane each.
  static constexpr std::array<Spread, 256> kSpread = [] {
    std::array<Spread, 256> table{};
    for (unsigned b = 0; b < 256; ++b) {
      for (unsigned i = 0; i < 8; ++i) table[b][i / 4] |= uint64_t{(b >> i) & 1} << (16 * (i % 4));
    }
    return table;
  }();

  static void add_word(uint16_t* at, uint64_t value) {
    static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);
    if constexpr (std::endian::native == std::endian::little) {
      uint64_t word;
      std::memcpy(&word, at, 8);
      word += value;
      std::memcpy(at, &word, 8);
    } else {
      for (int lane = 0; lane < 4; ++lane)
        at[lane] = static_cast<uint16_t>(at[lane] + ((value >> (16 * lane)) & 0xffff));
    }
  }

  std::vector<uint16_t> counts_;
};

// Adds to the tally (subtracts from it, when `subtract`) the runs `for_each_run(visit)` visits.
template <class ForEachRun>
void count_runs(const RunSet& runs, Tally& tally, bool subtract, ForEachRun&& for_each_run) {
  BatchCounter f(tally.f.size()), s(tally.s.size()), f_observed(tally.f_observed.size()),
      s_observed(tally.s_observed.size());
  auto flush = [&] {
    f.flush(tally.f, subtract);
    s.flush(tally.s, subtract);
    f_observed.flush(tally.f_observed, subtract);
    s_observed.flush(tally.s_observed, subtract);
  };
  constexpr size_t kBatch = 65535;  // a 16-bit counter's most
  size_t counted = 0;
  for_each_run([&](size_t r) {
    bool failing = runs.failed[r] != 0;
    uint64_t& number = failing ? tally.num_failing : tally.num_succeeding;
    subtract ? --number : ++number;
    (failing ? f : s).add(runs.predicate_data.data() + runs.predicate_offsets[r]);
    (failing ? f_observed : s_observed).add(runs.site_data.data() + runs.site_offsets[r]);
    if (++counted % kBatch == 0) flush();
  });
  flush();
}

// The predicates of the tally that pass the test (`passing`) or, of those whose site was observed, that do not
// (!`passing`), unordered.
std::vector<RankedPredicate> scored(const Tally& tally, const std::vector<uint32_t>& predicate_site,
                                    const RankOptions& options, bool passing = true) {
  std::vector<RankedPredicate> found;
  for (uint32_t p = 0; p < predicate_site.size(); ++p) {
    if (passing && tally.f[p] == 0) continue;  // cannot pass: most predicates, skipped before any arithmetic
    uint32_t site = predicate_site[p];
    Counts counts{tally.f[p], tally.s[p], tally.f_observed[site], tally.s_observed[site]};
    if (passing ? !is_predictive(counts, options.z)
                : is_predictive(counts, options.z) || counts.f_observed + counts.s_observed == 0) {
      continue;
    }
    found.push_back(score_predicate(p, counts, tally.num_failing, tally.num_succeeding, options));
  }
  return found;
}

}  // namespace

Ranking rank(const RunSet& runs, const std::vector<uint32_t>& predicate_site, size_t site_count,
             const RankOptions& options, const RunCounts* counted) {
  Ranking ranking;
  Tally tally;
  if (counted != nullptr) {
    tally = *counted;
  } else {
    tally.f.assign(predicate_site.size(), 0);
    tally.s.assign(predicate_site.size(), 0);
    tally.f_observed.assign(site_count, 0);
    tally.s_observed.assign(site_count, 0);
    count_runs(runs, tally, /*subtract=*/false, [&runs](auto visit) {
      for (size_t r = 0; r < runs.size(); ++r) visit(r);
    });
  }
  ranking.num_failing = tally.num_failing;
  ranking.num_succeeding = tally.num_succeeding;

  ranking.first = scored(tally, predicate_site, options);
  std::sort(ranking.first.begin(), ranking.first.end(), ranks_before);
  if (options.all_predicates) {
    ranking.unranked = scored(tally, predicate_site, options, false);
    std::sort(ranking.unranked.begin(), ranking.unranked.end(), ranks_before);
  }

  std::vector<uint8_t> active(runs.size(), 1);
  std::vector<RankedPredicate> candidates = ranking.first;
  while (tally.num_failing > 0 && ranking.rounds.size() < options.max_rounds) {
    if (!ranking.rounds.empty()) candidates = scored(tally, predicate_site, options);
    if (candidates.empty()) break;
    Round round;
    round.top = *std::min_element(candidates.begin(), candidates.end(), ranks_before);
    std::map<int32_t, uint64_t> groups;
    // The runs where the top predicate was true leave the tally, subtracted as they are found.
    count_runs(runs, tally, /*subtract=*/true, [&](auto discard) {
      for (size_t r = 0; r < runs.size(); ++r) {
        if (!active[r] || !runs.has_predicate(r, round.top.predicate)) continue;
        active[r] = 0;
        discard(r);
        if (runs.failed[r]) {
          ++round.failing_discarded;
          if (runs.crash_group[r] >= 0) ++groups[runs.crash_group[r]];
        } else {
          ++round.succeeding_discarded;
        }
      }
    });
    round.crash_groups.assign(groups.begin(), groups.end());
    std::stable_sort(round.crash_groups.begin(), round.crash_groups.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    ranking.rounds.push_back(std::move(round));
  }
  ranking.failing_unexplained = tally.num_failing;
  return ranking;
}

}  // namespace sampler::analysis
