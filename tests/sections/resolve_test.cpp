// Joining samples and timestamps with sites (sections/resolve.h): the index, the join, merging, and every
// error docs/tools.md names, as tables of small in-memory cases.
#include "sections/resolve.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sampler {
namespace {

constexpr const char* kU1 = "0123456789abcdef0123456789abcdef";
constexpr const char* kU2 = "fedcba9876543210fedcba9876543210";

std::string sites(const std::string& unit, const std::string& scheme, const std::string& body) {
  return "<sites unit=\"" + unit + "\" scheme=\"" + scheme + "\">\n" + body + "</sites>\n";
}
std::string samples(const std::string& unit, const std::string& scheme, const std::string& body) {
  return "<samples unit=\"" + unit + "\" scheme=\"" + scheme + "\">\n" + body + "</samples>\n";
}
std::string timestamps(const std::string& unit, const std::string& scheme, const std::string& when,
                       const std::string& body) {
  return "<timestamps unit=\"" + unit + "\" scheme=\"" + scheme + "\" when=\"" + when + "\">\n" + body +
         "</timestamps>\n";
}
std::string report(const std::string& body) { return "<report id=\"samples\">\n" + body + "</report>\n"; }

const std::string kBranchSites = "a.c\t10\tmain\t1\tx > 0\n"
                                 "a.c\t12\tmain\t2\ty\n";
const std::string kReturnSites = "b.c\t5\tf\t3\tg\n";
const std::string kBoundsSites = "c.c\t7\th\t4\tv\tlocal\tdirect\n";

/// The errors and warnings a run produced, formatted as a tool prints them.
std::vector<std::string> messages(const DiagnosticList& list) {
  std::vector<std::string> out;
  for (const Diagnostic& d : list.items) out.push_back(format_diagnostic("t", d));
  return out;
}

struct Joined {
  std::string out;
  bool ok;
  DiagnosticList diagnostics;
};

Joined resolve(const SitesIndex& index, const std::string& input, ResolveOptions options = {}) {
  Joined run;
  LineReader reader(input, "<stdin>", run.diagnostics);
  run.ok = resolve_samples(reader, index, options, [&run](std::string_view text) { run.out += text; },
                           run.diagnostics);
  return run;
}

SitesIndex make_index(const std::vector<std::pair<std::string, std::string>>& files) {
  SitesIndex index;
  DiagnosticList diagnostics;
  for (const auto& [label, text] : files) index.add_text(label, text, diagnostics);
  EXPECT_EQ(diagnostics.error_count(), 0u) << (diagnostics.items.empty() ? "" : diagnostics.items[0].message);
  return index;
}

// ------------------------------------------------------------------------------------------------------------
// Values

TEST(ParseCounter, Table) {
  EXPECT_EQ(parse_counter("0"), 0u);
  EXPECT_EQ(parse_counter("42"), 42u);
  EXPECT_EQ(parse_counter("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(parse_counter("18446744073709551616"));
  EXPECT_FALSE(parse_counter(""));
  EXPECT_FALSE(parse_counter("-1"));
  EXPECT_FALSE(parse_counter("+1"));
  EXPECT_FALSE(parse_counter("1 "));
  EXPECT_FALSE(parse_counter("0x10"));
  EXPECT_FALSE(parse_counter("123456789012345678901"));
}

TEST(ParseBoundValue, Table) {
  struct Case {
    const char* text;
    bool valid;
    bool negative;
    uint64_t magnitude;
  };
  const Case cases[] = {
      {"0", true, false, 0},
      {"-0", true, false, 0},
      {"17", true, false, 17},
      {"-17", true, true, 17},
      {"-9223372036854775808", true, true, 9223372036854775808u},
      {"18446744073709551615", true, false, UINT64_MAX},
      {"000000000000000000000042", true, false, 42},
      {"0x0", true, false, 0},
      {"0x7fffABCD", true, false, 0x7fffabcd},
      {"0X10", true, false, 16},
      {"0xffffffffffffffff", true, false, UINT64_MAX},
      {"0x0000000000000000000001", true, false, 1},
      {"0x1ffffffffffffffff", false, false, 0},
      {"18446744073709551616", false, false, 0},
      {"0x", false, false, 0},
      {"", false, false, 0},
      {"-", false, false, 0},
      {"--1", false, false, 0},
      {"1.5", false, false, 0},
      {"0xg", false, false, 0},
      {"12a", false, false, 0},
  };
  for (const Case& c : cases) {
    auto value = parse_bound_value(c.text);
    ASSERT_EQ(value.has_value(), c.valid) << c.text;
    if (!c.valid) continue;
    EXPECT_EQ(value->negative, c.negative) << c.text;
    EXPECT_EQ(value->magnitude, c.magnitude) << c.text;
  }
}

TEST(BoundLess, OrdersAsIntegers) {
  auto v = [](const char* text) { return *parse_bound_value(text); };
  EXPECT_TRUE(bound_less(v("-5"), v("-1")));
  EXPECT_FALSE(bound_less(v("-1"), v("-5")));
  EXPECT_TRUE(bound_less(v("-1"), v("0")));
  EXPECT_TRUE(bound_less(v("0"), v("0x10")));
  EXPECT_TRUE(bound_less(v("0x10"), v("17")));
  EXPECT_TRUE(bound_less(v("9223372036854775807"), v("18446744073709551615")));
  EXPECT_FALSE(bound_less(v("0x10"), v("16")));
  EXPECT_FALSE(bound_less(v("16"), v("0x10")));
}

// ------------------------------------------------------------------------------------------------------------
// The index

TEST(SitesIndex, FindsSectionsByUnitAndScheme) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "branches", kBranchSites) + sites(kU1, "returns", kReturnSites)},
                                 {"b.sites", sites(kU2, "returns", kReturnSites)}});
  EXPECT_EQ(index.size(), 3u);
  const IndexedSites* found = index.find(kU1, "returns");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->label, "a.sites");
  EXPECT_EQ(found->body, kReturnSites);
  EXPECT_EQ(found->site_count, 1u);
  EXPECT_EQ(found->line, 5u);
  EXPECT_EQ(index.find(kU2, "returns")->label, "b.sites");
  EXPECT_EQ(index.find(kU2, "branches"), nullptr);
  EXPECT_EQ(index.find(kU1, "return"), nullptr);
}

TEST(SitesIndex, IdenticalDuplicatesAreUsedOnceUnderTheFirstFile) {
  SitesIndex index;
  DiagnosticList diagnostics;
  EXPECT_TRUE(index.add_text("first.sites", sites(kU1, "branches", kBranchSites), diagnostics));
  // The same sites with CRLF line ends are still the same sites.
  std::string crlf = "<sites unit=\"" + std::string(kU1) +
                     "\" scheme=\"branches\">\r\na.c\t10\tmain\t1\tx > 0\r\na.c\t12\tmain\t2\ty\r\n</sites>\r\n";
  EXPECT_TRUE(index.add_text("second.sites", crlf, diagnostics));
  EXPECT_TRUE(diagnostics.items.empty());
  EXPECT_EQ(index.find(kU1, "branches")->label, "first.sites");
  EXPECT_FALSE(index.find(kU1, "branches")->conflicting);
}

TEST(SitesIndex, ConflictingDuplicatesAreAnErrorNamingBoth) {
  SitesIndex index;
  DiagnosticList diagnostics;
  EXPECT_TRUE(index.add_text("first.sites", sites(kU1, "branches", kBranchSites), diagnostics));
  EXPECT_FALSE(index.add_text("second.sites", "\n" + sites(kU1, "branches", "a.c\t10\tmain\t1\tx > 1\n"),
                              diagnostics));
  ASSERT_EQ(messages(diagnostics),
            std::vector<std::string>{"t: 'second.sites':2: error: sites for unit " + std::string(kU1) +
                                     " scheme branches differ from those in 'first.sites':1; samples of this "
                                     "unit and scheme are not resolved"});
  EXPECT_TRUE(index.find(kU1, "branches")->conflicting);

  // Its samples are left out without a second message; the other sections are resolved.
  SitesIndex& same = index;
  DiagnosticList ignore;
  same.add_text("c.sites", sites(kU2, "returns", kReturnSites), ignore);
  Joined run = resolve(same, samples(kU1, "branches", "1\t2\n3\t4\n") + samples(kU2, "returns", "1\t2\t3\n"));
  EXPECT_EQ(run.out, "c.sites\t" + std::string(kU2) + "\treturns\tb.c\t5\tf\t3\tg\t1\t2\t3\n");
  EXPECT_TRUE(run.diagnostics.items.empty());
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/resolve_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string write(const std::string& relative, const std::string& text) {
    std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::filesystem::path root_;
};

using SitesIndexFiles = TempDir;

TEST_F(SitesIndexFiles, ReadsSitesFilesAndDirectoriesRecursively) {
  write("tree/usr/lib/sampler/sites/b/app.sites", sites(kU1, "branches", kBranchSites));
  write("tree/usr/lib/sampler/sites/a/lib.sites", sites(kU2, "returns", kReturnSites));
  write("tree/usr/lib/sampler/sites/a/README", "not sites\n");
  std::string plain = write("extra.sites", sites(kU1, "returns", kReturnSites));
  SitesIndex index;
  DiagnosticList diagnostics;
  EXPECT_TRUE(index.add_path((root_ / "tree").string(), diagnostics));
  EXPECT_TRUE(index.add_path(plain, diagnostics));
  EXPECT_TRUE(diagnostics.items.empty()) << diagnostics.items[0].message;
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.find(kU1, "branches")->label, (root_ / "tree/usr/lib/sampler/sites/b/app.sites").string());
  EXPECT_EQ(index.find(kU2, "returns")->label, (root_ / "tree/usr/lib/sampler/sites/a/lib.sites").string());
  EXPECT_EQ(index.find(kU1, "returns")->label, plain);
  EXPECT_EQ(index.find(kU1, "returns")->body, kReturnSites);
}

TEST_F(SitesIndexFiles, DirectoryOrderIsSortedSoTheFirstDuplicateIsStable) {
  write("d/z.sites", sites(kU1, "returns", kReturnSites));
  write("d/m/y.sites", sites(kU1, "returns", kReturnSites));
  SitesIndex index;
  DiagnosticList diagnostics;
  EXPECT_TRUE(index.add_path((root_ / "d").string(), diagnostics));
  EXPECT_EQ(index.find(kU1, "returns")->label, (root_ / "d/m/y.sites").string());
}

TEST_F(SitesIndexFiles, ProblemsWithFiles) {
  std::string empty_dir = (root_ / "empty").string();
  std::filesystem::create_directories(empty_dir);
  std::string empty_file = write("empty.sites", "");
  SitesIndex index;
  DiagnosticList diagnostics;
  EXPECT_FALSE(index.add_path((root_ / "missing.sites").string(), diagnostics));
  EXPECT_TRUE(index.add_path(empty_dir, diagnostics));
  EXPECT_TRUE(index.add_path(empty_file, diagnostics));
  EXPECT_EQ(messages(diagnostics),
            (std::vector<std::string>{
                "t: '" + (root_ / "missing.sites").string() + "': error: cannot open: No such file or directory",
                "t: '" + empty_dir + "': warning: no *.sites files in this directory",
                "t: '" + empty_file + "': warning: no sites sections",
            }));
}

// ------------------------------------------------------------------------------------------------------------
// The join

TEST(ResolveSamples, OneLinePerSiteWithFileUnitSchemeStaticFieldsAndCounters) {
  SitesIndex index = make_index({{"app.sites", sites(kU1, "branches", kBranchSites)}});
  const std::string expected = "app.sites\t" + std::string(kU1) + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t5\t0\n" +
                               "app.sites\t" + std::string(kU1) + "\tbranches\ta.c\t12\tmain\t2\ty\t1\t2\n";
  // A bare samples subreport, and the same inside a whole report.
  for (const std::string& input : {samples(kU1, "branches", "5\t0\n1\t2\n"),
                                   report(samples(kU1, "branches", "5\t0\n1\t2\n"))}) {
    Joined run = resolve(index, input);
    EXPECT_TRUE(run.ok);
    EXPECT_EQ(run.out, expected);
    EXPECT_TRUE(run.diagnostics.items.empty());
  }
}

TEST(ResolveSamples, OutputFollowsTheInputWithMergedSectionsAtTheirFirstAppearance) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "branches", kBranchSites)},
                                 {"b.sites", sites(kU2, "returns", kReturnSites)}});
  std::string input = samples(kU2, "returns", "1\t2\t3\n") + samples(kU1, "branches", "1\t1\n2\t2\n") +
                      samples(kU2, "returns", "10\t20\t30\n") + samples(kU2, "returns", "100\t0\t0\n");
  Joined merged = resolve(index, input);
  EXPECT_TRUE(merged.ok);
  EXPECT_EQ(merged.out, "b.sites\t" + std::string(kU2) + "\treturns\tb.c\t5\tf\t3\tg\t111\t22\t33\n" +
                            "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t1\t1\n" +
                            "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t12\tmain\t2\ty\t2\t2\n");

  ResolveOptions no_merge;
  no_merge.merge = false;
  Joined separate = resolve(index, input, no_merge);
  EXPECT_TRUE(separate.ok);
  EXPECT_EQ(separate.out, "b.sites\t" + std::string(kU2) + "\treturns\tb.c\t5\tf\t3\tg\t1\t2\t3\n" +
                              "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t1\t1\n" +
                              "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t12\tmain\t2\ty\t2\t2\n" +
                              "b.sites\t" + std::string(kU2) + "\treturns\tb.c\t5\tf\t3\tg\t10\t20\t30\n" +
                              "b.sites\t" + std::string(kU2) + "\treturns\tb.c\t5\tf\t3\tg\t100\t0\t0\n");
}

TEST(ResolveSamples, BoundsMergeAsMinOfMinimaAndMaxOfMaximaKeepingTheirText) {
  SitesIndex index = make_index({{"c.sites", sites(kU1, "bounds", kBoundsSites + kBoundsSites)}});
  struct Case {
    std::vector<std::string> lines;  // the two sites' "min\tmax" in each section
    std::string expected;            // the merged values of both sites
  };
  const Case cases[] = {
      {{"-5\t3\n0\t0\n", "-7\t2\n1\t1\n"}, "-7\t3|0\t1"},
      {{"10\t20\n-1\t-1\n", "5\t25\n-2\t-3\n", "7\t21\n-1\t0\n"}, "5\t25|-2\t0"},
      {{"18446744073709551615\t18446744073709551615\n0\t0\n", "9223372036854775808\t1\n0\t0\n"},
       "9223372036854775808\t18446744073709551615|0\t0"},
      {{"0x7ffc10\t0x7ffc20\n0x0\t0xFF\n", "0x7ffb00\t0x7ffc18\n0x1\t0x100\n"}, "0x7ffb00\t0x7ffc20|0x0\t0x100"},
      // Equal values keep the first text.
      {{"0x10\t0x10\n1\t1\n", "16\t16\n1\t1\n"}, "0x10\t0x10|1\t1"},
  };
  for (const Case& c : cases) {
    std::string input;
    for (const std::string& lines : c.lines) input += samples(kU1, "bounds", lines);
    Joined run = resolve(index, input);
    EXPECT_TRUE(run.ok);
    size_t bar = c.expected.find('|');
    std::string prefix = "c.sites\t" + std::string(kU1) + "\tbounds\tc.c\t7\th\t4\tv\tlocal\tdirect\t";
    EXPECT_EQ(run.out, prefix + c.expected.substr(0, bar) + "\n" + prefix + c.expected.substr(bar + 1) + "\n")
        << input;
  }
}

TEST(ResolveSamples, CountersAreSixtyFourBitAndOverflowIsAnError) {
  SitesIndex index = make_index({{"b.sites", sites(kU2, "returns", kReturnSites + kReturnSites)}});
  Joined big = resolve(index, samples(kU2, "returns", "9223372036854775807\t0\t1\n0\t0\t0\n") +
                               samples(kU2, "returns", "9223372036854775808\t0\t1\n0\t0\t0\n"));
  EXPECT_TRUE(big.ok);
  EXPECT_EQ(big.out.substr(0, big.out.find('\n')),
            "b.sites\t" + std::string(kU2) + "\treturns\tb.c\t5\tf\t3\tg\t18446744073709551615\t0\t2");

  Joined overflow = resolve(index, samples(kU2, "returns", "18446744073709551615\t0\t1\n1\t1\t1\n") + "\n" +
                                    samples(kU2, "returns", "1\t0\t1\n1\t1\t1\n"));
  EXPECT_FALSE(overflow.ok);
  // The overflowing site is left out; the other is merged.
  EXPECT_EQ(overflow.out, "b.sites\t" + std::string(kU2) + "\treturns\tb.c\t5\tf\t3\tg\t2\t2\t2\n");
  EXPECT_EQ(messages(overflow.diagnostics),
            std::vector<std::string>{"t: '<stdin>':1: error: counter overflow merging unit " + std::string(kU2) +
                                     " scheme returns (the sections at lines 1 6): site 1 sums past "
                                     "18446744073709551615; left out"});
}

TEST(ResolveSamples, TimestampsMergeAsEarliestNonZeroFirstAndLatestLast) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "branches", kBranchSites)}});
  std::string input = timestamps(kU1, "branches", "first", "0\n500\n") +
                      timestamps(kU1, "branches", "last", "40\n600\n") + samples(kU1, "branches", "1\t1\n1\t1\n") +
                      timestamps(kU1, "branches", "first", "30\n0\n") +
                      timestamps(kU1, "branches", "last", "0\n700\n") +
                      timestamps(kU1, "branches", "first", "20\n900\n");
  ResolveOptions options;
  options.kind = SampleSectionKind::kTimestamps;
  Joined run = resolve(index, input, options);
  EXPECT_TRUE(run.ok);
  std::string u = kU1;
  EXPECT_EQ(run.out, "20\ta.sites\t" + u + "\tbranches\tfirst\ta.c\t10\tmain\t1\tx > 0\n" +
                         "500\ta.sites\t" + u + "\tbranches\tfirst\ta.c\t12\tmain\t2\ty\n" +
                         "40\ta.sites\t" + u + "\tbranches\tlast\ta.c\t10\tmain\t1\tx > 0\n" +
                         "700\ta.sites\t" + u + "\tbranches\tlast\ta.c\t12\tmain\t2\ty\n");

  // All-zero firsts stay zero.
  Joined zeros = resolve(index, timestamps(kU1, "branches", "first", "0\n0\n") +
                                 timestamps(kU1, "branches", "first", "0\n0\n"),
                      options);
  EXPECT_EQ(zeros.out, "0\ta.sites\t" + u + "\tbranches\tfirst\ta.c\t10\tmain\t1\tx > 0\n" + "0\ta.sites\t" + u +
                           "\tbranches\tfirst\ta.c\t12\tmain\t2\ty\n");

  // resolveSamples ignores timestamps sections, and the other way round.
  Joined only_samples = resolve(index, input);
  EXPECT_EQ(only_samples.out, "a.sites\t" + u + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t1\t1\n" + "a.sites\t" + u +
                                  "\tbranches\ta.c\t12\tmain\t2\ty\t1\t1\n");
}

TEST(ResolveSamples, UnknownUnitOrSchemeIsOneErrorPerKeyAndTheRestIsResolved) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "branches", kBranchSites)}});
  std::string input = samples(kU2, "branches", "1\t1\n") + samples(kU1, "branches", "1\t1\n2\t2\n") +
                      samples(kU2, "branches", "1\t1\n") + samples(kU1, "returns", "1\t1\t1\n");
  Joined run = resolve(index, input);
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.out, "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t1\t1\n" +
                         "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t12\tmain\t2\ty\t2\t2\n");
  EXPECT_EQ(messages(run.diagnostics),
            (std::vector<std::string>{
                "t: '<stdin>':1: error: no sites for unit " + std::string(kU2) + " scheme branches in the files given",
                "t: '<stdin>':11: error: no sites for unit " + std::string(kU1) + " scheme returns in the files given",
            }));
}

TEST(ResolveSamples, LineCountMismatchNamesUnitSchemeBothCountsAndBothSources) {
  SitesIndex index = make_index({{"a.sites", "\n" + sites(kU1, "branches", kBranchSites)},
                                 {"b.sites", sites(kU2, "returns", kReturnSites)}});
  for (bool merge : {true, false}) {
    ResolveOptions options;
    options.merge = merge;
    Joined run = resolve(index,
                      samples(kU1, "branches", "1\t1\n2\t2\n3\t3\n") + samples(kU2, "returns", "1\t2\t3\n") +
                          samples(kU1, "branches", "4\t4\n") + samples(kU1, "branches", "5\t5\n6\t6\n"),
                      options);
    EXPECT_FALSE(run.ok);
    // Both mismatched sections are left out; the good ones are resolved. Merged, the key is printed where it
    // first appeared, even though that section was left out.
    std::string returns = "b.sites\t" + std::string(kU2) + "\treturns\tb.c\t5\tf\t3\tg\t1\t2\t3\n";
    std::string branches = "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t5\t5\n" +
                           "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t12\tmain\t2\ty\t6\t6\n";
    EXPECT_EQ(run.out, merge ? branches + returns : returns + branches);
    EXPECT_EQ(messages(run.diagnostics),
              (std::vector<std::string>{
                  "t: '<stdin>':1: error: line count mismatch for unit " + std::string(kU1) +
                      " scheme branches: 3 lines in this section, 2 sites in 'a.sites':2; section left out",
                  "t: '<stdin>':9: error: line count mismatch for unit " + std::string(kU1) +
                      " scheme branches: 1 line in this section, 2 sites in 'a.sites':2; section left out",
              }));
  }
}

TEST(ResolveSamples, MalformedLinesAreLeftOutWithOneMessagePerSection) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "branches", kBranchSites + kBranchSites)}});
  Joined run = resolve(index, samples(kU1, "branches", "1\t1\nx\t1\n1\t1\t1\n2\t2\n"));
  EXPECT_FALSE(run.ok);
  std::string u = kU1;
  EXPECT_EQ(run.out, "a.sites\t" + u + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t1\t1\n" + "a.sites\t" + u +
                         "\tbranches\ta.c\t12\tmain\t2\ty\t2\t2\n");
  EXPECT_EQ(messages(run.diagnostics),
            std::vector<std::string>{"t: '<stdin>':3: error: 'x' is not a counter (an unsigned decimal integer "
                                     "of at most 64 bits); site left out (and 1 more malformed line in this "
                                     "section)"});

  // A malformed line in one of the merged sections leaves that site out of the merged output.
  Joined merged = resolve(index, samples(kU1, "branches", "1\t1\n1\t1\n1\t1\n1\t1\n") +
                                  samples(kU1, "branches", "1\t1\n-1\t1\n1\t1\n1\t1\n"));
  EXPECT_EQ(merged.out, "a.sites\t" + u + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t2\t2\n" + "a.sites\t" + u +
                            "\tbranches\ta.c\t10\tmain\t1\tx > 0\t2\t2\n" + "a.sites\t" + u +
                            "\tbranches\ta.c\t12\tmain\t2\ty\t2\t2\n");
  EXPECT_EQ(merged.diagnostics.error_count(), 1u);
}

TEST(ResolveSamples, AHugeValueIsQuotedShortly) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "function-entries", "a.c\t1\tf\t0\n")}});
  Joined run = resolve(index, samples(kU1, "function-entries", std::string(10u << 20, '7') + "\n"));
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(messages(run.diagnostics),
            std::vector<std::string>{"t: '<stdin>':2: error: '" + std::string(40, '7') +
                                     "...' is not a counter (an unsigned decimal integer of at most 64 bits); "
                                     "site left out"});
}

TEST(ResolveSamples, UnknownSchemesAreCarriedThroughAndSummedWhenMerged) {
  SitesIndex index = make_index({{"x.sites", sites(kU1, "my-scheme", "x.c\t1\tf\t0\textra\n")}});
  Joined once = resolve(index, samples(kU1, "my-scheme", "anything goes\there\n"));
  EXPECT_TRUE(once.ok);
  EXPECT_EQ(once.out, "x.sites\t" + std::string(kU1) + "\tmy-scheme\tx.c\t1\tf\t0\textra\tanything goes\there\n");

  Joined twice = resolve(index, samples(kU1, "my-scheme", "1\t2\t3\n") + samples(kU1, "my-scheme", "1\t2\t3\n"));
  EXPECT_TRUE(twice.ok);
  EXPECT_EQ(twice.out, "x.sites\t" + std::string(kU1) + "\tmy-scheme\tx.c\t1\tf\t0\textra\t2\t4\t6\n");

  Joined bad = resolve(index, samples(kU1, "my-scheme", "a\n") + samples(kU1, "my-scheme", "b\n"));
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(messages(bad.diagnostics),
            std::vector<std::string>{"t: '<stdin>':1: error: cannot merge unit " + std::string(kU1) +
                                     " scheme my-scheme (the sections at lines 1 4): site 1 has 'a', which is not "
                                     "a counter; left out"});
}

TEST(ResolveSamples, WrongNumberOfCountersForAKnownScheme) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "float-kinds", "a.c\t1\tf\t0\tx\tlocal\tdirect\n")}});
  Joined run = resolve(index, samples(kU1, "float-kinds", "1\t2\t3\n"));
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(messages(run.diagnostics),
            std::vector<std::string>{"t: '<stdin>':2: error: 3 values where scheme float-kinds has 9 per site; "
                                     "site left out"});
  Joined good = resolve(index, samples(kU1, "float-kinds", "1\t2\t3\t4\t5\t6\t7\t8\t9\n"));
  EXPECT_TRUE(good.ok);
  EXPECT_EQ(good.out, "a.sites\t" + std::string(kU1) +
                          "\tfloat-kinds\ta.c\t1\tf\t0\tx\tlocal\tdirect\t1\t2\t3\t4\t5\t6\t7\t8\t9\n");
}

TEST(ResolveSamples, ASectionCutShortByTheEndOfInputResolvesItsLines) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "branches", kBranchSites)}});
  Joined run = resolve(index, "<report id=\"samples\">\n<samples unit=\"" + std::string(kU1) +
                               "\" scheme=\"branches\">\n3\t4\n");
  EXPECT_EQ(run.out, "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t3\t4\n");
  EXPECT_EQ(run.diagnostics.error_count(), 0u);
  EXPECT_GE(run.diagnostics.warning_count(), 1u);
}

TEST(ResolveSamples, AMalformedLastLineOfASectionCutShortIsAWarning) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "branches", kBranchSites)}});
  // The crash cut "1\t2" after the tab: the line before is resolved, the cut one left out with a warning.
  Joined run = resolve(index, "<report id=\"samples\">\n<samples unit=\"" + std::string(kU1) +
                                  "\" scheme=\"branches\">\n3\t4\n1\t");
  EXPECT_TRUE(run.ok);
  EXPECT_EQ(run.out, "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t3\t4\n");
  EXPECT_EQ(run.diagnostics.error_count(), 0u);
  std::vector<std::string> all = messages(run.diagnostics);
  EXPECT_NE(std::find(all.begin(), all.end(),
                      "t: '<stdin>':4: warning: last line of a section cut short is incomplete ('' is not a counter "
                      "(an unsigned decimal integer of at most 64 bits)); left out"),
            all.end())
      << testing::PrintToString(all);

  // In a complete section the same line is an error.
  Joined complete = resolve(index, samples(kU1, "branches", "3\t4\n1\t\n"));
  EXPECT_FALSE(complete.ok);
  EXPECT_EQ(complete.diagnostics.error_count(), 1u);
}

TEST(ResolveSamples, CrlfInput) {
  SitesIndex index = make_index({{"a.sites", sites(kU1, "branches", kBranchSites)}});
  std::string crlf = "<samples unit=\"" + std::string(kU1) + "\" scheme=\"branches\">\r\n5\t0\r\n1\t2\r\n</samples>\r\n";
  Joined run = resolve(index, crlf);
  EXPECT_TRUE(run.ok);
  EXPECT_EQ(run.out, "a.sites\t" + std::string(kU1) + "\tbranches\ta.c\t10\tmain\t1\tx > 0\t5\t0\n" + "a.sites\t" +
                         std::string(kU1) + "\tbranches\ta.c\t12\tmain\t2\ty\t1\t2\n");
}

}  // namespace
}  // namespace sampler
