// The statistics of Cooperative Bug Isolation: Liblit, Naik, Zheng, Aiken, Jordan, "Scalable Statistical Bug
// Isolation", PLDI 2005, section 3; and the spectrum-based fault localisation metrics on the same counts.
//
// Pure functions, counts in, scores out: no state, no I/O, no allocation. Everything that reads reports or
// ranks predicates is built on these (analysis/ranking.h); tests/analysis/statistics_test.cpp works each formula
// by hand. docs/analysis.md explains them for users.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace sampler::analysis {

/// What the runs say about one predicate P.
struct Counts {
  uint64_t f = 0;           ///< F(P): failing runs where P was observed true
  uint64_t s = 0;           ///< S(P): successful runs where P was observed true
  uint64_t f_observed = 0;  ///< F(P observed): failing runs where P's site was sampled at all
  uint64_t s_observed = 0;  ///< S(P observed): successful runs where P's site was sampled at all
};

/// The z of a two-sided 95% confidence interval (the paper's test of Increase(P) > 0 at 95% confidence).
inline constexpr double kZ95 = 1.96;

/// Failure(P) = F(P) / (F(P) + S(P)): the chance that a run fails when P is observed true (0 if never true).
inline double failure(const Counts& c) {
  uint64_t n = c.f + c.s;
  return n == 0 ? 0.0 : static_cast<double>(c.f) / static_cast<double>(n);
}

/// Context(P) = F(P observed) / (F(P observed) + S(P observed)): the chance of failure when P's site is merely
/// reached and sampled (0 if never observed).
inline double context(const Counts& c) {
  uint64_t n = c.f_observed + c.s_observed;
  return n == 0 ? 0.0 : static_cast<double>(c.f_observed) / static_cast<double>(n);
}

/// Increase(P) = Failure(P) - Context(P): how much P being true raises the chance of failure.
inline double increase(const Counts& c) { return failure(c) - context(c); }

/// The standard error of Increase(P) as a difference of two proportions (the normal approximation):
/// sqrt(Failure (1 - Failure) / (F + S) + Context (1 - Context) / (F obs + S obs)). A proportion over no runs
/// contributes nothing.
inline double increase_standard_error(const Counts& c) {
  double variance = 0;
  if (uint64_t n = c.f + c.s; n > 0) variance += failure(c) * (1 - failure(c)) / static_cast<double>(n);
  if (uint64_t n = c.f_observed + c.s_observed; n > 0) {
    variance += context(c) * (1 - context(c)) / static_cast<double>(n);
  }
  return std::sqrt(variance);
}

/// The lower end of Increase(P)'s confidence interval: Increase - z * standard error.
inline double increase_lower_bound(const Counts& c, double z = kZ95) {
  return increase(c) - z * increase_standard_error(c);
}

/// The paper's filter: P was true in some failing run and Increase(P) > 0 at the confidence z stands for (the
/// lower bound of its interval is above 0).
inline bool is_predictive(const Counts& c, double z = kZ95) { return c.f > 0 && increase_lower_bound(c, z) > 0; }

/// Sensitivity: log F(P) / log NumF, how many of the failing runs P accounts for, on a log scale. With a single
/// failing run (log NumF = 0) it is 1 if P was true in it, else 0.
inline double log_sensitivity(uint64_t f, uint64_t num_failing) {
  if (f == 0 || num_failing == 0) return 0;
  if (num_failing == 1) return 1;
  return std::log(static_cast<double>(f)) / std::log(static_cast<double>(num_failing));
}

/// Importance(P): the harmonic mean of Increase(P) and log F(P) / log NumF, 0 when either is not positive.
inline double importance(const Counts& c, uint64_t num_failing) {
  double inc = increase(c);
  double sensitivity = log_sensitivity(c.f, num_failing);
  if (inc <= 0 || sensitivity <= 0) return 0;
  return 2 / (1 / inc + 1 / sensitivity);
}

/// Ochiai: F / sqrt(NumF * (F + S)).
inline double ochiai(const Counts& c, uint64_t num_failing) {
  if (c.f == 0 || num_failing == 0) return 0;
  return static_cast<double>(c.f) / std::sqrt(static_cast<double>(num_failing) * static_cast<double>(c.f + c.s));
}

/// Tarantula: (F / NumF) / (F / NumF + S / NumS), a ratio over no runs counting as 0.
inline double tarantula(const Counts& c, uint64_t num_failing, uint64_t num_succeeding) {
  double failed = num_failing == 0 ? 0 : static_cast<double>(c.f) / static_cast<double>(num_failing);
  double passed = num_succeeding == 0 ? 0 : static_cast<double>(c.s) / static_cast<double>(num_succeeding);
  return failed + passed == 0 ? 0 : failed / (failed + passed);
}

/// DStar with * = `star`: F^* / (S + (NumF - F)). Its denominator is 0 only when P was true in every failing run
/// and in no successful one; then the score is 2 F^* (as if the denominator were 1/2), finite, and above every
/// predicate with a denominator of at least 1 (their F is at most NumF = F).
inline double dstar(const Counts& c, uint64_t num_failing, double star = 2) {
  double numerator = std::pow(static_cast<double>(c.f), star);
  uint64_t missed = num_failing > c.f ? num_failing - c.f : 0;
  uint64_t denominator = c.s + missed;
  return denominator == 0 ? 2 * numerator : numerator / static_cast<double>(denominator);
}

/// The score that ranks predicates.
enum class Metric { kImportance, kIncrease, kOchiai, kTarantula, kDStar };

/// "importance", "increase", "ochiai", "tarantula", "dstar".
inline std::string_view metric_name(Metric metric) {
  switch (metric) {
    case Metric::kImportance: return "importance";
    case Metric::kIncrease: return "increase";
    case Metric::kOchiai: return "ochiai";
    case Metric::kTarantula: return "tarantula";
    case Metric::kDStar: return "dstar";
  }
  return "importance";
}

/// The metric named `name` (as metric_name() spells it); false if there is none.
inline bool parse_metric(std::string_view name, Metric& metric) {
  for (Metric m : {Metric::kImportance, Metric::kIncrease, Metric::kOchiai, Metric::kTarantula, Metric::kDStar}) {
    if (metric_name(m) == name) {
      metric = m;
      return true;
    }
  }
  return false;
}

/// The score of `metric` for P over NumF failing and NumS successful runs.
inline double score(Metric metric, const Counts& c, uint64_t num_failing, uint64_t num_succeeding) {
  switch (metric) {
    case Metric::kImportance: return importance(c, num_failing);
    case Metric::kIncrease: return increase(c);
    case Metric::kOchiai: return ochiai(c, num_failing);
    case Metric::kTarantula: return tarantula(c, num_failing, num_succeeding);
    case Metric::kDStar: return dstar(c, num_failing);
  }
  return 0;
}

}  // namespace sampler::analysis
