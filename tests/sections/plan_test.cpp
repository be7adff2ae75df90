// Sampling plans (sections/core/plan.h, sections/plan.h): every rule of the line codec and of the file-level
// Reader, every error, the probability grammar, and the writer's output read back by the codec.
#include "sections/core/plan.h"

#include "sections/plan.h"
#include "sections/scheme_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace sampler::plan {
namespace {

const std::string kUnit = "0123456789abcdef0123456789abcdef";

std::string error_of(std::string_view text) {
  Line line = parse_line(text);
  EXPECT_EQ(line.kind, LineKind::malformed) << text;
  return line.error ? line.error : "";
}

TEST(PlanLine, Header) {
  EXPECT_EQ(parse_line("sampler-plan\t1").kind, LineKind::header);
  EXPECT_EQ(error_of("sampler-plan\t2"), "unsupported plan format (this reader knows `sampler-plan<TAB>1`)");
  EXPECT_EQ(error_of("sampler-plan\t1\t"), "unsupported plan format (this reader knows `sampler-plan<TAB>1`)");
  EXPECT_EQ(error_of("sampler-plan"), "unsupported plan format (this reader knows `sampler-plan<TAB>1`)");
}

TEST(PlanLine, CommentsAndBlankLines) {
  EXPECT_EQ(parse_line("").kind, LineKind::comment_or_blank);
  EXPECT_EQ(parse_line("# a comment\twith a tab").kind, LineKind::comment_or_blank);
  EXPECT_EQ(parse_line("#").kind, LineKind::comment_or_blank);
  EXPECT_EQ(parse_line("  \t ").kind, LineKind::comment_or_blank);
  EXPECT_EQ(parse_line(" # not a comment").kind, LineKind::malformed);
}

TEST(PlanLine, Id) {
  Line line = parse_line("id\tAz09_-");
  ASSERT_EQ(line.kind, LineKind::id);
  EXPECT_EQ(line.id, "Az09_-");
  EXPECT_EQ(parse_line("id\t" + std::string(64, 'x')).kind, LineKind::id);
  const std::string invalid = "invalid plan id (1 to 64 characters of 0-9 A-Z a-z _ -)";
  EXPECT_EQ(error_of("id\t" + std::string(65, 'x')), invalid);
  EXPECT_EQ(error_of("id\t"), invalid);
  EXPECT_EQ(error_of("id\ta b"), invalid);
  EXPECT_EQ(error_of("id\ta\tb"), invalid);
  EXPECT_EQ(error_of("id\ta.b"), invalid);
  EXPECT_EQ(error_of("id"), "id line without a TAB and an id");
}

TEST(PlanLine, ValidId) {
  EXPECT_TRUE(valid_id("a"));
  EXPECT_TRUE(valid_id("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"));
  EXPECT_FALSE(valid_id(""));
  EXPECT_FALSE(valid_id(std::string(65, 'a')));
  EXPECT_FALSE(valid_id("\x1b"));
  EXPECT_FALSE(valid_id("a/b"));
  EXPECT_FALSE(valid_id("\xc3\xa9"));
}

TEST(PlanLine, Entry) {
  const std::string text = kUnit + "\tbranches\t17\t0.25";
  Line line = parse_line(text);
  ASSERT_EQ(line.kind, LineKind::entry) << line.error;
  EXPECT_EQ(line.unit, kUnit);
  EXPECT_EQ(line.scheme, "branches");
  EXPECT_EQ(line.site, 17u);
  EXPECT_EQ(line.probability, 0.25);
  // Every scheme of the table is accepted, the largest site index too.
  for (const SchemeRow& row : kSchemeTable)
    EXPECT_EQ(parse_line(kUnit + "\t" + std::string(row.name) + "\t0\t1").kind, LineKind::entry) << row.name;
  EXPECT_EQ(parse_line(kUnit + "\tbranches\t4294967295\t0").site, 4294967295u);
}

TEST(PlanLine, EntryErrors) {
  EXPECT_EQ(error_of(kUnit + "\tbranches\t1"), "entry without 4 TAB-separated fields (unit, scheme, site, probability)");
  EXPECT_EQ(error_of(kUnit), "entry without 4 TAB-separated fields (unit, scheme, site, probability)");
  EXPECT_EQ(error_of(kUnit + "\tbranches\t1\t0.5\t"), "entry with more than 4 TAB-separated fields");
  EXPECT_EQ(error_of(kUnit + " branches 1 0.5"), "entry without 4 TAB-separated fields (unit, scheme, site, probability)");
  const std::string bad_unit = "unit is not a signature of 32 lower-case hex digits";
  EXPECT_EQ(error_of(kUnit.substr(1) + "\tbranches\t1\t0.5"), bad_unit);
  EXPECT_EQ(error_of(kUnit + "0\tbranches\t1\t0.5"), bad_unit);
  EXPECT_EQ(error_of("0123456789ABCDEF0123456789abcdef\tbranches\t1\t0.5"), bad_unit);
  EXPECT_EQ(error_of("0123456789abcdeg0123456789abcdef\tbranches\t1\t0.5"), bad_unit);
  EXPECT_EQ(error_of(kUnit + "\tbranch\t1\t0.5"), "unknown scheme");
  EXPECT_EQ(error_of(kUnit + "\t\t1\t0.5"), "unknown scheme");
  EXPECT_EQ(error_of(kUnit + "\tall\t1\t0.5"), "unknown scheme");
  const std::string bad_site = "site is not a decimal index below 2^32";
  EXPECT_EQ(error_of(kUnit + "\tbranches\t4294967296\t0.5"), bad_site);
  EXPECT_EQ(error_of(kUnit + "\tbranches\t99999999999999999999999\t0.5"), bad_site);
  EXPECT_EQ(error_of(kUnit + "\tbranches\t\t0.5"), bad_site);
  EXPECT_EQ(error_of(kUnit + "\tbranches\t-1\t0.5"), bad_site);
  EXPECT_EQ(error_of(kUnit + "\tbranches\t+1\t0.5"), bad_site);
  EXPECT_EQ(error_of(kUnit + "\tbranches\t0x1\t0.5"), bad_site);
  const std::string bad_probability = "probability is not a decimal number in [0, 1]";
  EXPECT_EQ(error_of(kUnit + "\tbranches\t1\t1.5"), bad_probability);
  EXPECT_EQ(error_of(kUnit + "\tbranches\t1\t0.5\r"), bad_probability);
  EXPECT_EQ(error_of(kUnit + "\tbranches\t1\t"), bad_probability);
}

TEST(PlanLine, LineLength) {
  // 4096 bytes is the limit: a comment of that length is fine, one byte more is an error whatever the line.
  EXPECT_EQ(parse_line("#" + std::string(4095, 'x')).kind, LineKind::comment_or_blank);
  EXPECT_EQ(error_of("#" + std::string(4096, 'x')), "line longer than 4096 bytes");
}

// parse_line() reads an entry as sampler-analyze writes it in one pass and falls back to reading it field by
// field: on every combination of good and bad fields both must agree with the format's rules as stated here
// (split at every TAB, then each field checked in order), bit for bit and error for error.
Line entry_by_the_rules(const std::string& text) {
  Line line;
  if (text.size() > kMaxLineBytes) return line.error = "line longer than 4096 bytes", line;
  std::vector<std::string> fields(1);
  for (char c : text)
    if (c == '\t')
      fields.emplace_back();
    else
      fields.back().push_back(c);
  if (fields.size() > 4) return line.error = "entry with more than 4 TAB-separated fields", line;
  if (fields.size() < 4)
    return line.error = "entry without 4 TAB-separated fields (unit, scheme, site, probability)", line;
  bool hex = fields[0].size() == kUnitSignatureDigits;
  for (char c : fields[0]) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!hex) return line.error = "unit is not a signature of 32 lower-case hex digits", line;
  SchemeId id{};
  if (!find_scheme_id(fields[1], id)) return line.error = "unknown scheme", line;
  bool site = !fields[2].empty() && fields[2].size() <= 10 &&
              fields[2].find_first_not_of("0123456789") == std::string::npos && std::stoull(fields[2]) <= UINT32_MAX;
  if (!site) return line.error = "site is not a decimal index below 2^32", line;
  if (!parse_probability(fields[3], line.probability))
    return line.error = "probability is not a decimal number in [0, 1]", line;
  line.kind = LineKind::entry;
  line.site = static_cast<uint32_t>(std::stoull(fields[2]));
  return line;
}

TEST(PlanLine, OnePassReadingAgreesWithTheRules) {
  std::vector<std::string> units = {kUnit, std::string(32, '0'), std::string(32, 'f'), kUnit.substr(1), kUnit + "0",
                                    "", "0123456789abcdef0123456789abcdef0123456789abcdef"};
  // One wrong byte in each of the unit's four words, the bytes next to the ranges 0-9 and a-f among them.
  for (size_t at : {0, 7, 8, 15, 16, 24, 31})
    for (char c : {'/', ':', '`', 'g', 'A', 'F', ' ', '\t', '\0', '\x80', '\xb0', '\xe1', '\xff'}) {
      std::string unit = kUnit;
      unit[at] = c;
      units.push_back(unit);
    }
  std::vector<std::string> schemes = {"", "branche", "branchesx", "Branches", "all", "function-entries-", " branches"};
  for (const SchemeRow& row : kSchemeTable) schemes.emplace_back(row.name);
  const std::vector<std::string> sites = {"0", "17", "4294967295", "4294967296", "", "01", "1a", "-1", "+1",
                                          "99999999999999999999"};
  std::vector<std::string> probabilities = {
      "0", "1", "0.5", ".5", "1e-6", "2.5E-3", "1.0", "1.00000000000000000001", "0.00000000000000000000000000001",
      "1e-400", "4.9e-324", "2.2250738585072014e-308", "0.30000000000000004", "0.1234567890123456789012345",
      "1e1", "1e+0", "10e-1", "", "0.5\r", "0.5\t", "0.5\t1", "\t0.5", "-0", "0x1", "1e", "00000.000", " 0.5"};
  // The longest line and one byte more, whatever the rest.
  const size_t head = kUnitSignatureDigits + std::string("\tbranches\t0\t").size();
  probabilities.push_back("0." + std::string(kMaxLineBytes - head - 3, '0') + "1");
  probabilities.push_back("0." + std::string(kMaxLineBytes - head - 2, '0') + "1");
  size_t lines = 0, entries = 0;
  for (const std::string& unit : units)
    for (const std::string& scheme : schemes)
      for (const std::string& site : sites)
        for (const std::string& probability : probabilities) {
          const std::string text = unit + "\t" + scheme + "\t" + site + "\t" + probability;
          if (text[0] == '\t') continue;  // blank-led lines are another rule's (CommentsAndBlankLines)
          Line expected = entry_by_the_rules(text), line = parse_line(text);
          ++lines;
          ASSERT_EQ(line.kind, expected.kind) << text << ": " << (line.error ? line.error : "an entry");
          if (line.kind != LineKind::entry) {
            ASSERT_STREQ(line.error, expected.error) << text;
            continue;
          }
          ++entries;
          ASSERT_EQ(line.unit, unit);
          ASSERT_EQ(line.scheme, scheme);
          ASSERT_EQ(line.site, expected.site) << text;
          ASSERT_EQ(memcmp(&line.probability, &expected.probability, sizeof(double)), 0) << text;
        }
  EXPECT_GT(entries, 1000u);
  EXPECT_GT(lines, 10 * entries);
}

double probability_of(std::string_view text) {
  double value = -1;
  EXPECT_TRUE(parse_probability(text, value)) << text;
  return value;
}

bool refused(std::string_view text) {
  double value = -1;
  bool ok = parse_probability(text, value);
  EXPECT_EQ(value, -1) << "refusing must leave the output alone: " << text;
  return !ok;
}

TEST(PlanProbability, Grammar) {
  EXPECT_EQ(probability_of("0"), 0.0);
  EXPECT_EQ(probability_of("1"), 1.0);
  EXPECT_EQ(probability_of("1.0"), 1.0);
  EXPECT_EQ(probability_of("0.001"), 0.001);
  EXPECT_EQ(probability_of("1e-6"), 1e-6);
  EXPECT_EQ(probability_of("2.5E-3"), 2.5e-3);
  EXPECT_EQ(probability_of("25e-10"), 25e-10);
}

TEST(PlanProbability, ValuesReadAsTheNearestDouble) {
  EXPECT_EQ(probability_of(".5"), 0.5);
  EXPECT_EQ(probability_of("1."), 1.0);
  EXPECT_EQ(probability_of("0.1"), 0.1);
  EXPECT_EQ(probability_of("0.333333333333333"), 0.333333333333333);
  EXPECT_EQ(probability_of("000000.25"), 0.25);
  EXPECT_EQ(probability_of("25e-2"), 0.25);
  // Past 10^-22 the scaling takes several roundings: within 4 ulps (EXPECT_DOUBLE_EQ).
  EXPECT_DOUBLE_EQ(probability_of("0.0000000000000000000000000000000000000001"), 1e-40);
  EXPECT_EQ(probability_of("1e-400"), 0.0);
  EXPECT_EQ(probability_of("0e999999999999"), 0.0);
  EXPECT_EQ(probability_of("10e-1"), 1.0);
  EXPECT_EQ(probability_of("1000000000000000000000000e-24"), 1.0);
  // Beyond 19 significant digits the rest is dropped: the value stays within an ulp or two.
  EXPECT_NEAR(probability_of("0.12345678901234567890123456789"), 0.12345678901234567890123456789, 1e-16);
  EXPECT_DOUBLE_EQ(probability_of("1e-300"), 1e-300);
  EXPECT_DOUBLE_EQ(probability_of("0.7e-200"), 0.7e-200);
}

TEST(PlanProbability, Refused) {
  for (const char* text : {"", ".", "e-1", ".e1", "1e", "1e+", "1e-", "-0", "+0.5", "0.5e", "0x1", "nan", "inf", "0,5",
                           " 0.5", "0.5 ", "1..0", "0.5.0", "1e--1", "1.0000000000000000001", "1.5", "2", "1e1",
                           "2.5e+0", "1e100000000000", "0.1e2"})
    EXPECT_TRUE(refused(text)) << text;
}

struct Fed {
  std::vector<Line> lines;
  const char* finish;
  uint32_t lines_read;
};

Fed feed(const std::vector<std::string>& lines) {
  Reader reader;
  Fed fed;
  for (const std::string& line : lines) fed.lines.push_back(reader.next(line));
  fed.finish = reader.finish();
  fed.lines_read = reader.line_number();
  return fed;
}

TEST(PlanReader, AWholePlan) {
  Fed fed = feed({"sampler-plan\t1", "# learned from 20 runs", "", "id\tdeadbeef", kUnit + "\tbranches\t0\t1",
                  "# more", kUnit + "\treturns\t3\t1e-3"});
  ASSERT_EQ(fed.lines.size(), 7u);
  EXPECT_EQ(fed.lines[0].kind, LineKind::header);
  EXPECT_EQ(fed.lines[3].kind, LineKind::id);
  EXPECT_EQ(fed.lines[4].kind, LineKind::entry);
  EXPECT_EQ(fed.lines[6].kind, LineKind::entry);
  EXPECT_EQ(fed.finish, nullptr);
  EXPECT_EQ(fed.lines_read, 7u);
}

TEST(PlanReader, APlanWithoutEntries) {
  EXPECT_EQ(feed({"sampler-plan\t1", "id\tempty"}).finish, nullptr);
}

TEST(PlanReader, TheHeaderOnLineOne) {
  const std::string not_a_plan = "not a sampler plan (line 1 must be `sampler-plan<TAB>1`)";
  EXPECT_EQ(std::string(feed({}).finish), not_a_plan);
  EXPECT_EQ(std::string(feed({""}).finish), not_a_plan);
  Fed fed = feed({"# comment", "sampler-plan\t1", "id\tx"});
  EXPECT_EQ(std::string(fed.lines[0].error), not_a_plan);
  fed = feed({"id\tx"});
  EXPECT_EQ(std::string(fed.lines[0].error), not_a_plan);
  fed = feed({"sampler-plan\t1", "sampler-plan\t1", "id\tx"});
  EXPECT_EQ(std::string(fed.lines[1].error), "header repeated");
}

TEST(PlanReader, OneIdBeforeTheEntries) {
  Fed fed = feed({"sampler-plan\t1", kUnit + "\tbranches\t0\t1", "id\tx"});
  EXPECT_EQ(std::string(fed.lines[1].error), "entry before the id line");
  fed = feed({"sampler-plan\t1", "id\tx", "id\ty"});
  EXPECT_EQ(std::string(fed.lines[2].error), "second id line");
  fed = feed({"sampler-plan\t1", "# no id"});
  EXPECT_EQ(std::string(fed.finish), "plan without an id line");
}

TEST(PlanReader, MalformedLinesPassThrough) {
  Fed fed = feed({"sampler-plan\t1", "id\tx", kUnit + "\tbranches\t0\t2"});
  EXPECT_EQ(std::string(fed.lines[2].error), "probability is not a decimal number in [0, 1]");
  EXPECT_EQ(fed.lines_read, 3u);
}

TEST(PlanWriter, ReadsBackThroughTheCodec) {
  std::vector<Entry> entries = {{kUnit, "branches", 0, 1.0},
                                {kUnit, "returns", 7, 0.001},
                                {kUnit, "scalar-pairs", 4294967295u, 1e-6},
                                {kUnit, "float-kinds", 2, 0.0},
                                {kUnit, "coverage", 3, 0.1 + 0.2},
                                {kUnit, "bounds", 5, 1.0 / 3}};
  std::ostringstream out;
  write_plan(out, "0123abcd", entries);
  std::istringstream in(out.str());
  Reader reader;
  std::string text;
  size_t entry = 0;
  while (std::getline(in, text)) {
    Line line = reader.next(text);
    ASSERT_NE(line.kind, LineKind::malformed) << text << ": " << line.error;
    if (reader.line_number() == 2) {
      EXPECT_EQ(line.id, "0123abcd");
    }
    if (line.kind != LineKind::entry) continue;
    ASSERT_LT(entry, entries.size());
    EXPECT_EQ(line.unit, entries[entry].unit);
    EXPECT_EQ(line.scheme, entries[entry].scheme);
    EXPECT_EQ(line.site, entries[entry].site);
    EXPECT_EQ(line.probability, entries[entry].probability) << text;
    ++entry;
  }
  EXPECT_EQ(entry, entries.size());
  EXPECT_EQ(reader.finish(), nullptr);
  EXPECT_EQ(out.str().substr(0, 15 + 12), "sampler-plan\t1\nid\t0123abcd\n");
}

}  // namespace
}  // namespace sampler::plan
