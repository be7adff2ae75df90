// check_plan() (sections/plan_file.h): a whole plan file, all or nothing, with the line at fault.
#include "sections/plan_file.h"

#include <gtest/gtest.h>

#include <string>

namespace sampler::plan {
namespace {

constexpr char kUnit[] = "0123456789abcdef0123456789abcdef";

std::string entry(std::string_view scheme, int site, std::string_view probability) {
  return std::string(kUnit) + "\t" + std::string(scheme) + "\t" + std::to_string(site) + "\t" +
         std::string(probability) + "\n";
}

struct Verdict {
  bool ok;
  Summary summary;
  uint64_t line;
  std::string error;
};

Verdict check(std::string_view text) {
  Verdict v{};
  v.ok = check_plan(text, v.summary, v.line, v.error);
  return v;
}

TEST(CheckPlan, AcceptsAWholePlanAndCountsItsEntries) {
  const std::string text = "sampler-plan\t1\n# made by hand\nid\tp-1\n\n" + entry("branches", 0, "1e-3") +
                           entry("branches", 1, "1") + entry("returns", 0, "0");
  Verdict v = check(text);
  ASSERT_TRUE(v.ok) << v.line << ": " << v.error;
  EXPECT_EQ(v.summary.id, "p-1");
  EXPECT_EQ(v.summary.entries, 3u);
  // The last line may lack its newline; a plan without entries is a plan.
  v = check("sampler-plan\t1\nid\tempty");
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.summary.entries, 0u);
}

TEST(CheckPlan, NamesTheLineAtFault) {
  const std::string head = "sampler-plan\t1\nid\tp\n";
  struct Case {
    std::string text;
    uint64_t line;
  } cases[] = {
      {"", 1},                                                             // empty: no header
      {"id\tp\n", 1},                                                      // no header
      {"sampler-plan\t1\n", 1},                                            // no id
      {"sampler-plan\t1\n" + entry("branches", 0, "0.5"), 2},              // an entry before the id
      {head + "id\tq\n", 3},                                               // a second id
      {head + entry("branches", 0, "0.5") + entry("branches", 0, "1"), 4}, // the same site twice
      {head + entry("branches", 2, "0.5") + entry("branches", 1, "1") + entry("branches", 2, "0"), 5},
      {head + entry("no-such-scheme", 0, "0.5"), 3},
      {head + entry("branches", 0, "2"), 3},                               // beyond 1
      {head + std::string(kUnit) + "\tbranches\t0\t0.5\r\n", 3},           // CRLF: the runtime refuses it too
      {head + "# " + std::string(5000, 'x') + "\n", 3},                    // longer than a line may be
  };
  for (const Case& c : cases) {
    Verdict v = check(c.text);
    EXPECT_FALSE(v.ok) << c.text;
    EXPECT_EQ(v.line, c.line) << c.text << " -> " << v.error;
    EXPECT_FALSE(v.error.empty()) << c.text;
  }
  Verdict repeated = check(head + entry("branches", 0, "0.5") + entry("returns", 0, "1") + entry("branches", 0, "1"));
  EXPECT_EQ(repeated.line, 5u);
  EXPECT_EQ(repeated.error, "the same unit, scheme and site as line 3");
}

}  // namespace
}  // namespace sampler::plan
