// Unit tests of find-sampler-info's logic: the build-directory prefix rewrite of site file names, and that
// rewriting touches the file field of site lines and nothing else (packaging/find_sampler_info.h).
#include "packaging/find_sampler_info.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace sampler::packaging {
namespace {

struct RewriteCase {
  const char* base;
  const char* dest;
  const char* file;
  std::optional<std::string> expected;
};

TEST(PrefixRewrite, MatchesWholeComponentsOnly) {
  const RewriteCase cases[] = {
      {"/b/x", "/usr/src/debug/p", "/b/x/a.c", "/usr/src/debug/p/a.c"},
      {"/b/x", "/usr/src/debug/p", "/b/x/sub/a.c", "/usr/src/debug/p/sub/a.c"},
      {"/b/x", "/usr/src/debug/p", "/b/x", "/usr/src/debug/p"},
      {"/b/x", "/usr/src/debug/p", "/b/xy/a.c", std::nullopt},   // not a component boundary
      {"/b/x", "/usr/src/debug/p", "/b/a.c", std::nullopt},
      {"/b/x", "/usr/src/debug/p", "a.c", std::nullopt},         // relative names never match
      {"/b/x", "/usr/src/debug/p", "", std::nullopt},
      {"/b/x/", "/d/", "/b/x/a.c", "/d/a.c"},                    // trailing slashes ignored
      {"/b/x//", "/d", "/b/x/a.c", "/d/a.c"},
      {"/b/x", "", "/b/x/sub/a.c", "sub/a.c"},                   // empty dest: relative to base
      {"/b/x", "", "/b/x", "."},
      {"/", "/r", "/a/b.c", "/r/a/b.c"},                          // "/" matches every absolute name
      {"/", "/r", "a/b.c", std::nullopt},
      {"/b/x", "/", "/b/x/a.c", "/a.c"},
      {"build", "/src", "build/a.c", "/src/a.c"},                  // relative base directories work too
      {"build", "/src", "builder/a.c", std::nullopt},
  };
  for (const RewriteCase& c : cases) {
    std::optional<PrefixRewrite> rewrite = PrefixRewrite::make(c.base, c.dest);
    ASSERT_TRUE(rewrite.has_value()) << c.base;
    EXPECT_EQ(rewrite->apply(c.file), c.expected) << c.base << " -> " << c.dest << " on '" << c.file << "'";
  }
}

TEST(PrefixRewrite, RefusesWhatWouldBreakTheLineFormat) {
  EXPECT_FALSE(PrefixRewrite::make("", "/d").has_value());
  EXPECT_FALSE(PrefixRewrite::make("/b\tx", "/d").has_value());
  EXPECT_FALSE(PrefixRewrite::make("/b", "/d\n").has_value());
  EXPECT_FALSE(PrefixRewrite::make("/b", "/d\r").has_value());
  EXPECT_TRUE(PrefixRewrite::make("/b x", "/d y").has_value());  // spaces are fine in file names
}

constexpr const char* kUnitA = "0123456789abcdef0123456789abcdef";
constexpr const char* kUnitB = "fedcba9876543210fedcba9876543210";

std::string section(const char* unit, const char* scheme, const std::string& body) {
  return std::string("<sites unit=\"") + unit + "\" scheme=\"" + scheme + "\">\n" + body + "</sites>\n";
}

TEST(RewriteSiteFiles, OnlyTheFileFieldOfSiteLinesChanges) {
  // The prefix also appears in other fields and in the scheme attribute: those stay as they are.
  std::string text = section(kUnitA, "branches",
                             "/b/x/a.c\t10\tmain\t3\t/b/x/a.c == 0\n"
                             "/b/xy/a.c\t11\tmain\t4\tp\n"
                             "rel.c\t12\tf\t1\tq\n") +
                     section(kUnitB, "/b/x/scheme",
                             "/b/x/sub/b.c\t1\tg\t0\n");
  std::string expected = section(kUnitA, "branches",
                                 "/d/a.c\t10\tmain\t3\t/b/x/a.c == 0\n"
                                 "/b/xy/a.c\t11\tmain\t4\tp\n"
                                 "rel.c\t12\tf\t1\tq\n") +
                         section(kUnitB, "/b/x/scheme",
                                 "/d/sub/b.c\t1\tg\t0\n");
  std::optional<PrefixRewrite> rewrite = PrefixRewrite::make("/b/x", "/d");
  DiagnosticList diagnostics;
  size_t count = 0;
  EXPECT_EQ(rewrite_site_files(text, "t.sites", &*rewrite, diagnostics, &count), expected);
  EXPECT_EQ(count, 2u);
  EXPECT_TRUE(diagnostics.items.empty());
}

TEST(RewriteSiteFiles, KeepsLineEndsAndFieldlessLines) {
  std::string text = section(kUnitA, "coverage", "/b/x/a.c\t1\tf\t0\r\n/b/x/only-a-file\n");
  std::string expected = section(kUnitA, "coverage", "/d/a.c\t1\tf\t0\r\n/d/only-a-file\n");
  std::optional<PrefixRewrite> rewrite = PrefixRewrite::make("/b/x", "/d");
  DiagnosticList diagnostics;
  EXPECT_EQ(rewrite_site_files(text, "t.sites", &*rewrite, diagnostics), expected);
  EXPECT_TRUE(diagnostics.items.empty());
}

TEST(RewriteSiteFiles, WithoutRewriteTheTextIsReturnedAsItIs) {
  std::string text = section(kUnitA, "coverage", "/b/x/a.c\t1\tf\t0\n") + section(kUnitB, "data", "");
  DiagnosticList diagnostics;
  size_t count = 7;
  EXPECT_EQ(rewrite_site_files(text, "t.sites", nullptr, diagnostics, &count), text);
  EXPECT_EQ(count, 0u);
  EXPECT_TRUE(diagnostics.items.empty());
}

TEST(RewriteSiteFiles, MalformedSectionsAreReportedAndCopiedUnchanged) {
  // A bad unit signature: the parser reports it (naming the source and line) and skips to the next start tag;
  // the bad section's lines are kept as they were, the good section after it is still rewritten.
  std::string bad = "<sites unit=\"XYZ\" scheme=\"branches\">\n/b/x/a.c\t1\tf\t0\tc\n</sites>\n";
  std::string text = bad + section(kUnitB, "coverage", "/b/x/b.c\t2\tg\t0\n");
  std::string expected = bad + section(kUnitB, "coverage", "/d/b.c\t2\tg\t0\n");
  std::optional<PrefixRewrite> rewrite = PrefixRewrite::make("/b/x", "/d");
  DiagnosticList diagnostics;
  EXPECT_EQ(rewrite_site_files(text, "prog", &*rewrite, diagnostics), expected);
  ASSERT_EQ(diagnostics.error_count(), 1u);
  EXPECT_EQ(diagnostics.items[0].file, "prog");
  EXPECT_EQ(diagnostics.items[0].line, 1u);
}

TEST(RewriteSiteFiles, UnclosedLastSectionIsReported) {
  std::string text = "<sites unit=\"" + std::string(kUnitA) + "\" scheme=\"coverage\">\n/b/x/a.c\t1\tf\t0\n";
  std::optional<PrefixRewrite> rewrite = PrefixRewrite::make("/b/x", "/d");
  DiagnosticList diagnostics;
  std::string out = rewrite_site_files(text, "prog", &*rewrite, diagnostics);
  EXPECT_EQ(out, text);  // not a well-formed section: nothing rewritten, nothing lost
  EXPECT_GE(diagnostics.error_count(), 1u);
}

}  // namespace
}  // namespace sampler::packaging
