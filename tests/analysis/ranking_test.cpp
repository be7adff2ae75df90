// analysis/predicates.h, analysis/ranking.h and crash signatures on small tables worked by hand.
#include <gtest/gtest.h>

#include <bit>
#include <vector>

#include "analysis/crash_signature.h"
#include "analysis/output.h"
#include "analysis/predicates.h"
#include "analysis/ranking.h"
#include "analysis/runs.h"

namespace sampler::analysis {
namespace {

TEST(Predicates, SixRelationsFromThreeCounters) {
  // Counters (<, ==, >) -> predicates < <= > >= == != (bit 0 .. bit 5).
  EXPECT_EQ(true_predicates(SchemeKind::kSixRelations, 0b001), 0b100011u);  // <: <, <=, !=
  EXPECT_EQ(true_predicates(SchemeKind::kSixRelations, 0b010), 0b011010u);  // ==: <=, >=, ==
  EXPECT_EQ(true_predicates(SchemeKind::kSixRelations, 0b100), 0b101100u);  // >: >, >=, !=
  EXPECT_EQ(true_predicates(SchemeKind::kSixRelations, 0b101), 0b101111u);  // < and >: all but ==
  EXPECT_EQ(true_predicates(SchemeKind::kSixRelations, 0), 0u);
  EXPECT_EQ(true_predicates(SchemeKind::kPerCounter, 0b10), 0b10u);
  EXPECT_EQ(true_predicates(SchemeKind::kBounds, 0b11), 0u);
  EXPECT_EQ(predicate_count(SchemeKind::kSixRelations, 3), 6u);
  EXPECT_EQ(predicate_count(SchemeKind::kPerCounter, 9), 9u);
  EXPECT_EQ(predicate_count(SchemeKind::kBounds, 2), 0u);
}

Site make_site(std::string scheme, std::string line, uint32_t counters) {
  Site site;
  site.scheme = std::move(scheme);
  parse_site_fields(line, site);
  site.counters = counters;
  return site;
}

TEST(Predicates, Text) {
  Site branch = make_site("branches", "a.c\t12\tparse\t3\tvalue < 0", 2);
  EXPECT_EQ(branch.file, "a.c");
  EXPECT_EQ(branch.line, "12");
  EXPECT_EQ(branch.function, "parse");
  EXPECT_EQ(predicate_text(branch, 0), "(value < 0) is false");
  EXPECT_EQ(predicate_text(branch, 1), "(value < 0) is true");
  Site ret = make_site("returns", "a.c\t13\tparse\t4\tmemcmp", 3);
  EXPECT_EQ(predicate_text(ret, 1), "memcmp() <= 0");
  EXPECT_EQ(predicate_text(ret, 5), "memcmp() != 0");
  Site pair = make_site("scalar-pairs", "a.c\t14\tf\t5\tknown\tlocal\tdirect\tlength\tlocal", 3);
  EXPECT_EQ(predicate_text(pair, 3), "known >= length");
  Site floats = make_site("float-kinds", "a.c\t15\tf\t6\tshare\tlocal\tdirect", 9);
  EXPECT_EQ(predicate_text(floats, 4), "share is NaN");
  Site entry = make_site("function-entries", "a.c\t16\thash\t0", 1);
  EXPECT_EQ(predicate_text(entry, 0), "hash() reached");
  Site own = make_site("length-class", "a.c\t17\tf\t1\tlength class: 1-4, 5-8, 9-16, 17+", 4);
  EXPECT_EQ(predicate_text(own, 3), "length class 17+");
  Site unnamed = make_site("mine", "a.c\t18\tf\t1\twhatever", 2);
  EXPECT_EQ(predicate_text(unnamed, 1), "mine column 1");
}

// 20 failing runs with predicate A (id 0), 10 failing runs with B (id 2), 50 successful runs with neither; every
// run observes both sites (A and its complement on site 0, B and its complement on site 1).
RunSet two_causes() {
  RunSet runs;
  for (int i = 0; i < 20; ++i) runs.add("a" + std::to_string(i), true, true, 0, std::vector<uint32_t>{0, 1},
                                        std::vector<uint32_t>{0, 3});
  for (int i = 0; i < 10; ++i) runs.add("b" + std::to_string(i), true, true, 1, std::vector<uint32_t>{0, 1},
                                        std::vector<uint32_t>{1, 2});
  for (int i = 0; i < 50; ++i) runs.add("s" + std::to_string(i), false, false, -1, std::vector<uint32_t>{0, 1},
                                        std::vector<uint32_t>{1, 3});
  return runs;
}

TEST(Ranking, FirstRankingOverAllRuns) {
  RunSet runs = two_causes();
  Ranking ranking = rank(runs, {0, 0, 1, 1}, 2, RankOptions{});
  EXPECT_EQ(ranking.num_failing, 30u);
  EXPECT_EQ(ranking.num_succeeding, 50u);
  // A: F 20, S 0, F obs 30, S obs 50: Increase 1 - 30/80 = 0.625; importance 2 / (1/0.625 + log 30 / log 20)
  // B: F 10, S 0: Increase 0.625, log 10 / log 30 = 0.676992, so below A.
  ASSERT_EQ(ranking.first.size(), 2u);
  EXPECT_EQ(ranking.first[0].predicate, 0u);
  EXPECT_EQ(ranking.first[1].predicate, 2u);
  EXPECT_NEAR(ranking.first[0].increase, 0.625, 1e-9);
  EXPECT_EQ(ranking.first[0].counts.f, 20u);
  EXPECT_EQ(ranking.first[0].counts.f_observed, 30u);
  EXPECT_EQ(ranking.first[0].counts.s_observed, 50u);
  EXPECT_NEAR(ranking.first[1].importance, 2 / (1 / 0.625 + 1 / 0.676992), 1e-6);
}

TEST(Ranking, EliminationFindsBothCauses) {
  RunSet runs = two_causes();
  Ranking ranking = rank(runs, {0, 0, 1, 1}, 2, RankOptions{});
  ASSERT_EQ(ranking.rounds.size(), 2u);
  EXPECT_EQ(ranking.rounds[0].top.predicate, 0u);
  EXPECT_EQ(ranking.rounds[0].failing_discarded, 20u);
  EXPECT_EQ(ranking.rounds[0].succeeding_discarded, 0u);
  ASSERT_EQ(ranking.rounds[0].crash_groups.size(), 1u);
  EXPECT_EQ(ranking.rounds[0].crash_groups[0], std::make_pair(int32_t{0}, uint64_t{20}));
  // Round 2 ranks B on the 60 runs left: F 10, F obs 10, S obs 50: Context 1/6, Increase 5/6, NumF 10.
  EXPECT_EQ(ranking.rounds[1].top.predicate, 2u);
  EXPECT_EQ(ranking.rounds[1].top.num_failing, 10u);
  EXPECT_NEAR(ranking.rounds[1].top.context, 1.0 / 6, 1e-9);
  EXPECT_NEAR(ranking.rounds[1].top.importance, 2 / (1 / (5.0 / 6) + 1), 1e-9);
  EXPECT_EQ(ranking.rounds[1].failing_discarded, 10u);
  EXPECT_EQ(ranking.failing_unexplained, 0u);
}

// Each round's counts are those of the runs no earlier round discarded, recounted here one run at a time: the
// elimination subtracts the discarded runs' lists in batches (as the first count adds them), dense lists (kept as
// bitsets) and sparse ones alike.
TEST(Ranking, EachRoundCountsTheRunsLeft) {
  constexpr uint32_t kSites = 300, kPredicates = 2 * kSites;
  RunSet runs;
  uint64_t state = 12345;
  auto next = [&state] {  // a linear congruential generator (Knuth's MMIX constants): the same runs every time
    state = state * 6364136223846793005u + 1442695040888963407u;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int i = 0; i < 400; ++i) {
    const bool failing = i % 3 == 0;
    const uint32_t bug = failing ? 1 + static_cast<uint32_t>(i / 3) % 4 : 0;  // predicate 2 * 50 * bug + 1
    const bool dense = i % 2 == 0;
    std::vector<uint32_t> sites, predicates;
    for (uint32_t site = 0; site < kSites; ++site) {
      if (!dense && next() % 8 != 0 && site % 50 != 0) continue;
      sites.push_back(site);
      predicates.push_back(2 * site);
      if (site % 50 == 0 ? site == 50 * bug && bug != 0 : next() % 2 == 0) predicates.push_back(2 * site + 1);
    }
    runs.add("r" + std::to_string(i), failing, false, -1, sites, predicates);
  }
  std::vector<uint32_t> predicate_site(kPredicates);
  for (uint32_t p = 0; p < kPredicates; ++p) predicate_site[p] = p / 2;
  const Ranking ranking = rank(runs, predicate_site, kSites, RankOptions{});
  ASSERT_GE(ranking.rounds.size(), 4u);
  std::vector<uint8_t> left(runs.size(), 1);
  for (const Round& round : ranking.rounds) {
    Counts expected;
    uint64_t failing = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (!left[r]) continue;
      failing += runs.failed[r];
      bool observed = false;
      runs.for_each_site(r, [&](uint32_t site) { observed = observed || site == predicate_site[round.top.predicate]; });
      const bool truth = runs.has_predicate(r, round.top.predicate);
      (runs.failed[r] ? expected.f : expected.s) += truth ? 1 : 0;
      (runs.failed[r] ? expected.f_observed : expected.s_observed) += observed ? 1 : 0;
    }
    EXPECT_EQ(round.top.counts.f, expected.f);
    EXPECT_EQ(round.top.counts.s, expected.s);
    EXPECT_EQ(round.top.counts.f_observed, expected.f_observed);
    EXPECT_EQ(round.top.counts.s_observed, expected.s_observed);
    EXPECT_EQ(round.top.num_failing, failing);
    for (size_t r = 0; r < runs.size(); ++r) {
      if (runs.has_predicate(r, round.top.predicate)) left[r] = 0;
    }
  }
}

TEST(Ranking, StopsWhenNothingPredicts) {
  RunSet runs = two_causes();
  // Three more failing runs where nothing special is true: left unexplained.
  for (int i = 0; i < 3; ++i) runs.add("c" + std::to_string(i), true, false, -1, std::vector<uint32_t>{0, 1},
                                       std::vector<uint32_t>{1, 3});
  Ranking ranking = rank(runs, {0, 0, 1, 1}, 2, RankOptions{});
  EXPECT_EQ(ranking.rounds.size(), 2u);
  EXPECT_EQ(ranking.failing_unexplained, 3u);
  RankOptions one;
  one.max_rounds = 1;
  EXPECT_EQ(rank(runs, {0, 0, 1, 1}, 2, one).rounds.size(), 1u);
}

TEST(Ranking, OtherMetricAndTies) {
  RunSet runs = two_causes();
  RankOptions options;
  options.metric = Metric::kIncrease;
  // Same Increase (0.625): the tie goes to the larger F.
  Ranking ranking = rank(runs, {0, 0, 1, 1}, 2, options);
  ASSERT_EQ(ranking.first.size(), 2u);
  EXPECT_EQ(ranking.first[0].predicate, 0u);
  EXPECT_NEAR(ranking.first[0].score, ranking.first[1].score, 1e-12);
}

// two_causes() with a third site (predicates 4 and 5) that no run observed.
const std::vector<uint32_t> kThreeSites = {0, 0, 1, 1, 2, 2};

TEST(Ranking, AllPredicatesScoresTheOthersOverAllRuns) {
  RunSet runs = two_causes();
  Ranking plain = rank(runs, kThreeSites, 3, RankOptions{});
  EXPECT_TRUE(plain.unranked.empty());
  RankOptions all;
  all.all_predicates = true;
  Ranking ranking = rank(runs, kThreeSites, 3, all);
  // The same ranking and rounds as without the option.
  ASSERT_EQ(ranking.first.size(), plain.first.size());
  for (size_t i = 0; i < plain.first.size(); ++i) EXPECT_EQ(ranking.first[i].predicate, plain.first[i].predicate);
  ASSERT_EQ(ranking.rounds.size(), plain.rounds.size());
  // Added: A's and B's complements (sites observed in every run), not site 2's predicates (never observed).
  // B's complement (3): true in the 20 A runs and the 50 successful ones, F 20, S 50, F obs 30, S obs 50:
  // Failure 2/7, Context 3/8, Increase -0.0893, Importance 0. A's complement (1): F 10, S 50: Increase -0.2083,
  // Importance 0; the tie goes to the larger F, so 3 comes first.
  ASSERT_EQ(ranking.unranked.size(), 2u);
  EXPECT_EQ(ranking.unranked[0].predicate, 3u);
  EXPECT_EQ(ranking.unranked[0].counts.f, 20u);
  EXPECT_EQ(ranking.unranked[0].counts.s, 50u);
  EXPECT_EQ(ranking.unranked[0].counts.f_observed, 30u);
  EXPECT_EQ(ranking.unranked[0].counts.s_observed, 50u);
  EXPECT_NEAR(ranking.unranked[0].increase, 2.0 / 7 - 3.0 / 8, 1e-9);
  EXPECT_EQ(ranking.unranked[0].importance, 0);
  EXPECT_EQ(ranking.unranked[1].predicate, 1u);
  EXPECT_NEAR(ranking.unranked[1].increase, 10.0 / 60 - 3.0 / 8, 1e-9);
}

TEST(Ranking, AllPredicatesRowsFollowTheTable) {
  RunSet runs = two_causes();
  Ranking plain = rank(runs, kThreeSites, 3, RankOptions{});
  RankOptions all;
  all.all_predicates = true;
  Ranking ranking = rank(runs, kThreeSites, 3, all);
  std::vector<Row> table = table_rows(Analysis{nullptr, &runs, &plain, RankOptions{}, 0}, SIZE_MAX);
  std::vector<Row> rows = table_rows(Analysis{nullptr, &runs, &ranking, all, 0}, SIZE_MAX);
  // Without the option: round 1's A, round 2's B (over the 60 runs round 1 left).
  ASSERT_EQ(table.size(), 2u);
  // With it: the same rows first, then B again over all runs (its row above is over its round's runs), then
  // the complements; each observed predicate has one row over all runs, and A's is round 1's.
  ASSERT_EQ(rows.size(), 5u);
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(rows[i].predicate->predicate, table[i].predicate->predicate);
    EXPECT_EQ(rows[i].round, table[i].round);
    EXPECT_EQ(rows[i].predicate->counts.f_observed, table[i].predicate->counts.f_observed);
  }
  EXPECT_EQ(rows[1].predicate->counts.f_observed, 10u);
  EXPECT_EQ(rows[2].predicate->predicate, 2u);
  EXPECT_EQ(rows[2].round, 0u);
  EXPECT_EQ(rows[2].predicate->counts.f_observed, 30u);
  EXPECT_EQ(rows[2].predicate->num_failing, 30u);
  EXPECT_EQ(rows[3].predicate->predicate, 3u);
  EXPECT_EQ(rows[4].predicate->predicate, 1u);
  for (size_t i = 2; i < rows.size(); ++i) EXPECT_EQ(rows[i].round, 0u);
  // --top counts the added rows too.
  EXPECT_EQ(table_rows(Analysis{nullptr, &runs, &ranking, all, 0}, 3).size(), 3u);
}

TEST(Ranking, NoRuns) {
  Ranking ranking = rank(RunSet{}, {}, 0, RankOptions{});
  EXPECT_TRUE(ranking.first.empty());
  EXPECT_TRUE(ranking.rounds.empty());
}

TEST(CrashSignature, Legacy) {
  std::string body = "signal:11:SIGSEGV\nccrypt[0x804ff1c]\n/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]\n";
  EXPECT_EQ(crash_signature(body, 3), "SIGSEGV at ccrypt[0x804ff1c] < /lib/tls/libc.so.6(__libc_start_main+0xd3)"
                                      "[0xa94e23]");
  EXPECT_EQ(crash_signature(body, 1), "SIGSEGV at ccrypt[0x804ff1c]");
  EXPECT_EQ(crash_signature("", 3), "");
  EXPECT_EQ(crash_signature("signal:6:SIGABRT\n", 3), "SIGABRT");
}

}  // namespace
}  // namespace sampler::analysis

namespace sampler::analysis {
namespace {

// Both encodings of analysis/id_list.h: each list comes back as it went in, and membership agrees.
TEST(IdList, RoundTripAndContains) {
  std::vector<std::vector<uint32_t>> cases = {
      {}, {0}, {7}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {0, 1000000, 4000000000u}, {5, 6, 8, 13, 21, 34, 55, 89}};
  std::vector<uint32_t> dense;
  for (uint32_t i = 100; i < 1100; i += 1 + i % 2) dense.push_back(i);
  cases.push_back(dense);
  for (const std::vector<uint32_t>& ids : cases) {
    std::vector<uint8_t> bytes;
    id_list::encode(ids, bytes);
    std::vector<uint32_t> back;
    id_list::for_each(bytes.data(), [&](uint32_t id) { back.push_back(id); });
    EXPECT_EQ(back, ids);
    for (uint32_t probe : {0u, 1u, 7u, 8u, 100u, 101u, 1099u, 1100u, 4000000000u}) {
      EXPECT_EQ(id_list::contains(bytes.data(), probe), std::binary_search(ids.begin(), ids.end(), probe)) << probe;
    }
  }
  // From bitsets (as reading builds each run's lists): the same bytes as from the ids; and back by words.
  std::vector<uint32_t> shifted;
  for (uint32_t i = 77; i < 700; i += 1 + (i * 7) % 3) shifted.push_back(i);
  cases.push_back(shifted);
  cases.push_back({63, 64, 127, 128, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213});
  for (const std::vector<uint32_t>& ids : cases) {
    if (!ids.empty() && ids.back() > 100000) continue;
    std::vector<uint64_t> words(100000 / 64 + 2, 0);
    for (uint32_t id : ids) words[id / 64] |= uint64_t{1} << (id % 64);
    // A range per run of non-zero words, with the gaps between them (as sections far apart give).
    std::vector<id_list::WordRange> ranges;
    for (size_t w = 0; w < words.size(); ++w) {
      if (words[w] == 0) continue;
      if (!ranges.empty() && ranges.back().end == w) ranges.back().end = w + 1;
      else ranges.push_back({w, w + 1});
    }
    std::vector<uint8_t> expected, bytes;
    id_list::encode(ids, expected);
    id_list::encode_bits(words, ranges, bytes);
    EXPECT_EQ(bytes, expected) << ids.size();
    std::vector<uint32_t> back;
    id_list::for_each_word(
        bytes.data(),
        [&](uint64_t w, uint64_t bits) {
          for (; bits != 0; bits &= bits - 1) back.push_back(static_cast<uint32_t>(w * 64 + std::countr_zero(bits)));
        },
        [&](uint32_t id) { back.push_back(id); });
    EXPECT_EQ(back, ids);
  }
  // The dense list takes a bit per value of its range (667 ids over 1000 values: 125 bytes and a header).
  std::vector<uint8_t> bytes;
  id_list::encode(dense, bytes);
  EXPECT_LT(bytes.size(), 140u);
  // A run's lists come back from a RunSet as given.
  RunSet runs;
  runs.add("r", true, false, -1, dense, std::vector<uint32_t>{3, 9});
  EXPECT_EQ(runs.sites(0), dense);
  EXPECT_EQ(runs.predicates(0), (std::vector<uint32_t>{3, 9}));
  EXPECT_TRUE(runs.has_predicate(0, 9));
  EXPECT_FALSE(runs.has_predicate(0, 4));
}

}  // namespace
}  // namespace sampler::analysis
