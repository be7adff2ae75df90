// Unit tests of the runtime's in-memory logic: settings parsing, the geometric draw, the report writer over a
// memory sink, unit checks, bounds storage, float classification, the maps parser and the module map of this
// very process. Links libsampler.a and its internal headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "module_map.h"
#include "plan.h"
#include "report_writer.h"
#include "sampler/sampler.h"
#include "sampling.h"
#include "settings.h"
#include "shared_counters.h"
#include "values.h"
#include "ziggurat.h"

namespace sampler::runtime {
namespace {

// ------------------------------------------------------------------------------------------------ settings

TEST(Settings, Sparsity) {
  struct Case {
    const char* text;
    bool ok;
    double value;
  } cases[] = {
      {"1", true, 1},        {"100", true, 100},     {"2.5", true, 2.5}, {"1e3", true, 1000},
      {"1000000", true, 1e6}, {"0", false, 0},        {"0.5", false, 0},  {"", false, 0},
      {"-5", false, 0},      {" 10", false, 0},      {"10 ", false, 0},  {"abc", false, 0},
      {"inf", false, 0},     {"nan", false, 0},      {"0x10", false, 0}, {"1e999", false, 0},
      {"10abc", false, 0},   {"+10", false, 0},
  };
  for (const Case& c : cases) {
    double value = -1;
    ParseStatus status = parse_sparsity(c.text, value);
    EXPECT_EQ(status.ok, c.ok) << "'" << c.text << "'";
    if (c.ok) {
      EXPECT_DOUBLE_EQ(value, c.value) << c.text;
    }
    if (!c.ok) {
      EXPECT_NE(status.error, nullptr);
    }
  }
}

TEST(Settings, Seed) {
  struct Case {
    const char* text;
    bool ok;
    uint64_t value;
  } cases[] = {
      {"0", true, 0},
      {"42", true, 42},
      {"0x2a", true, 42},
      {"0X2A", true, 42},
      {"052", true, 42},
      {"18446744073709551615", true, UINT64_MAX},
      {"-1", true, UINT64_MAX},
      {"-9223372036854775808", true, uint64_t{1} << 63},
      {"18446744073709551616", false, 0},
      {"-9223372036854775809", false, 0},
      {"08", false, 0},
      {"", false, 0},
      {"-", false, 0},
      {" 1", false, 0},
      {"+1", false, 0},
      {"1.5", false, 0},
      {"seed", false, 0},
      {"0x", false, 0},
  };
  for (const Case& c : cases) {
    uint64_t value = 7;
    ParseStatus status = parse_seed(c.text, value);
    EXPECT_EQ(status.ok, c.ok) << "'" << c.text << "'";
    if (c.ok) {
      EXPECT_EQ(value, c.value) << c.text;
    }
  }
}

TEST(Settings, Interval) {
  uint32_t seconds = 0;
  EXPECT_TRUE(parse_interval("1", seconds).ok);
  EXPECT_EQ(seconds, 1u);
  EXPECT_TRUE(parse_interval("3600", seconds).ok);
  EXPECT_EQ(seconds, 3600u);
  EXPECT_TRUE(parse_interval("1000000000", seconds).ok);
  EXPECT_EQ(seconds, 1000000000u);
  for (const char* bad : {"", "0", "-1", "1.5", "1000000001", "99999999999999999999", "5s", " 5", "x"}) {
    EXPECT_FALSE(parse_interval(bad, seconds).ok) << "'" << bad << "'";
  }
}

TEST(Settings, Descriptor) {
  int fd = -1;
  EXPECT_TRUE(parse_descriptor("3", fd).ok);
  EXPECT_EQ(fd, 3);
  EXPECT_TRUE(parse_descriptor("0", fd).ok);
  EXPECT_EQ(fd, 0);
  EXPECT_TRUE(parse_descriptor("2147483647", fd).ok);
  for (const char* bad : {"", "-1", "2147483648", "3x", " 3", "x"}) {
    EXPECT_FALSE(parse_descriptor(bad, fd).ok) << "'" << bad << "'";
  }
}

TEST(Settings, FileName) {
  char out[64];
  struct Case {
    const char* pattern;
    bool ok;
    const char* expected;
  } cases[] = {
      {"report.txt", true, "report.txt"},
      {"report.%p", true, "report.1234"},
      {"%p/%p", true, "1234/1234"},
      {"100%%", true, "100%"},
      {"%%p", true, "%p"},
      {"report.%h.%t.%p", true, "report.build-7.1700000000.1234"},
      {"%h%h", true, "build-7build-7"},
      {"%%h%%t", true, "%h%t"},
      {"a%H", false, nullptr},
      {"a%T", false, nullptr},
      {"", false, nullptr},
      {"a%", false, nullptr},
      {"a%d", false, nullptr},
      {"%s", false, nullptr},
  };
  const FileNameValues values{1234, "build-7", 1700000000};
  for (const Case& c : cases) {
    ParseStatus status = expand_file_name(c.pattern, values, out, sizeof out);
    EXPECT_EQ(status.ok, c.ok) << c.pattern;
    if (c.ok) {
      EXPECT_STREQ(out, c.expected);
    }
  }
  // %c (counters in a file mapping beside the report) expands to nothing and says so; %%c is the text "%c".
  struct ContinuousCase {
    const char* pattern;
    const char* expected;
    bool continuous;
  } continuous_cases[] = {
      {"report.%p%c", "report.1234", true}, {"%creport", "report", true}, {"r%c%c", "r", true},
      {"r.%%c", "r.%c", false},             {"r.%p", "r.1234", false},
  };
  for (const ContinuousCase& c : continuous_cases) {
    bool continuous = false;
    ASSERT_TRUE(expand_file_name(c.pattern, values, out, sizeof out, &continuous).ok) << c.pattern;
    EXPECT_STREQ(out, c.expected);
    EXPECT_EQ(continuous, c.continuous) << c.pattern;
  }
  EXPECT_FALSE(expand_file_name("%c", values, out, sizeof out).ok);  // nothing left of the name
  const FileNameValues one{1, "h", 0};
  std::string long_name(100, 'x');
  EXPECT_FALSE(expand_file_name(long_name.c_str(), one, out, sizeof out).ok);
  std::string fits(63, 'y');
  EXPECT_TRUE(expand_file_name(fits.c_str(), one, out, sizeof out).ok);
  EXPECT_EQ(std::string(out), fits);
  // A host name expanding past the capacity is too long as well.
  const std::string host(60, 'h');
  EXPECT_FALSE(expand_file_name("r.%h.%p", FileNameValues{1, host.c_str(), 0}, out, sizeof out).ok);
}

// ------------------------------------------------------------------------------------------------ sampling

// A plan's probabilities on the fixed-point clock (plan.h): w = round(-ln(1 - p) * 2^48), p = 0 never, p = 1 above
// any countdown; increasing with p, and no weight past kCertainWeight (so countdown - weight cannot overflow).
TEST(Plan, WeightsOnTheFixedPointClock) {
  using namespace sampler::runtime;
  EXPECT_EQ(weight_of_probability(0), 0);
  EXPECT_EQ(weight_of_probability(1), kCertainWeight);
  EXPECT_EQ(weight_of_probability(0.5), std::llround(std::log(2.0) * 0x1p48));
  for (double p : {1e-300, 1e-12, 1e-6, 0.001, 0.01, 0.25, 0.75, 0.999999})
    EXPECT_NEAR(static_cast<double>(weight_of_probability(p)), -std::log1p(-p) * 0x1p48,
                std::max(1.0, -std::log1p(-p) * 0x1p48 * 1e-15))
        << p;
  int64_t previous = 0;
  for (double p = 1e-9; p < 1; p = p * 1.5 + 1e-9) {
    int64_t w = weight_of_probability(p);
    EXPECT_GE(w, previous) << p;
    EXPECT_LE(w, kCertainWeight) << p;
    previous = w;
  }
  EXPECT_LE(weight_of_probability(1 - 0x1p-53), kCertainWeight);
  EXPECT_GT(weight_of_probability(1 - 0x1p-53), int64_t{1} << 53);
}

// A unit of this ABI version whose thresholds compute_thresholds() fills from `bounds` and `weights`.
template <size_t W, size_t T, size_t B>
sampler_unit unit_with_bounds(int64_t (&weights)[W], int64_t (&thresholds)[T], const uint32_t (&bounds)[B]) {
  sampler_unit unit{};
  unit.abi_version = SAMPLER_ABI_VERSION;
  unit.weights = weights;
  unit.weight_count = W;
  unit.thresholds = thresholds;
  unit.threshold_count = T;
  unit.threshold_bounds = bounds;
  unit.threshold_bounds_size = B;
  return unit;
}

// Thresholds from a plan's weights (plan.h, compute_thresholds()): multiplier * sum of times * weight, saturated at
// 2^62 without overflowing, runs of sites counted once each; the multiplier UINT64_MAX (a site the compiler could
// not name) gives 2^62, and malformed bounds (a site or a run past the weights, words missing) 2^62 from there on;
// a unit of ABI version 3 gets 2^62 throughout.
TEST(Plan, ThresholdsFromTheWeights) {
  using namespace sampler::runtime;
  int64_t weights[4] = {5, 7, int64_t{1} << 40, kCertainWeight};
  const uint32_t bounds[] = {
      2, 1, 0, 0, 1, 2, 1,            // weights[0] + weights[2]
      1, 10, 0, 1, 3,                 // 10 * 3 * weights[1]
      0, 0xffffffffu, 0xffffffffu,    // unknown: 2^62
      1, 0, 1 << 24, 2, 1,            // 2^56 * weights[2]: saturated
      2, 1, 0, 3, 1, 0, 1,            // weights[3] + weights[0]: saturated
      1, 7, 0, 1, 0,                  // times 0: 0
      1, 2, 0, 1, SAMPLER_THRESHOLD_RUN | 2,  // 2 * (weights[1] + weights[2]): a run of two sites
      1, 1, 0, 3, SAMPLER_THRESHOLD_RUN | 2,  // a run past the weights: 2^62 from here on
      1, 1, 0, 0, 1};
  int64_t thresholds[9] = {};
  sampler_unit unit = unit_with_bounds(weights, thresholds, bounds);
  compute_thresholds(unit);
  EXPECT_EQ(thresholds[0], 5 + (int64_t{1} << 40));
  EXPECT_EQ(thresholds[1], 210);
  EXPECT_EQ(thresholds[2], kCertainWeight);
  EXPECT_EQ(thresholds[3], kCertainWeight);
  EXPECT_EQ(thresholds[4], kCertainWeight);
  EXPECT_EQ(thresholds[5], 0);
  EXPECT_EQ(thresholds[6], 2 * (7 + (int64_t{1} << 40)));
  EXPECT_EQ(thresholds[7], kCertainWeight + 63);  // safe as a threshold and as a loop's shift (its low 6 bits)
  EXPECT_EQ(thresholds[8], kCertainWeight + 63);
  // A loop's shift: 63 under a plan whatever the entry's other bits and pairs (its copy subtracts immediates and
  // must not run; a unit of a lowering whose copies subtracted weights then runs its checked loops, still exact).
  const uint32_t shifts[] = {1, 3, 0x80000000u, 1, 1,   // other bits 3, sum 7
                             0, 0, 0x80000000u,         // no pairs, other bits 0: what the lowering emits
                             1, 1, 0x80000000u, 3, 1};  // other bits 1, sum 2^62
  // The thresholds `entries` computed from the words `words`.
  auto compute = [&unit](int64_t* entries, uint32_t count, const uint32_t* words, uint32_t size) {
    unit.thresholds = entries;
    unit.threshold_count = count;
    unit.threshold_bounds = words;
    unit.threshold_bounds_size = size;
    compute_thresholds(unit);
  };
  int64_t shifted[3] = {};
  compute(shifted, 3, shifts, sizeof shifts / sizeof shifts[0]);
  EXPECT_EQ(shifted[0], 63);
  EXPECT_EQ(shifted[1], 63);
  EXPECT_EQ(shifted[2], 63);
  // A counted copy's B: 2^61 - 1 under a plan whatever the pairs, below sampling off's countdowns (the copy
  // subtracts immediates and must not run, the twin must still run when sampling is off).
  const uint32_t below[] = {0, 0xfffffffeu, 0xffffffffu,          // what the lowering emits
                            1, 0xfffffffeu, 0xffffffffu, 3, 1};  // a pair of weight 2^62
  int64_t below_unsampled[2] = {};
  compute(below_unsampled, 2, below, sizeof below / sizeof below[0]);
  EXPECT_EQ(below_unsampled[0], (int64_t{1} << 61) - 1);
  EXPECT_EQ(below_unsampled[1], (int64_t{1} << 61) - 1);
  unit.threshold_bounds = bounds;
  // Words missing at the end: the thresholds they would describe get 2^62.
  int64_t two[2] = {};
  unit.thresholds = two;
  unit.threshold_count = 2;
  unit.threshold_bounds_size = 7 + 3;
  compute_thresholds(unit);
  EXPECT_EQ(two[0], 5 + (int64_t{1} << 40));
  EXPECT_EQ(two[1], kCertainWeight + 63);
  // Version 3: no bounds read.
  unit.abi_version = 3;
  two[0] = 0;
  compute_thresholds(unit);
  EXPECT_EQ(two[0], kCertainWeight);
}

// The dispatches' entries (SAMPLER_THRESHOLD_DISPATCH): a function is off (INT64_MIN) when its sites all weigh 0
// and every function its twin calls is off, the greatest such set (a cycle of off functions stays off); on (2^61)
// otherwise, also with a site the compiler could not name (a callee past the entries). A counted copy's B naming
// an off dispatch is INT64_MIN, one naming an on dispatch 2^61 - 1.
TEST(Plan, DispatchesOffWithTheirCallees) {
  using namespace sampler::runtime;
  constexpr uint32_t kDispatchLow = 0xfffffffdu, kHigh = 0xffffffffu, kBelowLow = 0xfffffffeu;
  constexpr uint32_t kRun = SAMPLER_THRESHOLD_RUN, kCallee = SAMPLER_THRESHOLD_CALLEE;
  int64_t weights[6] = {0, 0, 5, 0, 0, 0};
  const uint32_t bounds[] = {
      1, kDispatchLow, kHigh, 1, kCallee,                 // 0: no site, calls 1: on in a second pass
      2, kDispatchLow, kHigh, 0, kRun | 2, 2, kCallee,    // 1: sites 0 and 1 at 0, calls 2: on
      1, kDispatchLow, kHigh, 2, 1,                       // 2: site 2 weighs 5: on
      2, kDispatchLow, kHigh, 3, 1, 4, kCallee,           // 3: site 3 at 0, calls 4
      2, kDispatchLow, kHigh, 4, 1, 3, kCallee,           // 4: site 4 at 0, calls 3: both off
      2, kDispatchLow, kHigh, 5, 1, kHigh, kCallee,       // 5: a site it cannot name: on
      1, kBelowLow, kHigh, 3, kCallee,                    // 6: B of the off function 3
      1, kBelowLow, kHigh, 1, kCallee,                    // 7: B of the on function 1
      1, kDispatchLow, kHigh, 9, 1};                      // 8: a site past the weights: on
  int64_t thresholds[9] = {};
  sampler_unit unit = unit_with_bounds(weights, thresholds, bounds);
  compute_thresholds(unit);
  constexpr int64_t kOn = int64_t{1} << 61, kOff = INT64_MIN;
  EXPECT_EQ(thresholds[0], kOn);
  EXPECT_EQ(thresholds[1], kOn);
  EXPECT_EQ(thresholds[2], kOn);
  EXPECT_EQ(thresholds[3], kOff);
  EXPECT_EQ(thresholds[4], kOff);
  EXPECT_EQ(thresholds[5], kOn);
  EXPECT_EQ(thresholds[6], kOff);
  EXPECT_EQ(thresholds[7], kOn - 1);
  EXPECT_EQ(thresholds[8], kOn);
  // Site 2 at 0 too: every function off.
  weights[2] = 0;
  compute_thresholds(unit);
  for (int i : {0, 1, 2, 3, 4, 6}) EXPECT_EQ(thresholds[i], kOff) << i;
  EXPECT_EQ(thresholds[5], kOn);
  // A callee the walk did not reach (the bounds end before it): on.
  int64_t two[2] = {};
  unit.thresholds = two;
  unit.threshold_count = 2;
  unit.threshold_bounds_size = 5;
  compute_thresholds(unit);
  EXPECT_EQ(two[0], kOn);
  EXPECT_EQ(two[1], kCertainWeight + 63);
}

// A plan's entries in any order give the same weights (load_plan(), apply_plan()): sampler-analyze writes one run
// of entries a unit, the units in the site files' order (put in order as blocks), but a unit split in two runs or
// any order at all is read too (heapsorted); the same entry twice is refused in every order.
TEST(Plan, EntriesInAnyOrderGiveTheSameWeights) {
  using namespace sampler::runtime;
  const char* signatures[] = {"f0000000000000000000000000000001", "00000000000000000000000000000002",
                              "80000000000000000000000000000000"};
  const char* scheme_of[] = {"branches", "branches", "branches", "returns", "returns"};
  const uint32_t site_of[] = {0, 1, 2, 0, 1};
  const char* probabilities[] = {"0", "1", "0.25", "1e-6", "0.5"};
  struct Entry {
    int unit, index;  // index: of scheme_of, site_of; the probability's is (unit + index) % 5
  };
  std::vector<Entry> in_order;
  for (int u = 0; u < 3; ++u)
    for (int i = 0; i < 5; ++i) in_order.push_back({u, i});
  auto ordered = [&](std::initializer_list<int> units, bool reversed_within) {
    std::vector<Entry> out;
    for (int u : units)
      for (int i = 0; i < 5; ++i) out.push_back({u, reversed_within ? 4 - i : i});
    return out;
  };
  std::vector<Entry> split = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4},
                              {0, 3}, {0, 4}, {2, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4}};
  std::vector<Entry> reversed(in_order.rbegin(), in_order.rend());
  const std::string path = testing::TempDir() + "plan_order_test.plan";
  auto write = [&](const std::vector<Entry>& entries) {
    std::string text = "sampler-plan\t1\nid\torder\n";
    for (const Entry& e : entries)
      text += std::string(signatures[e.unit]) + "\t" + scheme_of[e.index] + "\t" + std::to_string(site_of[e.index]) +
              "\t" + probabilities[(e.unit + e.index) % 5] + "\n";
    FILE* file = fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    fputs(text.c_str(), file);
    fclose(file);
  };
  PlanIdentity saved = g_plan_identity;
  for (const auto& entries : {in_order, ordered({2, 0, 1}, false), ordered({1, 2, 0}, true), split, reversed}) {
    write(entries);
    ASSERT_TRUE(load_plan(path.c_str(), nullptr, 0, false));
    for (int u = 0; u < 3; ++u) {
      int64_t weights[5] = {-1, -1, -1, -1, -1};
      sampler_scheme schemes[2] = {};
      schemes[0].name = "branches";
      schemes[0].site_count = 3;
      schemes[1].name = "returns";
      schemes[1].site_count = 2;
      sampler_unit unit{};
      unit.abi_version = SAMPLER_ABI_VERSION;
      unit.scheme_count = 2;
      unit.signature = signatures[u];
      unit.schemes = schemes;
      unit.weights = weights;
      unit.weight_count = 5;
      apply_plan(unit);
      for (int i = 0; i < 5; ++i) {
        double p = std::strtod(probabilities[(u + i) % 5], nullptr);
        EXPECT_EQ(weights[i], weight_of_probability(p)) << "unit " << u << ", weight " << i;
      }
    }
    // The same entry twice, once in another run of its unit: refused.
    std::vector<Entry> twice = entries;
    twice.push_back(entries.front());
    write(twice);
    EXPECT_FALSE(load_plan(path.c_str(), nullptr, 0, false));
  }
  g_plan_identity = saved;
  std::remove(path.c_str());
}

TEST(Sampling, NaturalLog) {
  for (double x : {1.0, 0.5, 0.25, 0.999999, 1e-5, 1e-300, 0x1.0p-53, 0.7071067811865476, 0.123456789, 2.0, 10.0,
                   1e300}) {
    EXPECT_NEAR(natural_log(x), std::log(x), 4e-16 * std::max(1.0, std::fabs(std::log(x)))) << x;
  }
  EXPECT_EQ(natural_log(1.0), 0.0);
}

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// An exponential variate drawn as the runtime draws it, from its generator's words (state `x`).
double exponential_from(uint64_t& x) {
  return exponential_variate([&x] { return next_random_word(x); });
}

TEST(Ziggurat, LayersHaveEqualAreas) {
  // Each layer above the base spans [0, its width] between its two heights, with the same area as the base (the
  // rectangle under e^-r plus the tail), and the top layer ends at the curve's top: the tables describe e^-x.
  using namespace ziggurat;
  const double base = kTables.width[0] * 0x1p53 * kTables.top[0];
  EXPECT_NEAR(base, kLayerArea, 1e-15);
  EXPECT_NEAR(kTailStart * std::exp(-kTailStart) + std::exp(-kTailStart), kLayerArea, 1e-12);
  for (int i = 1; i < kLayers; ++i) {
    double width = kTables.width[i] * 0x1p53;
    EXPECT_NEAR(kTables.bottom[i], std::exp(-width), 1e-15) << i;
    EXPECT_NEAR(width * (kTables.top[i] - kTables.bottom[i]), kLayerArea, 1e-12 * kLayerArea * 1e3) << i;
    EXPECT_LT(kTables.inside[i], uint64_t{1} << 53) << i;
  }
  EXPECT_NEAR(kTables.top[kLayers - 1], 1.0, 1e-15);
  EXPECT_EQ(kTables.inside[kLayers - 1], 0u);  // the top layer is all wedge
}

TEST(Ziggurat, ExponentialDistribution) {
  // 10^7 variates against e^-x: 200 bins of equal probability (chi-square, 199 degrees of freedom: below 290 with
  // probability 0.99995), the share beyond the base layer (the tail), mean and variance 1.
  uint64_t x = 77;
  constexpr int kBins = 200;
  constexpr int kDraws = 10000000;
  std::vector<int> bins(kBins);
  double sum = 0, squares = 0;
  int tail = 0, words = 0;
  for (int i = 0; i < kDraws; ++i) {
    double e = exponential_variate([&] {
      ++words;
      return next_random_word(x);
    });
    ASSERT_GE(e, 0.0);
    ASSERT_TRUE(std::isfinite(e));
    sum += e;
    squares += e * e;
    tail += e > ziggurat::kTailStart;
    int bin = static_cast<int>((1.0 - std::exp(-e)) * kBins);  // the CDF's value is uniform
    ++bins[std::min(bin, kBins - 1)];
  }
  double chi_square = 0, expected = static_cast<double>(kDraws) / kBins;
  for (int count : bins) chi_square += (count - expected) * (count - expected) / expected;
  EXPECT_LT(chi_square, 290.0);
  double p_tail = std::exp(-ziggurat::kTailStart);
  EXPECT_NEAR(tail, kDraws * p_tail, 5 * std::sqrt(kDraws * p_tail));
  EXPECT_NEAR(sum / kDraws, 1.0, 5 / std::sqrt(kDraws));
  EXPECT_NEAR(squares / kDraws - (sum / kDraws) * (sum / kDraws), 1.0, 0.005);
  // One word a draw but for the wedges and the tail (2.2 % of draws, with their restarts about 3.4 % more words).
  EXPECT_LT(words, kDraws * 1.05);
}

TEST(Sampling, NaturalLogIsAccurateOverTheUniforms) {
  // Relative to libm's, within 2 ulp (both are within about 1 ulp of the exact value), over what the draws take:
  // random uniforms (the runtime's conversion: multiples of 2^-53 in (0, 1]), the ones nearest 1 (the smallest
  // logarithms, which need r exact), the smallest ones, every table bucket's edges and beyond [0.5, 2).
  auto check = [](double x) {
    double expected = std::log(x);
    ASSERT_LE(std::fabs(natural_log(x) - expected), 4.5e-16 * std::fabs(expected)) << std::hexfloat << x;
  };
  uint64_t state = 31;
  for (int i = 0; i < 2000000; ++i) check(static_cast<double>((splitmix(state) >> 11) + 1) * 0x1.0p-53);
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = splitmix(state) >> (11 + i % 50);  // below 2^53, of every size
    check(1.0 - static_cast<double>(bits + 1) * 0x1.0p-53);
    check(static_cast<double>(bits + 1) * 0x1.0p-53);
  }
  for (int i = 1; i < 100000; ++i) {
    check(1.0 - i * 0x1.0p-53);
    check(1.0 + i * 0x1.0p-52);
  }
  for (double x = 0x1.0p-12; x < 4.0; x += 0x1.0p-12) {  // every bucket's edges, and the values around them
    check(x);
    check(std::nextafter(x, 0.0));
    check(std::nextafter(x, 8.0));
  }
  for (double x : {0x1.0p-1022, 1e-300, 1e300, 1.7976931348623157e308}) check(x);
}

TEST(Sampling, GeometricMeanAndVariance) {
  // The countdown is geometric with p = 1/S: mean S, variance (1 - p) / p^2. With 10^6 draws the sample mean is
  // within 5 standard errors of S.
  for (double sparsity : {2.0, 100.0, 1000.0}) {
    uint64_t x = 12345;
    const int draws = 1000000;
    double sum = 0, squares = 0;
    int64_t smallest = INT64_MAX;
    for (int i = 0; i < draws; ++i) {
      int64_t g = geometric_countdown(exponential_from(x), sparsity);
      smallest = std::min(smallest, g);
      sum += static_cast<double>(g);
      squares += static_cast<double>(g) * static_cast<double>(g);
    }
    double p = 1.0 / sparsity;
    double variance = (1 - p) / (p * p);
    double mean = sum / draws;
    EXPECT_EQ(smallest, 1) << sparsity;
    EXPECT_NEAR(mean, sparsity, 5 * std::sqrt(variance / draws)) << sparsity;
    double sample_variance = squares / draws - mean * mean;
    EXPECT_NEAR(sample_variance / variance, 1.0, 0.05) << sparsity;
  }
  EXPECT_EQ(geometric_countdown(0.0, 1.0), 1);
  EXPECT_EQ(geometric_countdown(40.0, 1.0), 1);
  EXPECT_EQ(geometric_countdown(0.0, 100.0), 1);    // E = 0: the very next opportunity
  EXPECT_GE(geometric_countdown(36.7, 100.0), 3000);  // E = 36.7 (the largest of 2^53 draws): a long wait, finite
}

TEST(Settings, FileNameHostWithASlash) {
  // The kernel takes any bytes as a host name: a '/' must not move the report into another directory.
  char out[64];
  ASSERT_TRUE(expand_file_name("r.%h", FileNameValues{1, "a/../b", 0}, out, sizeof out).ok);
  EXPECT_STREQ(out, "r.a_.._b");
}

TEST(Sampling, NaturalLog1p) {
  for (double x : {-0.5, -1e-3, -1e-8, -1e-15, -0x1.0p-52, -0x1.0p-53, -5e-17, -1e-300, -0.999999, 1e-10, 0.5, 3.0}) {
    EXPECT_NEAR(natural_log1p(x), std::log1p(x), 4e-16 * std::fabs(std::log1p(x))) << x;
  }
  for (double sparsity : {2.0, 3.0, 1e3, 1e9, 1e15, 9007199254740992.0, 2e16, 1e100, 1e300}) {
    EXPECT_NEAR(natural_log1p(-1.0 / sparsity), std::log1p(-1.0 / sparsity), 4e-16 / sparsity) << sparsity;
  }
}

TEST(Sampling, HugeSparsity) {
  // From S = 2^53 on, 1 - 1/S rounds to 1: its logarithm must not be taken. The countdown stays geometric with
  // mean S (within 5 standard errors over 10^5 draws), and saturates at 2^62 where S is beyond it.
  constexpr int64_t kNever = int64_t{1} << 62;
  for (double sparsity : {1e15, 2e16, 1e18}) {
    uint64_t x = 2024;
    const int draws = 100000;
    double sum = 0;
    int64_t smallest = INT64_MAX;
    for (int i = 0; i < draws; ++i) {
      int64_t g = geometric_countdown(exponential_from(x), sparsity);
      smallest = std::min(smallest, g);
      sum += static_cast<double>(g);
    }
    EXPECT_GT(smallest, 1000) << sparsity;  // P(G <= 1000) = 1000 / S
    EXPECT_NEAR(sum / draws / sparsity, 1.0, 5 / std::sqrt(static_cast<double>(draws))) << sparsity;
  }
  for (double sparsity : {1e30, 1e300, std::numeric_limits<double>::max()}) {
    uint64_t x = 7;
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(geometric_countdown(exponential_from(x), sparsity), kNever) << sparsity;
    // E = 0: the next opportunity, whatever the sparsity.
    EXPECT_EQ(geometric_countdown(0.0, sparsity), 1) << sparsity;
  }
}

TEST(Sampling, CountdownsReachTheCapWithoutPassingIt) {
  // Where E * scale crosses 2^62 the countdowns grow with E up to the cap and stay there: 1 + floor of the largest
  // skip below 2^62 is below it, and no skip overflows past it.
  constexpr int64_t kNever = int64_t{1} << 62;
  double sparsity = 0x1p62;
  double e = 0.999999;
  int64_t previous = 0;
  bool below = false, at = false;
  for (int i = 0; i < 4000; ++i, e = std::nextafter(e, 2.0) + 1e-9) {
    int64_t g = geometric_countdown(e, sparsity);
    ASSERT_GE(g, previous) << e;
    ASSERT_LE(g, kNever) << e;
    below = below || g < kNever;
    at = at || g == kNever;
    previous = g;
  }
  EXPECT_TRUE(below);
  EXPECT_TRUE(at);
}

/// Draws 10^5 countdowns by the table of `sparsity` (or of `scale`, if above 0) and the same in double from the same
/// words (countdown_at_scale), and counts in `differ` those that differ; fails where one is out of bounds.
void compare_with_double_draws(double sparsity, double scale, bool fixed_point, int* differ) {
  constexpr int64_t kNever = int64_t{1} << 62;
  CountdownTable table;
  if (scale > 0) {
    fill_countdown_table(table, scale);
  } else {
    fill_countdown_table_for(table, sparsity);
  }
  ASSERT_EQ(table.core_limit[1] != 0, fixed_point) << sparsity << " " << scale;
  uint64_t state = 5;
  *differ = 0;
  for (int i = 0; i < 100000; ++i) {
    uint64_t again = state;
    int64_t countdown = countdown_from_words(table, [&state] { return next_random_word(state); });
    double e = exponential_variate([&again] { return next_random_word(again); });
    int64_t reference = scale > 0 ? countdown_at_scale(e, scale) : geometric_countdown(e, sparsity);
    ASSERT_EQ(again, state) << sparsity << " " << scale;
    ASSERT_GE(countdown, 1);
    ASSERT_LE(countdown, kNever);
    // The roundings, and the word's low 11 bits below the position's 53: at most one position's step (the widest
    // layer's, about 8.7 * 2^-53 nat, times the scale).
    double tolerance = 1 + static_cast<double>(reference) * 0x1p-50 + table.scale * 0x1p-49;
    ASSERT_LE(std::fabs(static_cast<double>(countdown - reference)), tolerance) << sparsity << " " << scale << " " << e;
    *differ += countdown != reference;
  }
}

TEST(Sampling, FixedPointCountdownsAreTheDoubleDraws) {
  // The bank's countdowns in fixed point (ziggurat.h, CountdownTable) against 1 + floor(E * scale) in double from
  // the same words: the same words taken, and the same countdown up to the two ways' roundings (about 2^-51 of
  // the countdown) and the position's step the word's low bits fill in; where the scale is beyond fixed point (a
  // sparsity from about 2.6 * 10^17), every draw the double one, saturated at 2^62.
  int differ = 0;
  // Near 1 the scale is smallest (about 1/36.7): the multipliers still keep their bits.
  for (double sparsity : {1.0000000001, 1.5, 2.0, 10.0, 1000.0}) {
    compare_with_double_draws(sparsity, 0, true, &differ);
    EXPECT_LT(differ, 100) << sparsity;
  }
  for (double sparsity : {1e9, 1e15, 2e17}) compare_with_double_draws(sparsity, 0, true, &differ);
  compare_with_double_draws(0, 0x1p48, true, &differ);  // a plan's clock: 2^48 units a nat
  for (double sparsity : {3e17, 1e18, 1e30, std::numeric_limits<double>::max()}) {
    compare_with_double_draws(sparsity, 0, false, &differ);
    EXPECT_EQ(differ, 0) << sparsity;
  }
}

TEST(Sampling, ProbabilityOfTheFirstOpportunity) {
  // P(G = 1) = p: the first opportunity of a new thread is taken with the same probability as any other.
  uint64_t x = 99;
  int ones = 0;
  const int draws = 1000000;
  for (int i = 0; i < draws; ++i) ones += geometric_countdown(exponential_from(x), 10.0) == 1;
  EXPECT_NEAR(ones, draws / 10.0, 5 * std::sqrt(draws * 0.1 * 0.9));
}

/// The runtime's generator, written out again: wyrand seeded through splitmix64 as seed_thread seeds the thread of
/// index `index` under SAMPLER_SEED=`seed`. The reference the banked draws must equal.
struct ReferenceGenerator {
  uint64_t state;
  ReferenceGenerator(uint64_t seed, uint32_t index) {
    uint64_t x = seed ^ (0xd1b54a32d192ed03ull * (uint64_t{index} + 1));
    state = splitmix(x);
  }
  uint64_t next() {
    state += 0xa0761d6478bd642full;
    __uint128_t product = static_cast<__uint128_t>(state) * (state ^ 0xe7037ed1a0b428dbull);
    return static_cast<uint64_t>(product >> 64) ^ static_cast<uint64_t>(product);
  }
  /// The next countdown at `sparsity`, as the thread's bank draws it (none drawn at sparsity 1 or below).
  int64_t countdown(double sparsity) {
    if (sparsity <= 1.0) return 1;
    CountdownTable table;
    fill_countdown_table_for(table, sparsity);
    return countdown_from_words(table, [this] { return next(); });
  }
};

/// The chi-square value exceeded with probability about 10^-5 at `dof` degrees of freedom (Wilson and Hilferty's
/// approximation, within 1 % there): a statistic above it fails the test.
double chi_square_bound(int dof) {
  double h = 2.0 / (9.0 * dof);
  return dof * std::pow(1.0 - h + 4.265 * std::sqrt(h), 3);
}

/// What the tests of a generator see of 10^6 countdowns at sparsity 10, drawn as the runtime draws them from the
/// words `next()` returns (countdown_from_words: the ziggurat's layer and position, the countdown in fixed point).
struct CountdownStatistics {
  double mean_error;      ///< the sample mean's distance from 10, in standard errors
  double variance_ratio;  ///< the sample variance over the law's, 0.9 / 0.1^2
  double values;          ///< chi-square of the values 1 to 60 and beyond 60 against the law: 60 degrees of freedom
  double pairs;           ///< chi-square of successive countdowns' classes (8 x 8) against independence: 63 degrees
};

template <typename Next>
CountdownStatistics countdown_statistics(Next next) {
  constexpr int kDraws = 1000000;
  constexpr double p = 0.1;
  constexpr int kLargest = 60;
  // Classes of about equal probability for the pairs: [1], [2], [3, 4], [5, 6], [7, 9], [10, 13], [14, 20], [21, ...).
  constexpr int64_t kClassStart[] = {1, 2, 3, 5, 7, 10, 14, 21};
  constexpr int kClasses = 8;
  auto class_of = [&](int64_t g) {
    int c = 0;
    while (c + 1 < kClasses && g >= kClassStart[c + 1]) ++c;
    return c;
  };
  auto at_least = [&](int64_t k) { return std::pow(1 - p, static_cast<double>(k - 1)); };  // P(G >= k)
  std::vector<double> values(kLargest + 1), pairs(kClasses * kClasses);
  double sum = 0, squares = 0;
  int previous_class = -1;
  CountdownTable table;
  fill_countdown_table_for(table, 1 / p);
  for (int i = 0; i < kDraws; ++i) {
    int64_t g = countdown_from_words(table, next);
    sum += static_cast<double>(g);
    squares += static_cast<double>(g) * static_cast<double>(g);
    ++values[std::min<int64_t>(g, kLargest + 1) - 1];
    int c = class_of(g);
    if (previous_class < 0) {
      previous_class = c;
    } else {  // disjoint pairs: (first, second), (third, fourth), ...
      ++pairs[previous_class * kClasses + c];
      previous_class = -1;
    }
  }
  CountdownStatistics s{};
  double variance = (1 - p) / (p * p), mean = sum / kDraws;
  s.mean_error = (mean - 1 / p) / std::sqrt(variance / kDraws);
  s.variance_ratio = (squares / kDraws - mean * mean) / variance;
  for (int k = 1; k <= kLargest + 1; ++k) {
    double probability = k <= kLargest ? at_least(k) - at_least(k + 1) : at_least(k);
    double expected = kDraws * probability;
    s.values += (values[k - 1] - expected) * (values[k - 1] - expected) / expected;
  }
  std::vector<double> class_probability(kClasses);
  for (int c = 0; c < kClasses; ++c) {
    class_probability[c] = at_least(kClassStart[c]) - (c + 1 < kClasses ? at_least(kClassStart[c + 1]) : 0.0);
  }
  for (int a = 0; a < kClasses; ++a) {
    for (int b = 0; b < kClasses; ++b) {
      double expected = kDraws / 2 * class_probability[a] * class_probability[b];
      double seen = pairs[a * kClasses + b];
      s.pairs += (seen - expected) * (seen - expected) / expected;
    }
  }
  return s;
}

bool passes(const CountdownStatistics& s) {
  return std::fabs(s.mean_error) < 5 && std::fabs(s.variance_ratio - 1) < 0.02 && s.values < chi_square_bound(60) &&
         s.pairs < chi_square_bound(63);
}

TEST(Sampling, CountdownsOfTheRuntimesGeneratorAreGeometric) {
  // The countdowns drawn from the runtime's generator, at fixed seeds (deterministic), against the geometric law
  // of p = 1/10: mean and variance, a chi-square over the values and one over successive pairs (independence).
  for (uint64_t seed : {1ull, 4242ull, 0x9e3779b97f4a7c15ull}) {
    uint64_t x = seed;
    uint64_t state = splitmix(x);
    CountdownStatistics s = countdown_statistics([&state] { return next_random_word(state); });
    EXPECT_LT(std::fabs(s.mean_error), 5) << seed;
    EXPECT_NEAR(s.variance_ratio, 1, 0.02) << seed;
    EXPECT_LT(s.values, chi_square_bound(60)) << seed;
    EXPECT_LT(s.pairs, chi_square_bound(63)) << seed;
  }
}

TEST(Sampling, CountdownTestsRejectWrongGenerators) {
  // The tests above are strong enough to see generators that would sample wrongly: each of these fails them.
  uint64_t state = 12345;
  // The top bit stuck at 0: every position in the lower half of its layer, the countdowns too short.
  CountdownStatistics stuck = countdown_statistics([&state] { return next_random_word(state) >> 1; });
  EXPECT_GT(stuck.values, chi_square_bound(60));
  EXPECT_FALSE(passes(stuck));
  // A 64-bit linear congruential generator's raw words (Knuth's MMIX constants): the layer, from the low byte,
  // follows a cycle of 256, so successive variates are tied.
  uint64_t lcg = 12345;
  CountdownStatistics congruential = countdown_statistics([&lcg] {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return lcg;
  });
  EXPECT_FALSE(passes(congruential));
  // Every word twice: each pair of countdowns equal, the values' law intact.
  uint64_t repeated = 0, count = 0;
  CountdownStatistics twice = countdown_statistics([&] {
    if (count++ % 2 == 0) repeated = next_random_word(state);
    return repeated;
  });
  EXPECT_GT(twice.pairs, chi_square_bound(63));
  EXPECT_FALSE(passes(twice));
}

/// Runs `body` on a new thread (a fresh countdown, generator and bank), after the runtime's own initialisation,
/// so that the configuration the test sets is not replaced by the environment's.
template <typename Body>
void on_new_thread(Body body) {
  sampler_countdown = 0;
  sampler_sample_now();  // initialises the runtime on this thread
  std::thread thread(body);
  thread.join();
}

TEST(Sampling, BankedDrawsAreTheGeneratorsCountdownsInOrder) {
  // The countdowns a thread draws (through its bank of logarithms) are, one for one, the geometric countdowns of
  // its generator's successive outputs at the sparsity in force at each draw: the same SAMPLER_SEED gives the
  // same samples as drawing each countdown on its own did, across refills of the bank and sparsity changes
  // between them (a change takes effect at the next draw; the calling thread's next opportunity draws at once).
  on_new_thread([] {
    configure_sampling(true, 7.0, true, 4242);
    uint32_t index = seeded_thread_count();
    ReferenceGenerator reference(4242, index);
    // Opportunity numbers of the samples, expected and seen.
    std::vector<uint64_t> expected, seen;
    uint64_t opportunity = 0, next_sample = 0;
    double sparsity = 7.0;
    auto run = [&](int samples) {
      for (int taken = 0; taken < samples;) {
        ++opportunity;
        if (sampler_sample_now() != 0) {
          seen.push_back(opportunity);
          ++taken;
        }
      }
    };
    // A new thread's first opportunity draws the first countdown: its first sample is that many opportunities in.
    next_sample = static_cast<uint64_t>(reference.countdown(sparsity));
    for (int i = 0; i < 100; ++i) {
      expected.push_back(next_sample);
      next_sample += static_cast<uint64_t>(reference.countdown(sparsity));
    }
    run(100);
    ASSERT_EQ(seen, expected);
    // The sparsity changes (the configured seed no longer matters to a seeded thread): the next opportunity
    // samples and draws with the new sparsity, and so on.
    for (double changed : {1000.0, 2.0, 1.0, 33.0}) {
      configure_sampling(true, changed, true, 4242);
      sparsity = changed;
      next_sample = opportunity + 1;
      for (int i = 0; i < 37; ++i) {
        expected.push_back(next_sample);
        next_sample += static_cast<uint64_t>(reference.countdown(sparsity));
      }
      run(37);
      ASSERT_EQ(seen, expected) << changed;
    }
  });
}

TEST(Sampling, SampledOpportunitiesAreGeometric) {
  // Through the fast path and the bank: the gaps between samples are geometric with p = 1/S (mean S, variance
  // (1 - p) / p^2, P(gap = 1) = p), within 5 standard errors.
  for (double sparsity : {2.0, 10.0, 1000.0}) {
    on_new_thread([sparsity] {
      configure_sampling(true, sparsity, true, 77);
      const int gaps = sparsity < 10 ? 1000000 : sparsity < 1000 ? 200000 : 20000;
      uint64_t gap = 0;
      double sum = 0, squares = 0;
      int ones = 0;
      sampler_sample_now();  // the sample right after configuring; the gaps count from there
      for (int n = 0; n < gaps;) {
        ++gap;
        if (sampler_sample_now() == 0) continue;
        sum += static_cast<double>(gap);
        squares += static_cast<double>(gap) * static_cast<double>(gap);
        ones += gap == 1;
        gap = 0;
        ++n;
      }
      double p = 1.0 / sparsity, variance = (1 - p) / (p * p);
      double mean = sum / gaps;
      EXPECT_NEAR(mean, sparsity, 5 * std::sqrt(variance / gaps)) << sparsity;
      EXPECT_NEAR((squares / gaps - mean * mean) / variance, 1.0, 0.05) << sparsity;
      EXPECT_NEAR(ones, gaps * p, 5 * std::sqrt(gaps * p * (1 - p))) << sparsity;
    });
  }
}

TEST(Sampling, TakeOpportunityAloneSamplesAsTheFastPathDoes) {
  // Code that counts its own samples decrements the countdown itself and calls sampler_take_opportunity() when it
  // reaches zero (tested with == 0, as sampler-cc does): the same opportunities sample as through
  // sampler_sample_now(), the reference's, from a new thread's first opportunity (which seeds it and may not
  // sample) on.
  on_new_thread([] {
    // A new thread's countdown is 1, so that a site testing for 0 enters the runtime at once (sampler/abi.h).
    EXPECT_EQ(sampler_countdown, 1);
    configure_sampling(true, 5.0, true, 31);
    EXPECT_EQ(sampler_countdown, 1);
    ReferenceGenerator reference(31, seeded_thread_count());
    uint64_t expected = static_cast<uint64_t>(reference.countdown(5.0));
    int samples = 0;
    for (uint64_t opportunity = 1; samples < 200; ++opportunity) {
      if (--sampler_countdown != 0) continue;
      int taken = sampler_take_opportunity();
      ASSERT_GE(sampler_countdown, 1) << "never left below 1";
      if (taken == 0) continue;
      ++samples;
      ASSERT_EQ(opportunity, expected);
      expected += static_cast<uint64_t>(reference.countdown(5.0));
    }
    EXPECT_GT(sampler_countdown, 0);
    configure_sampling(false, 5.0, true, 31);
    sampler_countdown = 0;
    EXPECT_EQ(sampler_take_opportunity(), 0) << "sampling off";
    EXPECT_GE(sampler_countdown, int64_t{1} << 61);
  });
}

TEST(Sampling, ThreadsDrawIndependentStreams) {
  // Two threads under the same seed have different streams (the thread index is part of the seed), and each
  // thread's stream is its own: the second thread's samples are the reference's for its index, whatever the
  // first drew.
  std::vector<uint64_t> first_samples[2];
  for (auto& samples : first_samples) {
    on_new_thread([&samples] {
      configure_sampling(true, 50.0, true, 9);
      ReferenceGenerator reference(9, seeded_thread_count());
      uint64_t expected = static_cast<uint64_t>(reference.countdown(50.0));
      for (uint64_t opportunity = 1; samples.size() < 40; ++opportunity) {
        if (sampler_sample_now() == 0) continue;
        samples.push_back(opportunity);
        EXPECT_EQ(opportunity, expected);
        expected += static_cast<uint64_t>(reference.countdown(50.0));
      }
    });
  }
  EXPECT_NE(first_samples[0], first_samples[1]);
}

// ------------------------------------------------------------------------------------------ classification

TEST(Classify, FloatKinds) {
  const double subnormal = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(sampler_classify_double(-INFINITY), SAMPLER_FLOAT_NEGATIVE_INFINITE);
  EXPECT_EQ(sampler_classify_double(-1.0), SAMPLER_FLOAT_NEGATIVE_NORMAL);
  EXPECT_EQ(sampler_classify_double(-subnormal), SAMPLER_FLOAT_NEGATIVE_SUBNORMAL);
  EXPECT_EQ(sampler_classify_double(-0.0), SAMPLER_FLOAT_NEGATIVE_ZERO);
  EXPECT_EQ(sampler_classify_double(NAN), SAMPLER_FLOAT_NAN);
  EXPECT_EQ(sampler_classify_double(-NAN), SAMPLER_FLOAT_NAN);
  EXPECT_EQ(sampler_classify_double(0.0), SAMPLER_FLOAT_POSITIVE_ZERO);
  EXPECT_EQ(sampler_classify_double(subnormal), SAMPLER_FLOAT_POSITIVE_SUBNORMAL);
  EXPECT_EQ(sampler_classify_double(3.0), SAMPLER_FLOAT_POSITIVE_NORMAL);
  EXPECT_EQ(sampler_classify_double(INFINITY), SAMPLER_FLOAT_POSITIVE_INFINITE);
  // Each type in its own terms: 1e-39 is subnormal as a float, normal as a double.
  EXPECT_EQ(sampler_classify_float(1e-39f), SAMPLER_FLOAT_POSITIVE_SUBNORMAL);
  EXPECT_EQ(sampler_classify_double(1e-39), SAMPLER_FLOAT_POSITIVE_NORMAL);
  EXPECT_EQ(sampler_classify_double(1e-310), SAMPLER_FLOAT_POSITIVE_SUBNORMAL);
  EXPECT_EQ(sampler_classify_long_double(1e-310L), SAMPLER_FLOAT_POSITIVE_NORMAL);
  EXPECT_EQ(sampler_classify_long_double(-std::numeric_limits<long double>::denorm_min()),
            SAMPLER_FLOAT_NEGATIVE_SUBNORMAL);
  EXPECT_EQ(sampler_classify_float(-INFINITY), SAMPLER_FLOAT_NEGATIVE_INFINITE);
}

TEST(Classify, SignsComparisonsAndObjects) {
  EXPECT_EQ(sampler_classify_sign(INT64_MIN), 0u);
  EXPECT_EQ(sampler_classify_sign(-1), 0u);
  EXPECT_EQ(sampler_classify_sign(0), 1u);
  EXPECT_EQ(sampler_classify_sign(INT64_MAX), 2u);
  EXPECT_EQ(sampler_classify_compare(-5, 3), 0u);
  EXPECT_EQ(sampler_classify_compare(3, 3), 1u);
  EXPECT_EQ(sampler_classify_compare(INT64_MAX, INT64_MIN), 2u);
  EXPECT_EQ(sampler_classify_g_object_unref(1, 0), 0u);
  EXPECT_EQ(sampler_classify_g_object_unref(1, 1), 1u);
  EXPECT_EQ(sampler_classify_g_object_unref(1, 7), 2u);
  EXPECT_EQ(sampler_classify_g_object_unref(0, 1), 3u);
}

// --------------------------------------------------------------------------------------------- bounds keys

TEST(Bounds, KeysPreserveOrderAndClampToTheType) {
  // Signed keys order like the values.
  EXPECT_LT(bound_key(SAMPLER_BOUND_I64, static_cast<uint64_t>(int64_t{-1})), bound_key(SAMPLER_BOUND_I64, 0));
  EXPECT_LT(bound_key(SAMPLER_BOUND_I64, static_cast<uint64_t>(INT64_MIN)),
            bound_key(SAMPLER_BOUND_I64, static_cast<uint64_t>(int64_t{-1})));
  EXPECT_EQ(bound_signed_value(SAMPLER_BOUND_I64, bound_key(SAMPLER_BOUND_I64, static_cast<uint64_t>(-77))), -77);
  // The zero-initialised pair decodes to the type's identities.
  EXPECT_EQ(bound_signed_value(SAMPLER_BOUND_I8, ~uint64_t{0}), 127);
  EXPECT_EQ(bound_signed_value(SAMPLER_BOUND_I8, 0), -128);
  EXPECT_EQ(bound_signed_value(SAMPLER_BOUND_I32, ~uint64_t{0}), INT32_MAX);
  EXPECT_EQ(bound_signed_value(SAMPLER_BOUND_I64, 0), INT64_MIN);
  EXPECT_EQ(bound_unsigned_value(SAMPLER_BOUND_U16, ~uint64_t{0}), 65535u);
  EXPECT_EQ(bound_unsigned_value(SAMPLER_BOUND_U64, ~uint64_t{0}), UINT64_MAX);
  EXPECT_EQ(bound_unsigned_value(SAMPLER_BOUND_U8, 0), 0u);
  EXPECT_FALSE(bound_type_is_valid(0));
  EXPECT_FALSE(bound_type_is_valid(10));
}

// ------------------------------------------------------------------------------------------ report writer

struct MemorySink {
  std::string text;
  bool fail_after_first = false;
  int writes = 0;
  static bool write(void* context, const char* data, size_t size) {
    MemorySink& self = *static_cast<MemorySink*>(context);
    if (self.fail_after_first && self.writes > 0) return false;
    ++self.writes;
    self.text.append(data, size);
    return true;
  }
  Sink sink() { return Sink{this, write}; }
};

/// A unit with one scheme of each shape, its values set as if sampled.
struct TestUnit {
  uint64_t branch_values[4] = {3, 4, 0, 0};
  uint64_t branch_first[2] = {5, 0};
  uint64_t branch_last[2] = {9, 0};
  uint64_t bound_values[10] = {};
  uint8_t bound_types[5] = {SAMPLER_BOUND_I32, SAMPLER_BOUND_U8, SAMPLER_BOUND_POINTER, SAMPLER_BOUND_I64,
                            SAMPLER_BOUND_U64};
  uint64_t tuple_values[3] = {18446744073709551615ull, 0, 10};
  sampler_scheme schemes[3] = {
      {"branches", 2, 2, SAMPLER_SCHEME_COUNTERS, 0, branch_values, nullptr, branch_first, branch_last},
      {"bounds", 5, 2, SAMPLER_SCHEME_BOUNDS, 0, bound_values, bound_types, nullptr, nullptr},
      {"odd<\"&'>name", 1, 3, SAMPLER_SCHEME_COUNTERS, 0, tuple_values, nullptr, nullptr, nullptr},
  };
  sampler_unit unit = {SAMPLER_ABI_VERSION, 3, "0123456789abcdef0123456789abcdef", schemes, nullptr, 0};

  TestUnit() {
    // Site 0 (i32) saw -7 and 12; site 1 (u8) saw 200; site 2 (pointer) saw 0x1000 and 0x2000; sites 3 and 4
    // saw nothing.
    auto see = [&](int site, uint64_t value) {
      uint64_t key = bound_key(bound_types[site], value);
      bound_values[2 * site] = std::max(bound_values[2 * site], ~key);
      bound_values[2 * site + 1] = std::max(bound_values[2 * site + 1], key);
    };
    see(0, static_cast<uint64_t>(int64_t{-7}));
    see(0, 12);
    see(1, 200);
    see(2, 0x2000);
    see(2, 0x1000);
  }
};

constexpr const char* kTestUnitText =
    "<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"branches\">\n"
    "3\t4\n"
    "0\t0\n"
    "</samples>\n"
    "<timestamps unit=\"0123456789abcdef0123456789abcdef\" scheme=\"branches\" when=\"first\">\n"
    "5\n"
    "0\n"
    "</timestamps>\n"
    "<timestamps unit=\"0123456789abcdef0123456789abcdef\" scheme=\"branches\" when=\"last\">\n"
    "9\n"
    "0\n"
    "</timestamps>\n"
    "<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"bounds\">\n"
    "-7\t12\n"
    "200\t200\n"
    "0x1000\t0x2000\n"
    "9223372036854775807\t-9223372036854775808\n"
    "18446744073709551615\t0\n"
    "</samples>\n"
    "<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"odd&lt;&quot;&amp;&apos;&gt;name\">\n"
    "18446744073709551615\t0\t10\n"
    "</samples>\n";

TEST(ReportWriter, WritesEverySectionExactly) {
  TestUnit t;
  ASSERT_EQ(check_unit(t.unit), nullptr);
  MemorySink memory;
  char buffer[4096];
  ReportWriter out(buffer, sizeof buffer, memory.sink());
  write_unit(out, t.unit);
  EXPECT_TRUE(out.flush());
  EXPECT_EQ(memory.text, kTestUnitText);
  EXPECT_EQ(out.flushed_bytes(), memory.text.size());
}

// ------------------------------------------------------------------------------------------- shared counters

/// A zero-filled, 8-aligned stand-in for SAMPLER_SHARED_FD's memfd.
struct TestArea {
  explicit TestArea(size_t bytes) : words(bytes / 8), area{reinterpret_cast<unsigned char*>(words.data()), bytes} {}
  std::vector<uint64_t> words;
  SharedArea area;
};

std::string shared_report(const SharedArea& area, uint64_t size, SharedSnapshot* snapshot = nullptr) {
  MemorySink memory;
  char buffer[512];
  ReportWriter out(buffer, sizeof buffer, memory.sink());
  SharedSnapshot result = write_shared_samples(area.base, size, out);
  out.flush();
  if (snapshot != nullptr) *snapshot = result;
  return memory.text;
}

TEST(SharedCounters, PlacedUnitCountsInTheMappingAndReadsBackAsItsReport) {
  TestArea t(kSharedMinBytes);
  const char* problem = nullptr;
  ASSERT_TRUE(claim_shared_area(t.area, 1234, problem));
  // Claimed, nothing placed: an empty samples subreport.
  SharedSnapshot snapshot;
  EXPECT_EQ(shared_report(t.area, t.area.size, &snapshot), "<report id=\"samples\">\n</report>\n");
  EXPECT_TRUE(snapshot.claimed);
  TestUnit unit;
  ASSERT_TRUE(place_unit_in_shared_area(t.area, unit.unit));
  // Every array the report reads moved into the mapping, with the counts it had.
  for (const sampler_scheme& s : unit.schemes) {
    EXPECT_TRUE(in_shared_area(t.area, s.values)) << s.name;
  }
  EXPECT_TRUE(in_shared_area(t.area, unit.schemes[0].first));
  EXPECT_TRUE(in_shared_area(t.area, unit.schemes[0].last));
  EXPECT_EQ(unit.schemes[0].values[1], 4u);
  // The record is exactly as large as announced, and the header says where it ends.
  const auto* header = reinterpret_cast<const SharedHeader*>(t.area.base);
  EXPECT_EQ(header->magic, kSharedMagic);
  EXPECT_EQ(header->owner, 1234);
  EXPECT_EQ(header->published, sizeof(SharedHeader) + shared_record_bytes(unit.unit));
  EXPECT_EQ(header->published % 8, 0u);
  // Counting goes on in the mapping; the original storage is left behind.
  unit.schemes[0].values[2] += 5;
  EXPECT_EQ(unit.branch_values[2], 0u);
  std::string expected = kTestUnitText;
  expected.replace(expected.find("0\t0\n"), 4, "5\t0\n");
  std::string text = shared_report(t.area, t.area.size, &snapshot);
  EXPECT_EQ(text, "<report id=\"samples\">\n" + expected + "</report>\n");
  EXPECT_EQ(snapshot.units, 1u);
  EXPECT_EQ(snapshot.problem, nullptr);
  // Registered again without a reload: the unit keeps its place, nothing is copied twice.
  ASSERT_TRUE(place_unit_in_shared_area(t.area, unit.unit));
  EXPECT_EQ(header->published, sizeof(SharedHeader) + shared_record_bytes(unit.unit));
}

TEST(SharedCounters, ClaimedOnceAndBounded) {
  TestArea t(kSharedMinBytes);
  const char* problem = nullptr;
  ASSERT_TRUE(claim_shared_area(t.area, 1, problem));
  EXPECT_FALSE(claim_shared_area(t.area, 2, problem));
  EXPECT_STREQ(problem, "the mapping is already used by another process");
  TestArea small(kSharedMinBytes / 2);
  EXPECT_FALSE(claim_shared_area(small.area, 1, problem));
  // Never claimed (an uninstrumented program, an older runtime): no samples from it at all.
  TestArea unused(kSharedMinBytes);
  SharedSnapshot snapshot;
  EXPECT_EQ(shared_report(unused.area, unused.area.size, &snapshot), "");
  EXPECT_FALSE(snapshot.claimed);
}

TEST(SharedCounters, UnitThatDoesNotFitKeepsItsOwnStorage) {
  TestArea t(kSharedMinBytes);
  const char* problem = nullptr;
  ASSERT_TRUE(claim_shared_area(t.area, 1, problem));
  std::vector<uint64_t> values(2 * kSharedMinBytes / 8);
  sampler_scheme scheme{"branches", static_cast<uint32_t>(values.size() / 2), 2, SAMPLER_SCHEME_COUNTERS, 0,
                        values.data(), nullptr, nullptr, nullptr};
  sampler_unit big{SAMPLER_ABI_VERSION, 1, "0123456789abcdef0123456789abcdef", &scheme, nullptr, 0};
  EXPECT_FALSE(place_unit_in_shared_area(t.area, big));
  EXPECT_EQ(scheme.values, values.data());
  SharedSnapshot snapshot;
  shared_report(t.area, t.area.size, &snapshot);
  EXPECT_EQ(snapshot.units_left_out, 1u);
  EXPECT_EQ(snapshot.units, 0u);
}

TEST(SharedCounters, SnapshotSeesOnlyPublishedRecords) {
  // A process killed half-way through placing its second unit: the record is partly written, `published` not
  // moved yet. The reader sees the first unit alone, whole.
  TestArea t(kSharedMinBytes * 4);
  const char* problem = nullptr;
  ASSERT_TRUE(claim_shared_area(t.area, 1, problem));
  TestUnit first, second;
  ASSERT_TRUE(place_unit_in_shared_area(t.area, first.unit));
  const std::string one_unit = shared_report(t.area, t.area.size);
  auto* header = reinterpret_cast<SharedHeader*>(t.area.base);
  const uint64_t published = header->published;
  ASSERT_TRUE(place_unit_in_shared_area(t.area, second.unit));
  header->published = published;
  EXPECT_EQ(shared_report(t.area, t.area.size), one_unit);
}

TEST(SharedCounters, MalformedRecordsAreRefusedNotFollowed) {
  TestArea t(kSharedMinBytes);
  const char* problem = nullptr;
  ASSERT_TRUE(claim_shared_area(t.area, 1, problem));
  TestUnit unit;
  ASSERT_TRUE(place_unit_in_shared_area(t.area, unit.unit));
  auto* record = reinterpret_cast<SharedUnit*>(t.area.base + sizeof(SharedHeader));
  auto* scheme = reinterpret_cast<SharedScheme*>(record + 1);
  auto* header = reinterpret_cast<SharedHeader*>(t.area.base);
  SharedSnapshot snapshot;
  struct Damage {
    const char* what;
    void (*apply)(SharedHeader&, SharedUnit&, SharedScheme&);
  } damages[] = {
      {"values beyond the record", [](SharedHeader&, SharedUnit&, SharedScheme& s) { s.values = uint64_t{1} << 40; }},
      {"too many sites", [](SharedHeader&, SharedUnit&, SharedScheme& s) { s.site_count = 0xffffffffu; }},
      {"no columns", [](SharedHeader&, SharedUnit&, SharedScheme& s) { s.columns = 0; }},
      {"huge columns", [](SharedHeader&, SharedUnit&, SharedScheme& s) { s.columns = 0x80000000u; }},
      {"name outside", [](SharedHeader&, SharedUnit&, SharedScheme& s) { s.name = 3; }},
      {"unknown kind", [](SharedHeader&, SharedUnit&, SharedScheme& s) { s.kind = 7; }},
      {"record past published", [](SharedHeader&, SharedUnit& u, SharedScheme&) { u.record_bytes += 8; }},
      {"schemes past the record", [](SharedHeader&, SharedUnit& u, SharedScheme&) { u.scheme_count = 1u << 30; }},
      {"bad signature", [](SharedHeader&, SharedUnit& u, SharedScheme&) { u.signature[32] = 'x'; }},
      {"published past the end", [](SharedHeader& h, SharedUnit&, SharedScheme&) { h.published = 1u << 30; }},
  };
  const std::vector<uint64_t> intact = t.words;
  for (const Damage& damage : damages) {
    t.words = intact;
    damage.apply(*header, *record, *scheme);
    std::string text = shared_report(t.area, t.area.size, &snapshot);
    EXPECT_NE(snapshot.problem, nullptr) << damage.what;
    EXPECT_EQ(snapshot.units, 0u) << damage.what;
    if (!text.empty()) {
      EXPECT_TRUE(text.ends_with("</report>\n")) << damage.what;
    }
  }
}

TEST(ReportWriter, SmallBufferGivesTheSameText) {
  TestUnit t;
  MemorySink memory;
  char buffer[256];
  ReportWriter out(buffer, sizeof buffer, memory.sink());
  write_unit(out, t.unit);
  out.flush();
  EXPECT_EQ(memory.text, kTestUnitText);
  EXPECT_GT(memory.writes, 1);
}

TEST(ReportWriter, FlushedStateFollowsTheText) {
  TestUnit t;
  MemorySink memory;
  char buffer[256];
  ReportWriter out(buffer, sizeof buffer, memory.sink());
  EXPECT_EQ(out.flushed_open_section(), OpenSection::kNone);
  out.set_open_section(OpenSection::kSamples);
  out.append("<samples unit=\"x\" scheme=\"y\">");
  out.end_line();
  out.append("1\t2");
  out.flush();
  EXPECT_EQ(out.flushed_open_section(), OpenSection::kSamples);
  EXPECT_TRUE(out.flushed_mid_line());
  out.end_line();
  out.set_open_section(OpenSection::kNone);
  out.flush();
  EXPECT_EQ(out.flushed_open_section(), OpenSection::kNone);
  EXPECT_FALSE(out.flushed_mid_line());
}

TEST(ReportWriter, StopsAfterASinkFailure) {
  TestUnit t;
  MemorySink memory;
  memory.fail_after_first = true;
  char buffer[256];
  ReportWriter out(buffer, sizeof buffer, memory.sink());
  write_unit(out, t.unit);
  EXPECT_FALSE(out.flush());
  EXPECT_TRUE(out.failed());
  EXPECT_EQ(memory.writes, 1);
  EXPECT_LT(memory.text.size(), std::strlen(kTestUnitText));
}

TEST(ReportWriter, NumbersAndLongLines) {
  MemorySink memory;
  char buffer[256];
  ReportWriter out(buffer, sizeof buffer, memory.sink());
  out.append_decimal(0);
  out.append(' ');
  out.append_decimal(9);
  out.append(' ');
  out.append_decimal(10);
  out.append(' ');
  out.append_decimal(UINT64_MAX);
  out.append(' ');
  out.append_signed_decimal(INT64_MIN);
  out.append(' ');
  out.append_hex(0);
  out.append(' ');
  out.append_hex(0xdeadbeef);
  out.end_line();
  std::string long_line(1000, 'z');
  out.append(long_line.c_str());
  out.end_line();
  out.flush();
  EXPECT_EQ(memory.text, "0 9 10 18446744073709551615 -9223372036854775808 0x0 0xdeadbeef\n" + long_line + "\n");
}

TEST(ReportWriter, ChecksUnits) {
  struct Case {
    const char* what;
    void (*damage)(TestUnit&);
  } cases[] = {
      {"ABI version", [](TestUnit& t) { t.unit.abi_version = 99; }},
      {"ABI version 0", [](TestUnit& t) { t.unit.abi_version = 0; }},
      {"a later ABI version", [](TestUnit& t) { t.unit.abi_version = SAMPLER_ABI_VERSION + 1; }},
      {"no signature", [](TestUnit& t) { t.unit.signature = nullptr; }},
      {"short signature", [](TestUnit& t) { t.unit.signature = "0123"; }},
      {"upper-case signature", [](TestUnit& t) { t.unit.signature = "0123456789ABCDEF0123456789abcdef"; }},
      {"long signature", [](TestUnit& t) { t.unit.signature = "0123456789abcdef0123456789abcdef0"; }},
      {"no scheme table", [](TestUnit& t) { t.unit.schemes = nullptr; }},
      {"no name", [](TestUnit& t) { t.schemes[0].name = nullptr; }},
      {"empty name", [](TestUnit& t) { t.schemes[0].name = ""; }},
      {"control character", [](TestUnit& t) { t.schemes[0].name = "a\nb"; }},
      {"no values", [](TestUnit& t) { t.schemes[0].values = nullptr; }},
      {"no columns", [](TestUnit& t) { t.schemes[0].columns = 0; }},
      {"bounds columns", [](TestUnit& t) { t.schemes[1].columns = 3; }},
      {"bounds types", [](TestUnit& t) { t.schemes[1].bound_types = nullptr; }},
      {"bound type", [](TestUnit& t) { t.bound_types[3] = 0; }},
      {"kind", [](TestUnit& t) { t.schemes[2].kind = 7; }},
  };
  for (const Case& c : cases) {
    TestUnit t;
    c.damage(t);
    EXPECT_NE(check_unit(t.unit), nullptr) << c.what;
  }
  // Units of every version this runtime knows are accepted: those of version 1 call only sampler_take_*().
  for (uint32_t version = SAMPLER_ABI_OLDEST_VERSION; version <= SAMPLER_ABI_VERSION; ++version) {
    TestUnit t;
    t.unit.abi_version = version;
    EXPECT_EQ(check_unit(t.unit), nullptr) << version;
  }
  TestUnit empty;
  empty.unit.scheme_count = 0;
  empty.unit.schemes = nullptr;
  EXPECT_EQ(check_unit(empty.unit), nullptr);
}

// --------------------------------------------------------------------------------------------- module map

TEST(ModuleMap, ParsesMapsLines) {
  char path[64];
  Mapping m;
  const char* line = "7f12a000-7f12c000 r-xp 00002000 fd:01 1234567    /usr/lib/x86_64-linux-gnu/lib c.so (deleted)";
  ASSERT_TRUE(parse_maps_line(line, std::strlen(line), m, path, sizeof path));
  EXPECT_EQ(m.start, 0x7f12a000u);
  EXPECT_EQ(m.end, 0x7f12c000u);
  EXPECT_EQ(m.offset, 0x2000u);
  EXPECT_TRUE(m.readable);
  EXPECT_EQ(m.device, (uint64_t{0xfd} << 32) | 1);
  EXPECT_EQ(m.inode, 1234567u);
  EXPECT_EQ(std::string(path, m.path_length), "/usr/lib/x86_64-linux-gnu/lib c.so (deleted)");

  const char* anonymous = "7ffd1000-7ffd2000 ---p 00000000 00:00 0 ";
  ASSERT_TRUE(parse_maps_line(anonymous, std::strlen(anonymous), m, path, sizeof path));
  EXPECT_FALSE(m.readable);
  EXPECT_EQ(m.path_length, 0u);

  const char* cut = "1000-2000 r--p 00000000 08:01 5 /a/very/long/path/that/does/not/fit/in/the/small/buffer/x";
  char small[8];
  ASSERT_TRUE(parse_maps_line(cut, std::strlen(cut), m, small, sizeof small));
  EXPECT_EQ(m.path_length, sizeof small);

  for (const char* bad : {"", "zzz", "1000-", "1000-2000", "1000-2000 r--p", "1000-2000 r--p 0 08:01",
                          "2000-1000 r--p 00000000 08:01 5 /x", "1000-2000 r--p 00000000 08:01 x",
                          "10000000000000000-2 r--p 0 0:0 0"}) {
    EXPECT_FALSE(parse_maps_line(bad, std::strlen(bad), m, path, sizeof path)) << "'" << bad << "'";
  }
}

int g_data_for_the_map = 1;

TEST(ModuleMap, DescribesThisProcess) {
  set_page_size(4096);
  ASSERT_TRUE(read_mappings());
  int local = 0;
  EXPECT_TRUE(is_readable(reinterpret_cast<uintptr_t>(&local), sizeof local));
  EXPECT_TRUE(is_readable(reinterpret_cast<uintptr_t>(&g_data_for_the_map), sizeof g_data_for_the_map));
  EXPECT_FALSE(is_readable(0, 1));
  EXPECT_FALSE(is_readable(16, 8));
  ASSERT_NE(find_mapping(reinterpret_cast<uintptr_t>(&local)), nullptr);

  MemorySink memory;
  char buffer[4096];
  ReportWriter out(buffer, sizeof buffer, memory.sink());
  write_module_markup(out);
  out.flush();
  // {{{reset}}} first; then modules with build IDs (this test and libc at least); no two mmap ranges overlap.
  ASSERT_EQ(memory.text.rfind("{{{reset}}}\n", 0), 0u) << memory.text;
  std::set<std::string> names;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  size_t position = 0;
  while (position < memory.text.size()) {
    size_t end = memory.text.find('\n', position);
    std::string line = memory.text.substr(position, end - position);
    position = end + 1;
    if (line.rfind("{{{module:", 0) == 0) {
      size_t name_start = line.find(':', 10) + 1;
      names.insert(line.substr(name_start, line.find(':', name_start) - name_start));
    } else if (line.rfind("{{{mmap:", 0) == 0) {
      uint64_t start = std::stoull(line.substr(8), nullptr, 16);
      uint64_t size = std::stoull(line.substr(line.find(':', 8) + 1), nullptr, 16);
      EXPECT_EQ(start % 4096, 0u) << line;
      EXPECT_EQ(size % 4096, 0u) << line;
      ranges.emplace_back(start, start + size);
    }
  }
  bool found_libc = false, found_self = false;
  for (const std::string& name : names) {
    found_libc = found_libc || name.find("libc.so") != std::string::npos;
    found_self = found_self || name.find("runtime_unit_test") != std::string::npos;
  }
  EXPECT_TRUE(found_libc) << memory.text;
  EXPECT_TRUE(found_self) << memory.text;
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first);
}

}  // namespace
}  // namespace sampler::runtime

// SAMPLER_REGION / SAMPLER_REGION_PASSED (region_macros.c, C): from any countdown, the amortized stretch leaves
// the same counters and the same countdown as the same stretch checked site by site, on each of its paths.
extern "C" {
int region_test_per_site(int x, int limit);
int region_test_amortized(int x, int limit);
size_t region_test_counters(uint64_t* out);
}

TEST(Sampling, RegionMacrosSampleAsPerSiteChecks) {
  sampler_countdown = 1;
  region_test_per_site(0, 0);  // initialises the runtime (from the environment) and this thread
  sampler::runtime::configure_sampling(true, 1.0, true, 1);  // after a sample, the next opportunity samples
  region_test_per_site(0, 0);
  uint64_t before[9], per_site[9], amortized[9];
  int fast_paths = 0;
  for (int x : {-5, 3, 12, 13}) {
    for (int64_t countdown = 1; countdown <= 7; ++countdown) {
      ASSERT_EQ(region_test_counters(before), 9u);
      sampler_countdown = countdown;
      int expected = region_test_per_site(x, 12);
      int64_t countdown_per_site = sampler_countdown;
      region_test_counters(per_site);
      sampler_countdown = countdown;
      fast_paths += countdown > 4;
      EXPECT_EQ(region_test_amortized(x, 12), expected) << x << " " << countdown;
      EXPECT_EQ(sampler_countdown, countdown_per_site) << x << " " << countdown;
      region_test_counters(amortized);
      for (int i = 0; i < 9; ++i) {
        EXPECT_EQ(amortized[i] - per_site[i], per_site[i] - before[i]) << x << " " << countdown << " value " << i;
      }
    }
  }
  EXPECT_GT(fast_paths, 0);
}

// sampler_take_compares() stands for the fast paths of `count` pair sites (what sampler-cc emits for the pairs of
// one assignment): from any countdown, the same sites sample with the same columns, and the countdown ends where
// one check per site leaves it; signed and unsigned, operands below, equal to and above the value. So does
// sampler_take_compares_constants(), at every split between variables and constants.
TEST(Sampling, GroupOfComparesSamplesAsPerSiteChecks) {
  constexpr uint32_t kSites = 7;
  uint64_t group_values[kSites * 3] = {}, site_values[kSites * 3] = {};
  sampler_scheme group_scheme = {"scalar-pairs", kSites, 3, SAMPLER_SCHEME_COUNTERS, 0, group_values, nullptr,
                                 nullptr, nullptr};
  sampler_scheme site_scheme = group_scheme;
  site_scheme.values = site_values;
  uint64_t split_values[kSites * 3] = {};
  sampler_scheme split_scheme = group_scheme;
  split_scheme.values = split_values;
  sampler_countdown = 1;
  sampler_take_compare(&site_scheme, kSites, 0, 0);  // initialises the runtime and this thread (site out of range)
  sampler::runtime::configure_sampling(true, 1.0, true, 1);  // after a sample, the next opportunity samples
  const int64_t others[] = {-3, 5, 5, 40, -1, 0, 6};
  int samples = 0;
  for (bool is_signed : {true, false}) {
    for (int64_t countdown = 1; countdown <= 9; ++countdown) {
      for (uint32_t count = 1; count <= 6; ++count) {
        uint64_t before[kSites * 3];
        std::copy(std::begin(site_values), std::end(site_values), before);
        sampler_countdown = countdown;
        for (uint32_t i = 0; i < count; ++i)
          if (--sampler_countdown <= 0) {
            ++samples;
            if (is_signed)
              sampler_take_compare(&site_scheme, 1 + i, 5, others[i]);
            else
              sampler_take_compare_unsigned(&site_scheme, 1 + i, 5, static_cast<uint64_t>(others[i]));
          }
        int64_t per_site = sampler_countdown;
        sampler_countdown = countdown;
        if (is_signed)
          sampler_take_compares(&group_scheme, 1, count, 5, others);
        else
          sampler_take_compares_unsigned(&group_scheme, 1, count, 5, reinterpret_cast<const uint64_t*>(others));
        EXPECT_EQ(sampler_countdown, per_site) << countdown << " " << count;
        for (uint32_t v = 0; v < kSites * 3; ++v) EXPECT_EQ(group_values[v], site_values[v]) << "value " << v;
        // The same with the last `constant_count` operands apart (sampler_take_compares_constants), for every
        // split: each run samples as the per-site checks, so the counts grow alike.
        for (uint32_t constant_count = 0; constant_count <= count; ++constant_count) {
          int64_t constants[kSites + 1] = {constant_count};
          for (uint32_t i = 0; i < constant_count; ++i) constants[1 + i] = others[count - constant_count + i];
          std::copy(std::begin(before), std::end(before), split_values);
          sampler_countdown = countdown;
          if (is_signed)
            sampler_take_compares_constants(&split_scheme, 1, count, 5, others, constants);
          else
            sampler_take_compares_constants_unsigned(&split_scheme, 1, count, 5,
                                                     reinterpret_cast<const uint64_t*>(others),
                                                     reinterpret_cast<const uint64_t*>(constants));
          EXPECT_EQ(sampler_countdown, per_site) << countdown << " " << count << " " << constant_count;
          for (uint32_t v = 0; v < kSites * 3; ++v) EXPECT_EQ(split_values[v], site_values[v]) << "value " << v;
        }
      }
    }
  }
  EXPECT_GT(samples, 50);
  EXPECT_GT(site_values[1 * 3 + 2], 0u);  // 5 > -3 (signed)
  EXPECT_GT(site_values[1 * 3 + 0], 0u);  // 5 < 2^64 - 3 (unsigned)
}

TEST(Sampling, GroupOfComparesSamplesAsPerSiteChecksWhileDrawing) {
  // As above, at sparsity 3, where the draws come from the bank (the group's straight-line case, one sample whose
  // new countdown outlasts the group, and its other cases: several samples in a group, an empty bank mid-group).
  // The thread's generator and bank are saved before the per-site run and put back before the group's, so both
  // draw the same countdowns.
  sampler::runtime::on_new_thread([] {
    constexpr uint32_t kSites = 24;
    uint64_t group_values[kSites * 3] = {}, site_values[kSites * 3] = {};
    sampler_scheme group_scheme = {"scalar-pairs", kSites, 3, SAMPLER_SCHEME_COUNTERS, 0, group_values, nullptr,
                                   nullptr, nullptr};
    sampler_scheme site_scheme = group_scheme;
    site_scheme.values = site_values;
    sampler::runtime::configure_sampling(true, 3.0, true, 17);
    sampler_countdown = 0;
    sampler_sample_now();  // seeds the thread: a seeding is not undone by putting its state back
    int64_t others[kSites];
    for (uint32_t i = 0; i < kSites; ++i) others[i] = static_cast<int64_t>(i % 7) - 3;
    int samples = 0, groups_with_several = 0;
    for (int round = 0; round < 40; ++round) {
      for (bool is_signed : {true, false}) {
        for (int64_t countdown = 1; countdown <= 5; ++countdown) {
          for (uint32_t count : {1u, 2u, 3u, 7u, 23u}) {
            sampler::runtime::ThreadState before = sampler::runtime::t_state;
            sampler_countdown_bank bank_before = sampler_bank;
            sampler_countdown = countdown;
            int in_group = 0;
            for (uint32_t i = 0; i < count; ++i)
              if (--sampler_countdown <= 0) {
                ++in_group;
                if (is_signed)
                  sampler_take_compare(&site_scheme, i, 0, others[i]);
                else
                  sampler_take_compare_unsigned(&site_scheme, i, 0, static_cast<uint64_t>(others[i]));
              }
            samples += in_group;
            groups_with_several += in_group > 1;
            int64_t per_site = sampler_countdown;
            int64_t banked = sampler_bank.banked;
            sampler::runtime::t_state = before;
            sampler_bank = bank_before;
            sampler_countdown = countdown;
            if (is_signed)
              sampler_take_compares(&group_scheme, 0, count, 0, others);
            else
              sampler_take_compares_unsigned(&group_scheme, 0, count, 0, reinterpret_cast<const uint64_t*>(others));
            ASSERT_EQ(sampler_countdown, per_site) << countdown << " " << count;
            ASSERT_EQ(sampler_bank.banked, banked) << countdown << " " << count;
            for (uint32_t v = 0; v < kSites * 3; ++v) ASSERT_EQ(group_values[v], site_values[v]) << "value " << v;
          }
        }
      }
    }
    EXPECT_GT(samples, 1000);
    EXPECT_GT(groups_with_several, 100);
  });
}
