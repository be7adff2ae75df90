// The PLDI 2005 scores over runs sampled at different rates (docs/analysis.md, "Runs of different plans"): a
// seeded generator of runs with a planted cause and known true scores, sampled uniformly, by a per-site plan, and
// by a mix of plans (one of which cannot observe some sites at all). The estimated Increase of the cause and of
// every non-cause must be within 4 standard errors of its true value, and the cause must top the ranking alike.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/ranking.h"
#include "analysis/runs.h"
#include "analysis/statistics.h"

namespace sampler::analysis {
namespace {

// The population: site s runs n[s] times in every run; in a run its predicate "P_s" (id 2s) holds at all its
// executions with probability q[s], else "not P_s" (id 2s + 1) holds at all of them. The run fails when P_0 holds
// and a coin of 0.8 says so, or by itself with probability 0.05. So P_0 is the cause; every other site is noise.
struct Population {
  std::vector<uint32_t> executions;
  std::vector<double> truth_rate;
  static constexpr double kCauseFails = 0.8, kBackground = 0.05;

  double fail_given_cause() const { return 1 - (1 - kCauseFails) * (1 - kBackground); }
  double fail_rate() const { return truth_rate[0] * fail_given_cause() + (1 - truth_rate[0]) * kBackground; }
  // True Increase = Pr(fail | P) - Pr(fail | site reached) (every run reaches every site).
  double true_increase(uint32_t predicate) const {
    if (predicate == 0) return fail_given_cause() - fail_rate();
    if (predicate == 1) return kBackground - fail_rate();
    return 0;
  }
};

Population make_population(std::mt19937_64& random, size_t sites) {
  Population population;
  for (size_t s = 0; s < sites; ++s) {
    // From 1 to 10^4 executions a run, log-uniform: cold and hot sites; the cause runs 5 times.
    double exponent = std::uniform_real_distribution<double>(0, 4)(random);
    population.executions.push_back(s == 0 ? 5 : static_cast<uint32_t>(std::pow(10, exponent)));
    population.truth_rate.push_back(s == 0 ? 0.3 : std::uniform_real_distribution<double>(0.1, 0.9)(random));
  }
  return population;
}

// The probability each site is sampled at in a run of plan `plan` (0: uniform; 1: a plan of 2 expected samples a
// run per site; 2: a plan of 1 expected sample per run that does not sample the odd sites at all).
double rate(const Population& population, int plan, size_t site) {
  const double n = population.executions[site];
  switch (plan) {
    case 0: return 0.02;
    case 1: return std::min(1.0, 2 / n);
    default: return site % 2 == 1 ? 0 : std::min(1.0, 1 / n);
  }
}

// `runs` runs, each of a plan `plan_of(run)` chooses (independently of its outcome).
template <class PlanOf>
RunSet generate(const Population& population, size_t runs, uint64_t seed, PlanOf plan_of) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  RunSet set;
  for (size_t r = 0; r < runs; ++r) {
    const int plan = plan_of(r);
    std::vector<uint32_t> observed, predicates;
    bool cause = false;
    for (size_t s = 0; s < population.executions.size(); ++s) {
      const bool holds = unit(random) < population.truth_rate[s];
      if (s == 0) cause = holds;
      // Each execution is sampled independently: the site is observed when one of its n executions is.
      const double p = rate(population, plan, s);
      const double seen = 1 - std::pow(1 - p, population.executions[s]);
      if (unit(random) < seen) {
        observed.push_back(static_cast<uint32_t>(s));
        predicates.push_back(static_cast<uint32_t>(2 * s + (holds ? 0 : 1)));
      }
    }
    const bool failed = (cause && unit(random) < Population::kCauseFails) || unit(random) < Population::kBackground;
    set.add("run" + std::to_string(r), failed, false, -1, observed, predicates);
  }
  return set;
}

struct Outcome {
  uint32_t top = UINT32_MAX;
  size_t checked = 0;
};

// Ranks `runs` and checks every observed predicate's Increase against its true value.
Outcome check(const Population& population, const RunSet& runs, const char* what) {
  const size_t sites = population.executions.size();
  std::vector<uint32_t> predicate_site;
  for (size_t s = 0; s < sites; ++s) predicate_site.insert(predicate_site.end(), 2, static_cast<uint32_t>(s));
  RankOptions options;
  options.all_predicates = true;
  Ranking ranking = rank(runs, predicate_site, sites, options);
  Outcome outcome;
  if (!ranking.rounds.empty()) outcome.top = ranking.rounds[0].top.predicate;
  std::vector<RankedPredicate> all = ranking.first;
  all.insert(all.end(), ranking.unranked.begin(), ranking.unranked.end());
  for (const RankedPredicate& p : all) {
    const double truth = population.true_increase(p.predicate);
    const double error = increase_standard_error(p.counts);
    EXPECT_LE(std::abs(p.increase - truth), 4 * error + 1e-9)
        << what << ": predicate " << p.predicate << " (site " << p.predicate / 2 << ", "
        << population.executions[p.predicate / 2] << " executions a run): Increase " << p.increase << ", true "
        << truth << ", standard error " << error << ", F " << p.counts.f << " S " << p.counts.s << " F_obs "
        << p.counts.f_observed << " S_obs " << p.counts.s_observed;
    ++outcome.checked;
  }
  return outcome;
}

TEST(MixedRates, IncreaseIsUnbiasedAndTheCauseTopsUniformPlannedAndMixedRuns) {
  std::mt19937_64 random(2005);
  const Population population = make_population(random, 40);
  constexpr size_t kRuns = 20000;
  const Outcome uniform = check(population, generate(population, kRuns, 1, [](size_t) { return 0; }), "uniform");
  const Outcome planned = check(population, generate(population, kRuns, 2, [](size_t) { return 1; }), "planned");
  const Outcome mixed =
      check(population, generate(population, kRuns, 3, [](size_t r) { return static_cast<int>(r % 3); }), "mixed");
  EXPECT_EQ(uniform.top, 0u);
  EXPECT_EQ(planned.top, 0u);
  EXPECT_EQ(mixed.top, 0u);
  // Every predicate of every site was observed in some run and checked (80 each).
  EXPECT_EQ(uniform.checked, 80u);
  EXPECT_EQ(planned.checked, 80u);
  EXPECT_EQ(mixed.checked, 80u);
}

// Per site, only the runs that could observe it count: the runs of plan 2 never sample the odd sites, so those
// sites' F_obs + S_obs come from the other runs alone, and their scores are what those runs alone give.
TEST(MixedRates, RunsThatCannotObserveASiteDoNotCountForIt) {
  std::mt19937_64 random(7);
  const Population population = make_population(random, 10);
  const RunSet mixed = generate(population, 3000, 4, [](size_t r) { return r < 1000 ? 2 : 1; });
  RunSet others;
  for (size_t r = 1000; r < mixed.size(); ++r) others.add_from(mixed, r, -1);
  std::vector<uint32_t> predicate_site;
  for (uint32_t s = 0; s < 10; ++s) predicate_site.insert(predicate_site.end(), 2, s);
  RankOptions options;
  options.all_predicates = true;
  options.max_rounds = 0;
  auto counts_of = [&](const RunSet& runs, uint32_t predicate) {
    Ranking ranking = rank(runs, predicate_site, 10, options);
    for (const auto* list : {&ranking.first, &ranking.unranked}) {
      for (const RankedPredicate& p : *list) {
        if (p.predicate == predicate) return p;
      }
    }
    ADD_FAILURE() << "predicate " << predicate << " not scored";
    return RankedPredicate{};
  };
  for (uint32_t odd_site = 1; odd_site < 10; odd_site += 2) {
    for (uint32_t predicate : {2 * odd_site, 2 * odd_site + 1}) {
      const RankedPredicate all = counts_of(mixed, predicate), alone = counts_of(others, predicate);
      EXPECT_EQ(all.counts.f, alone.counts.f);
      EXPECT_EQ(all.counts.s, alone.counts.s);
      EXPECT_EQ(all.counts.f_observed, alone.counts.f_observed);
      EXPECT_EQ(all.counts.s_observed, alone.counts.s_observed);
      EXPECT_DOUBLE_EQ(all.increase, alone.increase);
      EXPECT_GT(all.counts.f_observed + all.counts.s_observed, 0u);
    }
  }
}

}  // namespace
}  // namespace sampler::analysis
