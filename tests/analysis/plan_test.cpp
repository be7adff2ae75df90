// sampler-analyze plan's engine (analysis/plan.h): reading the runs' rates and samples into executions per run,
// and the water-filling that turns them into a plan. Every rule and every error, on reports written here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/plan.h"
#include "sections/core/plan.h"

namespace sampler::analysis {
namespace {

namespace fs = std::filesystem;

constexpr char kUnit[] = "0123456789abcdef0123456789abcdef";

struct Recorder : DiagnosticSink {
  std::vector<Diagnostic> all;
  void report(const Diagnostic& diagnostic) override { all.push_back(diagnostic); }
  std::string text() const {
    std::string out;
    for (const Diagnostic& d : all) {
      out += d.file + ":" + std::to_string(d.line) + ": " + (d.severity == Severity::kError ? "error: " : "warning: ") +
             d.message + "\n";
    }
    return out;
  }
  size_t errors() const {
    size_t n = 0;
    for (const Diagnostic& d : all) n += d.severity == Severity::kError;
    return n;
  }
};

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("plan_test_" + std::string(
        ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  // Writes `text` as file `name`; returns its path.
  std::string file(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  fs::path dir_;
};

// A samples subreport of one branches section: one "FALSE\tTRUE" line per site count.
std::string samples(const std::vector<std::pair<int, int>>& counts, const std::string& scheme = "branches") {
  std::string text =
      "<report id=\"samples\">\n<samples unit=\"" + std::string(kUnit) + "\" scheme=\"" + scheme + "\">\n";
  for (auto [a, b] : counts) text += std::to_string(a) + "\t" + std::to_string(b) + "\n";
  return text + "</samples>\n</report>\n";
}

std::string outcome(const std::string& sparsity, const std::string& cpu_seconds) {
  return "<report id=\"outcome\">\nrun-id\tr1\nexit-status\t0\ncpu-seconds\t" + cpu_seconds + "\nsparsity\t" +
         sparsity + "\n</report>\n";
}

std::string plan_subreport(const std::string& id, const std::string& sparsity) {
  return "<report id=\"plan\">\nid\t" + id + "\nsparsity\t" + sparsity + "\n</report>\n";
}

// ------------------------------------------------------------------------------------------------ read_usage

TEST_F(PlanTest, ExecutionsAreSamplesOverTheRunsRate) {
  // Sparsity 100 from the outcome: 3 samples are 300 executions; 1 second a run.
  std::string a = file("a", samples({{1, 2}, {0, 0}}) + outcome("100", "1.0"));
  std::string b = file("b", samples({{0, 5}, {0, 0}}) + outcome("50", "3.0"));
  Recorder sink;
  Usage usage = read_usage({a, b}, {}, sink);
  EXPECT_EQ(sink.text(), "");
  EXPECT_EQ(usage.runs, 2u);
  EXPECT_DOUBLE_EQ(usage.seconds, 4.0);
  EXPECT_EQ(usage.samples, 8u);
  ASSERT_EQ(usage.sections.size(), 1u);
  const SiteUsage& site = usage.sections[0].sites[0];
  EXPECT_DOUBLE_EQ(site.executions, 300 + 250);
  EXPECT_DOUBLE_EQ(site.runs, 2);
  EXPECT_DOUBLE_EQ(site.probability, 0.01 + 0.02);
  EXPECT_DOUBLE_EQ(site.seconds, 4.0);
  EXPECT_EQ(site.samples, 8u);
  EXPECT_EQ(usage.sections[0].sites[1].samples, 0u);
  EXPECT_DOUBLE_EQ(usage.sections[0].sites[1].runs, 2);
}

TEST_F(PlanTest, RunsWithoutAnOutcomeTakeTheOptions) {
  std::string a = file("a", samples({{4, 0}}));
  Recorder sink;
  Usage none = read_usage({a}, {}, sink);
  EXPECT_EQ(none.runs, 0u);
  EXPECT_EQ(none.left_out, 1u);
  EXPECT_NE(sink.text().find("give --sparsity N"), std::string::npos) << sink.text();
  EXPECT_EQ(sink.errors(), 0u);  // a warning: the run is not wrong, only not usable

  Recorder sink2;
  UsageOptions options;
  options.sparsity = 10;
  Usage no_length = read_usage({a}, options, sink2);
  EXPECT_EQ(no_length.runs, 0u);
  EXPECT_NE(sink2.text().find("give --run-seconds S"), std::string::npos) << sink2.text();

  Recorder sink3;
  options.run_seconds = 0.5;
  Usage usage = read_usage({a}, options, sink3);
  EXPECT_EQ(sink3.text(), "");
  EXPECT_EQ(usage.runs, 1u);
  EXPECT_DOUBLE_EQ(usage.sections[0].sites[0].executions, 40);
  EXPECT_DOUBLE_EQ(usage.seconds, 0.5);
}

TEST_F(PlanTest, OutcomeOverridesTheOptionsAndSamplingOffIsLeftOut) {
  std::string off = file("off", samples({{0, 0}}) + outcome("", "1.0"));
  std::string zero = file("zero", samples({{1, 0}}) + outcome("100", "0"));
  std::string bad = file("bad", samples({{1, 0}}) + outcome("0.5", "1"));
  std::string good = file("good", samples({{1, 0}}) + outcome("100", "2"));
  UsageOptions options;
  options.sparsity = 7;
  options.run_seconds = 9;
  Recorder sink;
  Usage usage = read_usage({off, zero, bad, good}, options, sink);
  EXPECT_EQ(usage.runs, 1u);
  EXPECT_EQ(usage.left_out, 3u);
  EXPECT_DOUBLE_EQ(usage.sections[0].sites[0].executions, 100);  // the outcome's 100, not --sparsity 7
  EXPECT_DOUBLE_EQ(usage.seconds, 2);                            // the outcome's 2, not --run-seconds 9
  std::string text = sink.text();
  EXPECT_NE(text.find(off + ":0: warning: left out: its outcome says sampling was off"), std::string::npos) << text;
  EXPECT_NE(text.find(zero + ":0: warning: left out: its outcome's cpu-seconds is 0"), std::string::npos) << text;
  EXPECT_NE(text.find(bad + ":0: warning: left out: its sparsity '0.5' is not a number of at least 1"),
            std::string::npos)
      << text;
}

TEST_F(PlanTest, ARunsLengthIsItsCpuTimeLessItsOwnSamples) {
  // At 100 us a sample (large, so that the arithmetic shows): 3000 samples in 1 s leave 0.7 s of the program's
  // own; 5000 in 2 s leave 1.5 s; 9500 in 1 s would leave 0.05 s, below the floor of 10 % of 1 s: 0.1 s.
  std::string a = file("a", samples({{1000, 2000}, {0, 0}}) + outcome("100", "1.0"));
  std::string b = file("b", samples({{0, 4000}, {1000, 0}}) + outcome("100", "2.0"));
  std::string c = file("c", samples({{9000, 500}, {0, 0}}) + outcome("100", "1.0"));
  UsageOptions options;
  options.sample_seconds = 100e-6;
  Recorder sink;
  Usage usage = read_usage({a, b, c}, options, sink);
  EXPECT_EQ(sink.text(), "");
  EXPECT_EQ(usage.runs, 3u);
  EXPECT_EQ(usage.samples, 17500u);
  EXPECT_NEAR(usage.seconds, 0.7 + 1.5 + 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(usage.measured_seconds, 4.0);
  EXPECT_EQ(usage.floored, 1u);
  EXPECT_NEAR(usage.sections[0].sites[0].seconds, 2.3, 1e-12);  // every run could sample it
  EXPECT_NEAR(usage.sections[0].sites[1].seconds, 2.3, 1e-12);

  // The plan's cost is a share of the program's own time: a 1 % budget at 100 us a sample is 100 samples a second
  // of it, 230 over the three runs' 2.3 s, 115 for each site: 115 / 3 a run. Site 0 executes 1,650,000 times in
  // the three runs, site 1 100,000. (Against the 4 s measured it would be 400 samples, 74 % more than the budget.)
  PlanOptions plan_options;
  plan_options.budget = 0.01;
  plan_options.sample_seconds = 100e-6;
  Plan plan = make_plan(usage, plan_options);
  ASSERT_EQ(plan.entries.size(), 2u);
  EXPECT_NEAR(plan.level, 115.0 / 3, 1e-9);
  EXPECT_NEAR(plan.entries[0].probability, 115 / 1.65e6, 1e-15);
  EXPECT_NEAR(plan.entries[1].probability, 115 / 1e5, 1e-15);
  EXPECT_NEAR(plan.mean_run_seconds, 2.3 / 3, 1e-12);
  EXPECT_NEAR(plan.cost, 0.01, 1e-12);
  EXPECT_NEAR(plan.uniform_cost, 17500 * 100e-6 / 2.3, 1e-12);
  std::string summary = plan_summary(usage, plan, plan_options, "p");
  EXPECT_NE(summary.find("0.767 CPU seconds a run on average without their own samples (1.33 measured), 1 runs "
                         "taken at 10% of their length"),
            std::string::npos)
      << summary;

  // Bare reports: --run-seconds is the program's own time already, taken as it is (and the summary says nothing
  // of a correction).
  std::string bare = file("bare", samples({{100, 100}}));
  UsageOptions bare_options;
  bare_options.sparsity = 10;
  bare_options.run_seconds = 0.5;
  bare_options.sample_seconds = 1e-3;
  Recorder bare_sink;
  Usage bare_usage = read_usage({bare}, bare_options, bare_sink);
  EXPECT_EQ(bare_sink.text(), "");
  EXPECT_DOUBLE_EQ(bare_usage.seconds, 0.5);
  EXPECT_DOUBLE_EQ(bare_usage.measured_seconds, 0.5);
  std::string bare_summary = plan_summary(bare_usage, make_plan(bare_usage, plan_options), plan_options, "p");
  EXPECT_NE(bare_summary.find("0.5 CPU seconds a run on average; "), std::string::npos) << bare_summary;
}

TEST(ProgramSeconds, TheMeasuredTimeLessTheSamplesNeverBelowTheFloor) {
  bool floored = true;
  EXPECT_DOUBLE_EQ(program_seconds(2.0, 0, 30e-9, floored), 2.0);
  EXPECT_FALSE(floored);
  EXPECT_NEAR(program_seconds(2.0, 10'000'000, 30e-9, floored), 1.7, 1e-12);
  EXPECT_FALSE(floored);
  EXPECT_NEAR(program_seconds(2.0, 60'000'000, 30e-9, floored), 0.2, 1e-12);  // exactly the floor: 10 %
  EXPECT_FALSE(floored);
  EXPECT_NEAR(program_seconds(2.0, 70'000'000, 30e-9, floored), 0.2, 1e-12);
  EXPECT_TRUE(floored);
  EXPECT_NEAR(program_seconds(2.0, UINT64_MAX, 30e-9, floored), 0.2, 1e-12);
  EXPECT_TRUE(floored);
}

TEST_F(PlanTest, RunsOfAPlanTakeItsEntriesAndItsUniformRate) {
  std::string given = file("given.plan", std::string("sampler-plan\t1\nid\tp1\n") + kUnit + "\tbranches\t0\t0.5\n" +
                                             kUnit + "\tbranches\t2\t0\n");
  KnownPlan known;
  Recorder plan_sink;
  ASSERT_TRUE(read_plan_file(given, known, plan_sink)) << plan_sink.text();
  EXPECT_EQ(known.id, "p1");
  EXPECT_EQ(known.probabilities.size(), 2u);
  std::vector<KnownPlan> plans = {known};
  // Site 0 at 0.5 (the plan), site 1 at 1/20 (the subreport's sparsity), site 2 at 0: it says nothing of site 2.
  std::string a = file("a", samples({{1, 1}, {2, 0}, {0, 0}}) + plan_subreport("p1", "20") + outcome("20", "1"));
  // Without a uniform rate, sites the plan does not name are not sampled.
  std::string b = file("b", samples({{3, 0}, {0, 0}, {0, 0}}) + plan_subreport("p1", "") + outcome("", "1"));
  std::string unknown = file("unknown", samples({{1, 0}, {0, 0}, {0, 0}}) + plan_subreport("p9", "") +
                                            outcome("", "1"));
  UsageOptions options;
  options.plans = &plans;
  Recorder sink;
  Usage usage = read_usage({a, b, unknown}, options, sink);
  EXPECT_EQ(usage.runs, 2u);
  EXPECT_EQ(usage.left_out, 1u);
  EXPECT_NE(sink.text().find(unknown + ":0: warning: left out: it used plan 'p9', which no --given-plan names"),
            std::string::npos)
      << sink.text();
  const std::vector<SiteUsage>& sites = usage.sections[0].sites;
  EXPECT_DOUBLE_EQ(sites[0].executions, 4 + 6);
  EXPECT_DOUBLE_EQ(sites[0].runs, 2);
  EXPECT_DOUBLE_EQ(sites[1].executions, 40);
  EXPECT_DOUBLE_EQ(sites[1].runs, 1);  // run b could not sample it
  EXPECT_DOUBLE_EQ(sites[2].runs, 0);  // no run could
}

TEST_F(PlanTest, MalformedLinesAndMismatchedSectionsLeaveTheRunOut) {
  std::string first = file("first", samples({{1, 0}, {1, 0}}) + outcome("10", "1"));
  std::string shorter = file("shorter", samples({{1, 0}}) + outcome("10", "1"));
  std::string bad_line = samples({{1, 0}, {1, 0}});
  bad_line.replace(bad_line.find("1\t0\n"), 4, "1\tx\n");  // line 3
  std::string malformed = file("malformed", bad_line + outcome("10", "1"));
  std::string bad_outcome =
      file("bad_outcome",
           samples({{1, 0}, {1, 0}}) + "<report id=\"outcome\">\nrun-id\tr1\ncpu-seconds\t-1\n</report>\n");
  Recorder sink;
  Usage usage = read_usage({first, shorter, malformed, bad_outcome, (dir_ / "missing").string()}, {}, sink);
  EXPECT_EQ(usage.runs, 1u);
  EXPECT_EQ(usage.left_out, 4u);
  std::string text = sink.text();
  EXPECT_NE(text.find(shorter + ":2: error: unit " + std::string(kUnit) +
                      ", scheme 'branches': 1 samples lines, but 2 in the runs before; the run is left out"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(malformed + ":3: error: malformed samples line"), std::string::npos) << text;
  EXPECT_NE(text.find(bad_outcome + ":9: error: outcome subreport: cpu-seconds is not a non-negative number"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("missing:0: error: cannot open"), std::string::npos) << text;
  EXPECT_DOUBLE_EQ(usage.sections[0].sites[0].executions, 10);  // only the first run
}

TEST_F(PlanTest, ARunLeftOutDoesNotSetASectionsSites) {
  std::string unknown_rate = file("unknown_rate", samples({{1, 0}}));  // one line, and no rate: left out
  std::string good = file("good", samples({{1, 0}, {2, 0}}) + outcome("10", "1"));
  Recorder sink;
  Usage usage = read_usage({unknown_rate, good}, {}, sink);
  EXPECT_EQ(sink.errors(), 0u) << sink.text();
  EXPECT_EQ(usage.runs, 1u);
  ASSERT_EQ(usage.sections[0].sites.size(), 2u);
  EXPECT_DOUBLE_EQ(usage.sections[0].sites[1].executions, 20);
}

TEST_F(PlanTest, BoundsAndTimestampsAreNotCountsAndRepeatedSectionsAreSummed) {
  std::string text = samples({{1, 0}}) ;
  text.insert(text.find("</report>"), "<samples unit=\"" + std::string(kUnit) +
                                         "\" scheme=\"bounds\">\n-5\t90\n</samples>\n<timestamps unit=\"" + kUnit +
                                         "\" scheme=\"branches\" when=\"first\">\n7\t8\n</timestamps>\n"
                                         "<samples unit=\"" + kUnit + "\" scheme=\"branches\">\n2\t3\n</samples>\n");
  std::string a = file("a", text + outcome("1", "1"));
  Recorder sink;
  Usage usage = read_usage({a}, {}, sink);
  EXPECT_EQ(sink.text(), "");
  ASSERT_EQ(usage.sections.size(), 1u);
  EXPECT_EQ(usage.sections[0].scheme, "branches");
  EXPECT_DOUBLE_EQ(usage.sections[0].sites[0].executions, 6);
}

// ------------------------------------------------------------------------------------------------ read_plan_file

TEST_F(PlanTest, GivenPlanErrorsNameTheFileAndLine) {
  const std::string entry = std::string(kUnit) + "\tbranches\t0\t0.5\n";
  struct Case {
    std::string text;
    std::string expected;  // ":LINE: error: ..." after the path
  } cases[] = {
      {"", ":1: error: "},
      {"not a plan\n", ":1: error: "},
      {"sampler-plan\t1\n" + entry, ":2: error: "},                             // an entry before the id
      {"sampler-plan\t1\nid\tx\n" + entry + entry, ":4: error: the same unit, scheme and site twice"},
      {"sampler-plan\t1\nid\tx\n" + std::string(kUnit) + "\tbranches\t0\t1.5\n", ":3: error: "},
      {"sampler-plan\t1\n# no id\n", ":2: error: "},
  };
  for (const Case& c : cases) {
    std::string path = file("bad.plan", c.text);
    KnownPlan known;
    Recorder sink;
    EXPECT_FALSE(read_plan_file(path, known, sink)) << c.text;
    ASSERT_EQ(sink.all.size(), 1u) << c.text;
    EXPECT_EQ(sink.text().find(path + c.expected), 0u) << c.text << " gave " << sink.text();
    EXPECT_NE(sink.text().find("the plan is unusable"), std::string::npos) << sink.text();
  }
  KnownPlan known;
  Recorder sink;
  EXPECT_FALSE(read_plan_file((dir_ / "none").string(), known, sink));
  EXPECT_NE(sink.text().find("cannot open"), std::string::npos);
}

// ------------------------------------------------------------------------------------------------ make_plan

// A usage of one section whose sites execute `per_run` times a run, in runs of `seconds` CPU seconds each,
// learned from `runs` runs at probability `rate`.
Usage usage_of(const std::vector<double>& per_run, double runs = 10, double seconds = 1, double rate = 0.01) {
  Usage usage;
  usage.runs = static_cast<uint64_t>(runs);
  usage.seconds = runs * seconds;
  SectionUsage section{kUnit, "branches", {}};
  for (double m : per_run) {
    SiteUsage site;
    site.executions = m * runs;
    site.runs = runs;
    site.probability = rate * runs;
    site.seconds = runs * seconds;
    // A site that executes is seen at least once (a site of no samples is planned as never seen).
    site.samples = m > 0 ? std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(m * runs * rate))) : 0;
    usage.samples += site.samples;
    section.sites.push_back(site);
  }
  usage.sections.push_back(section);
  return usage;
}

double cost_of(const Usage& usage, const Plan& plan, const PlanOptions& options) {
  // Samples per CPU second recomputed from the entries: sum of p * executions / seconds.
  double rate = 0;
  for (size_t i = 0; i < plan.entries.size(); ++i) {
    const SiteUsage& s = usage.sections[0].sites[plan.entries[i].site];
    double executions = s.samples == 0 ? -std::log(0.05) / s.probability * s.runs : s.executions;
    rate += plan.entries[i].probability * executions / s.seconds;
  }
  return rate * options.sample_seconds;
}

TEST(MakePlan, EqualExpectedSamplesBelowTheCapAndTheBudgetSpentExactly) {
  // Sites of 10^6, 10^5, 100 and 1 executions a run, runs of 1 s; 1 % of it at 100 ns a sample: 10^5 samples a
  // run. The sites of 1 and 100 executions are capped at probability 1 (101 samples); the other two share the rest
  // equally: a level of (10^5 - 101) / 2, below 10^5, where the second would reach the cap.
  Usage usage = usage_of({1e6, 1e5, 100, 1});
  PlanOptions options;
  options.budget = 0.01;
  options.sample_seconds = 100e-9;
  Plan plan = make_plan(usage, options);
  ASSERT_EQ(plan.entries.size(), 4u);
  EXPECT_NEAR(plan.level, (1e5 - 101) / 2, 1e-6);
  EXPECT_NEAR(plan.entries[0].probability * 1e6, plan.level, 1e-6);
  EXPECT_NEAR(plan.entries[1].probability * 1e5, plan.level, 1e-6);
  EXPECT_DOUBLE_EQ(plan.entries[2].probability, 1);
  EXPECT_DOUBLE_EQ(plan.entries[3].probability, 1);
  EXPECT_NEAR(plan.cost, options.budget, 1e-12);
  EXPECT_NEAR(cost_of(usage, plan, options), plan.cost, 1e-12);
  EXPECT_EQ(plan.capped, 2u);
  EXPECT_EQ(plan.rare, 0u);
  EXPECT_EQ(plan.below_target, 0u);
  EXPECT_EQ(plan.sites, 4u);
}

TEST(MakePlan, ATightBudgetMissesTheTargetForEveryUncappedSiteAlike) {
  Usage usage = usage_of({1e6, 1e5, 1e4, 0.5});
  PlanOptions options;
  options.budget = 1e-6;  // 10 samples/s at 100 ns: a run of 1 s affords 10 samples
  options.sample_seconds = 100e-9;
  options.target = 5;
  Plan plan = make_plan(usage, options);
  EXPECT_DOUBLE_EQ(plan.entries[3].probability, 1);  // 0.5 executions a run: 0.5 samples, capped
  EXPECT_NEAR(plan.level, (10 - 0.5) / 3, 1e-9);
  EXPECT_EQ(plan.below_target, 3u);
  EXPECT_EQ(plan.capped, 1u);
  EXPECT_EQ(plan.rare, 1u);  // the site of 0.5 executions a run: at probability 1, still below 5 samples
  std::string summary = plan_summary(usage, plan, options, "p");
  EXPECT_NE(summary.find("target 5: missed by 3 sites (the budget allows no more), 1 sites at the cap execute too "
                         "rarely to reach it"),
            std::string::npos)
      << summary;
  EXPECT_NEAR(plan.cost, options.budget, 1e-15);
}

TEST(MakePlan, AGenerousBudgetCapsEverySite) {
  Usage usage = usage_of({1e3, 10});
  PlanOptions options;
  options.budget = 1;  // 10^7 samples/s at 100 ns
  options.sample_seconds = 100e-9;
  options.max_probability = 0.25;
  Plan plan = make_plan(usage, options);
  EXPECT_TRUE(std::isinf(plan.level));
  EXPECT_DOUBLE_EQ(plan.entries[0].probability, 0.25);
  EXPECT_DOUBLE_EQ(plan.entries[1].probability, 0.25);
  EXPECT_EQ(plan.capped, 2u);
  EXPECT_NEAR(plan.cost, 0.25 * 1010 * 100e-9, 1e-15);
  EXPECT_LE(plan.cost, options.budget);
}

TEST(MakePlan, SitesNeverSeenAreTakenAtTheirUpperBoundAndUnknownSitesLeftOut) {
  Usage usage = usage_of({1e4, 0});
  SiteUsage unknown;  // no run could sample it
  usage.sections[0].sites.push_back(unknown);
  PlanOptions options;
  options.budget = 1e-3;
  options.sample_seconds = 1e-6;  // 1000 samples/s
  Plan plan = make_plan(usage, options);
  ASSERT_EQ(plan.entries.size(), 2u);
  EXPECT_EQ(plan.unseen, 1u);
  EXPECT_EQ(plan.unknown, 1u);
  // 10 runs at 0.01: a sum of probabilities of 0.1, so at most -ln(0.05) / 0.1 = 29.96 executions a run: capped
  // at probability 1, it takes 29.96 of the 1000 samples a run, and the other site the rest.
  const double bound = -std::log(0.05) / 0.1;
  EXPECT_DOUBLE_EQ(plan.entries[1].probability, 1);
  EXPECT_NEAR(plan.level, 1000 - bound, 1e-9);
  EXPECT_NEAR(plan.entries[0].probability * 1e4, plan.level, 1e-9);
  EXPECT_NEAR(cost_of(usage, plan, options), options.budget, 1e-12);
}

// Three sites: a loop's of 10^6 executions a run, an arm beside it in its function never seen executing, and a
// third never seen either, in a function of its own (`third_beside_loop`: in the loop's). 10 runs of 1 s at 0.01:
// the unseen sites' bound is b = -ln(0.05) / 0.1 executions a run.
Usage loop_and_cold_arms(bool third_beside_loop) {
  Usage usage = usage_of({1e6, 0, 0});
  usage.sections[0].functions = {"loop", "loop", third_beside_loop ? "loop" : "error"};
  return usage;
}

PlanOptions walks_priced() {
  PlanOptions options;
  options.budget = 0.01;
  options.sample_seconds = 100e-9;
  options.walk_seconds = 10e-9;
  return options;
}

TEST(MakePlan, AnUnseenSiteBesideAHotSitePaysForTheWalksItsWeightCauses) {
  Usage usage = loop_and_cold_arms(false);
  PlanOptions options = walks_priced();
  Plan plan = make_plan(usage, options);
  ASSERT_EQ(plan.entries.size(), 3u);
  const double b = -std::log(0.05) / 0.1, c = options.sample_seconds, w = options.walk_seconds;
  // The arm alone in its function costs its samples only: at probability 1, c * b. The arm beside the loop sends
  // the loop's region to its slow side on p of the loop's 10^6 entries: its price is c * b + w * (10^6 - b), and it
  // is planned like a site of e = b + (w / c) * (10^6 - b) executions. The loop and it share the rest of the budget,
  // each at c * L a second: L = (budget - c * b) / 2c.
  const double level = (options.budget - c * b) / (2 * c), e = b + w / c * (1e6 - b);
  EXPECT_NEAR(plan.level, level, 1e-6 * level);
  EXPECT_NEAR(plan.entries[0].probability, level / 1e6, 1e-9);
  EXPECT_NEAR(plan.entries[1].probability, level / e, 1e-9);
  EXPECT_DOUBLE_EQ(plan.entries[2].probability, 1);
  EXPECT_LT(plan.entries[1].probability, 0.5);  // at the rule of three alone it would be at probability 1
  // The predicted cost counts the walks and is the budget: recomputed from the entries.
  const double walks = plan.entries[1].probability * (1e6 - b);
  const double samples = plan.entries[0].probability * 1e6 + plan.entries[1].probability * b + b;
  EXPECT_NEAR(plan.walks_per_second, walks, 1e-6 * walks);
  EXPECT_NEAR(plan.samples_per_second, samples, 1e-6 * samples);
  EXPECT_NEAR(plan.cost, samples * c + walks * w, 1e-12);
  EXPECT_NEAR(plan.cost, options.budget, 1e-12);
  EXPECT_EQ(plan.beside_hotter, 1u);
  EXPECT_EQ(plan.unseen_beside_hotter, 1u);
  // The training runs' own rates are priced alike: their samples, and the walks of the arm's weight at 0.01.
  EXPECT_NEAR(plan.uniform_cost, static_cast<double>(usage.samples) / usage.seconds * c + 0.01 * (1e6 - b) * w,
              1e-12);
  std::string summary = plan_summary(usage, plan, options, "p");
  EXPECT_NE(summary.find("1 beside a hotter site of their function (1 never seen), priced with the slow-side walks"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("slow-side walks at 10 ns"), std::string::npos) << summary;
}

TEST(MakePlan, TwoUnseenArmsOfAHotFunctionShareItsPrice) {
  // Both cold arms beside the loop: each priced alike, each at the same probability, below the cap.
  Usage usage = loop_and_cold_arms(true);
  PlanOptions options = walks_priced();
  Plan plan = make_plan(usage, options);
  EXPECT_EQ(plan.beside_hotter, 2u);
  EXPECT_DOUBLE_EQ(plan.entries[1].probability, plan.entries[2].probability);
  EXPECT_LT(plan.entries[1].probability, 1);
  EXPECT_NEAR(plan.cost, options.budget, 1e-12);
  // Every site below the cap spends the same share of the budget: the loop's samples, each arm's samples and walks.
  const double b = -std::log(0.05) / 0.1, c = options.sample_seconds, w = options.walk_seconds;
  EXPECT_NEAR(plan.entries[0].probability * 1e6 * c, plan.entries[1].probability * (c * b + w * (1e6 - b)), 1e-12);
  EXPECT_NEAR(plan.cost, 3 * c * plan.level, 1e-12);
}

TEST(MakePlan, WithoutFunctionsOrWithEachSiteAloneNoWalkIsPriced) {
  Usage known = loop_and_cold_arms(false);
  known.sections[0].functions = {"f", "g", "h"};
  Usage unknown = loop_and_cold_arms(false);
  unknown.sections[0].functions.clear();
  PlanOptions options;
  Plan alone = make_plan(known, options), without = make_plan(unknown, options);
  EXPECT_EQ(alone.id, without.id);
  EXPECT_EQ(alone.walks_per_second, 0);
  EXPECT_EQ(alone.beside_hotter, 0u);
  EXPECT_TRUE(alone.functions_known);
  EXPECT_FALSE(without.functions_known);
  std::string summary = plan_summary(unknown, without, options, "p");
  EXPECT_NE(summary.find("functions not known (not given by --sites): slow-side walks not priced"), std::string::npos)
      << summary;
}

TEST(MakePlan, AFunctionWhoseFastSidesAloneExceedTheBudgetIsTurnedOff) {
  // "loop"'s two sites execute 10^6 and 10^5 times a second, "cold"'s 100 and 1 (runs of 1 s). At 10 ns a site's
  // execution the loop's fast sides alone take 1.1e6 * 1e-8 = 1.1 % of the CPU time, above a 1 % budget: both its
  // sites go to probability 0, and "cold"'s share the whole budget (both capped at 1, 101 samples at 100 ns: 0.00101
  // % of it). At 5 ns (0.55 %) nothing is turned off. A site never seen counts nothing toward its function.
  Usage usage = usage_of({1e6, 1e5, 100, 1, 0});
  usage.sections[0].functions = {"loop", "loop", "cold", "cold", "cold"};
  PlanOptions options;
  options.budget = 0.01;
  options.sample_seconds = 100e-9;
  options.fast_seconds = 10e-9;
  Plan plan = make_plan(usage, options);
  ASSERT_EQ(plan.entries.size(), 5u);
  EXPECT_EQ(plan.entries[0].probability, 0);
  EXPECT_EQ(plan.entries[1].probability, 0);
  EXPECT_DOUBLE_EQ(plan.entries[2].probability, 1);
  EXPECT_DOUBLE_EQ(plan.entries[3].probability, 1);
  EXPECT_DOUBLE_EQ(plan.entries[4].probability, 1);
  EXPECT_EQ(plan.off_functions, 1u);
  EXPECT_EQ(plan.off_sites, 2u);
  EXPECT_LE(plan.cost, options.budget);
  EXPECT_EQ(plan.below_target, 0u);
  std::string summary = plan_summary(usage, plan, options, "p");
  EXPECT_NE(summary.find("1 functions turned off (2 sites at probability 0): their fast sides alone, at 10 ns a "
                         "site's execution, would cost more than the budget"),
            std::string::npos)
      << summary;
  // Below the threshold, or without the option, the plan of every site: the loop's sites sample.
  options.fast_seconds = 5e-9;
  Plan kept = make_plan(usage, options);
  EXPECT_EQ(kept.off_functions, 0u);
  EXPECT_GT(kept.entries[0].probability, 0);
  EXPECT_GT(kept.entries[1].probability, 0);
  options.fast_seconds = 0;
  EXPECT_EQ(make_plan(usage, options).id, kept.id);
  EXPECT_EQ(plan_summary(usage, kept, options, "p").find("turned off"), std::string::npos);
  // Without the functions nothing is turned off, and the summary says why.
  options.fast_seconds = 10e-9;
  usage.sections[0].functions.clear();
  Plan unnamed = make_plan(usage, options);
  EXPECT_EQ(unnamed.off_functions, 0u);
  options.fast_seconds = 0;
  EXPECT_EQ(unnamed.id, make_plan(usage, options).id);
  options.fast_seconds = 10e-9;
  EXPECT_NE(plan_summary(usage, unnamed, options, "p").find("no function turned off: functions not known"),
            std::string::npos);
}

TEST(NameFunctions, EachSiteTakesItsFunctionFromTheSiteInformation) {
  Usage usage = usage_of({5, 0});
  usage.sections.push_back({kUnit, "returns", {SiteUsage{}}, {}});
  SitesIndex index;
  Recorder sink;
  ASSERT_TRUE(index.add_text("a.sites",
                             "<sites unit=\"" + std::string(kUnit) + "\" scheme=\"branches\">\n"
                             "a.c\t1\tmain\t1\tx\r\na.c\t9\tparse\t2\ty\n</sites>\n",
                             sink))
      << sink.text();
  EXPECT_EQ(name_functions(usage, index), 1u);  // the returns section has no site information
  EXPECT_EQ(usage.sections[0].functions, (std::vector<std::string>{"main", "parse"}));
  EXPECT_TRUE(usage.sections[1].functions.empty());
}

TEST(MakePlan, TheIdIsTheDigestOfTheEntriesAndTheFileReadsBack) {
  Usage usage = usage_of({1e8, 30, 2});
  PlanOptions options;
  Plan plan = make_plan(usage, options);
  Plan again = make_plan(usage, options);
  EXPECT_EQ(plan.id, again.id);
  EXPECT_EQ(plan.id.size(), 64u);
  EXPECT_TRUE(plan::valid_id(plan.id));
  options.budget = 0.03;
  EXPECT_NE(make_plan(usage, options).id, plan.id);

  const fs::path path = fs::path(::testing::TempDir()) / "plan_test_written.plan";
  std::string error;
  ASSERT_TRUE(write_plan_file(path.string(), plan, error)) << error;
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  KnownPlan known;
  Recorder sink;
  ASSERT_TRUE(read_plan_file(path.string(), known, sink)) << sink.text();
  EXPECT_EQ(known.id, plan.id);
  ASSERT_EQ(known.probabilities.size(), plan.entries.size());
  for (const plan::Entry& entry : plan.entries) {
    double read = known.probabilities.at({entry.unit, entry.scheme, entry.site});
    EXPECT_NEAR(read, entry.probability, 1e-12 * entry.probability);
  }
  std::string unwritable;
  EXPECT_FALSE(write_plan_file((fs::path(::testing::TempDir()) / "no-such-dir" / "x.plan").string(), plan, unwritable));
  EXPECT_NE(unwritable.find("cannot write"), std::string::npos);
}

TEST(MakePlan, TheSummarySaysTheCostAndTheTarget) {
  Usage usage = usage_of({1e6, 1});
  PlanOptions options;
  options.budget = 0.02;
  Plan plan = make_plan(usage, options);
  std::string summary = plan_summary(usage, plan, options, "out\x1b.plan");
  EXPECT_NE(summary.find("predicted cost 2% of a run's CPU time (budget 2%)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("target 1: met"), std::string::npos) << summary;
  EXPECT_EQ(summary.find('\x1b'), std::string::npos) << "control characters reach the terminal";
}

}  // namespace
}  // namespace sampler::analysis
