// analysis/statistics.h on counts worked by hand (the arithmetic is in the comments, to 6 decimals).
#include "analysis/statistics.h"

#include <gtest/gtest.h>

namespace sampler::analysis {
namespace {

constexpr double kTolerance = 1e-6;

// P true in 6 failing and 2 successful runs; its site sampled in 8 failing and 12 successful runs; 10 failing
// and 30 successful runs in all.
constexpr Counts kMixed{6, 2, 8, 12};
// P true in all 10 failing runs and no successful one; its site sampled in those 10 and 30 successful runs.
constexpr Counts kPerfect{10, 0, 10, 30};

TEST(Statistics, FailureContextIncrease) {
  EXPECT_NEAR(failure(kMixed), 0.75, kTolerance);   // 6 / (6 + 2)
  EXPECT_NEAR(context(kMixed), 0.4, kTolerance);    // 8 / (8 + 12)
  EXPECT_NEAR(increase(kMixed), 0.35, kTolerance);  // 0.75 - 0.4
  EXPECT_NEAR(failure(kPerfect), 1.0, kTolerance);
  EXPECT_NEAR(context(kPerfect), 0.25, kTolerance);  // 10 / 40
  EXPECT_NEAR(increase(kPerfect), 0.75, kTolerance);
}

TEST(Statistics, NoRunsMeansZero) {
  Counts none{};
  EXPECT_EQ(failure(none), 0);
  EXPECT_EQ(context(none), 0);
  EXPECT_EQ(increase_standard_error(none), 0);
  EXPECT_FALSE(is_predictive(none));
  EXPECT_EQ(importance(none, 10), 0);
  EXPECT_EQ(ochiai(none, 0), 0);
  EXPECT_EQ(tarantula(none, 0, 0), 0);
}

TEST(Statistics, ZTestLowerBound) {
  // sqrt(0.75 * 0.25 / 8 + 0.4 * 0.6 / 20) = sqrt(0.0234375 + 0.012) = sqrt(0.0354375) = 0.188249
  EXPECT_NEAR(increase_standard_error(kMixed), 0.188249, kTolerance);
  // 0.35 - 1.96 * 0.188249 = -0.018968: positive Increase, but not at 95% confidence
  EXPECT_NEAR(increase_lower_bound(kMixed), -0.018968, kTolerance);
  EXPECT_FALSE(is_predictive(kMixed));
  // With z = 1 (68%): 0.35 - 0.188249 = 0.161751
  EXPECT_NEAR(increase_lower_bound(kMixed, 1.0), 0.161751, kTolerance);
  EXPECT_TRUE(is_predictive(kMixed, 1.0));
  // sqrt(0 + 0.25 * 0.75 / 40) = sqrt(0.0046875) = 0.068465; 0.75 - 1.96 * 0.068465 = 0.615808
  EXPECT_NEAR(increase_standard_error(kPerfect), 0.068465, kTolerance);
  EXPECT_NEAR(increase_lower_bound(kPerfect), 0.615808, kTolerance);
  EXPECT_TRUE(is_predictive(kPerfect));
  // Never true in a failing run: never predictive, whatever the bound.
  EXPECT_FALSE(is_predictive(Counts{0, 5, 10, 10}));
}

TEST(Statistics, Importance) {
  // log 6 / log 10 = 0.778151; 2 / (1 / 0.35 + 1 / 0.778151) = 2 / (2.857143 + 1.285098) = 0.482830
  EXPECT_NEAR(log_sensitivity(6, 10), 0.778151, kTolerance);
  EXPECT_NEAR(importance(kMixed, 10), 0.482830, kTolerance);
  // log 10 / log 10 = 1; 2 / (1 / 0.75 + 1) = 0.857143
  EXPECT_NEAR(importance(kPerfect, 10), 0.857143, kTolerance);
  // F = 1: log 1 = 0, so Importance is 0 (one failing run says little) ...
  EXPECT_EQ(importance(Counts{1, 0, 1, 10}, 10), 0);
  // ... unless it is the only failing run: sensitivity 1, 2 / (1 / (1 - 1/11) + 1) = 0.952381
  EXPECT_NEAR(importance(Counts{1, 0, 1, 10}, 1), 0.952381, kTolerance);
  // Increase <= 0: 0.
  EXPECT_EQ(importance(Counts{2, 2, 4, 4}, 10), 0);
}

TEST(Statistics, SpectrumMetrics) {
  // Ochiai: 6 / sqrt(10 * 8) = 0.670820
  EXPECT_NEAR(ochiai(kMixed, 10), 0.670820, kTolerance);
  // Tarantula: (6 / 10) / (6 / 10 + 2 / 30) = 0.6 / 0.666667 = 0.9
  EXPECT_NEAR(tarantula(kMixed, 10, 30), 0.9, kTolerance);
  // DStar: 6^2 / (2 + (10 - 6)) = 36 / 6 = 6
  EXPECT_NEAR(dstar(kMixed, 10), 6.0, kTolerance);
  // DStar's zero denominator: 2 * 10^2
  EXPECT_NEAR(dstar(kPerfect, 10), 200.0, kTolerance);
  EXPECT_NEAR(ochiai(kPerfect, 10), 1.0, kTolerance);
  EXPECT_NEAR(tarantula(kPerfect, 10, 30), 1.0, kTolerance);
}

TEST(Statistics, MetricNames) {
  Metric metric = Metric::kImportance;
  for (std::string_view name : {"importance", "increase", "ochiai", "tarantula", "dstar"}) {
    ASSERT_TRUE(parse_metric(name, metric)) << name;
    EXPECT_EQ(metric_name(metric), name);
  }
  EXPECT_FALSE(parse_metric("Ochiai", metric));
  EXPECT_NEAR(score(Metric::kDStar, kMixed, 10, 30), 6.0, kTolerance);
  EXPECT_NEAR(score(Metric::kIncrease, kMixed, 10, 30), 0.35, kTolerance);
}

}  // namespace
}  // namespace sampler::analysis
