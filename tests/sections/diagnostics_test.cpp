// Diagnostics formatting: what every tool prints on stderr.
#include "sections/diagnostics.h"

#include <gtest/gtest.h>

namespace sampler {
namespace {

TEST(FormatDiagnostic, FileAndLine) {
  EXPECT_EQ(format_diagnostic("resolveSamples", {Severity::kError, "app.sites", 12, "no closing tag"}),
            "resolveSamples: 'app.sites':12: error: no closing tag");
}

TEST(FormatDiagnostic, FileWithoutLineIsWarning) {
  EXPECT_EQ(format_diagnostic("extract-section", {Severity::kWarning, "lib.a(x.o)", 0, "no section"}),
            "extract-section: 'lib.a(x.o)': warning: no section");
}

TEST(FormatDiagnostic, NoFile) {
  EXPECT_EQ(format_diagnostic("extract-report", {Severity::kError, "", 0, "no subreport"}),
            "extract-report: error: no subreport");
}

// Bytes from the input (a file name, a value quoted from a report) never reach the terminal as
// control characters.
TEST(FormatDiagnostic, ControlCharactersInTheFileAndTheMessageAreEscaped) {
  EXPECT_EQ(format_diagnostic("resolve-backtrace",
                              {Severity::kError, "crash\033[31m.txt", 3, std::string("bad \aname\0 here\n", 16)}),
            "resolve-backtrace: 'crash\\x1b[31m.txt':3: error: bad \\x07name\\x00 here\\x0a");
}

TEST(EscapeControlCharacters, KeepsTextAndUtf8EscapesTheRest) {
  const std::pair<std::string, std::string> cases[] = {
      {"plain text\twith a tab", "plain text\twith a tab"},
      {"\033]0;title\007", "\\x1b]0;title\\x07"},
      {"del\177", "del\\x7f"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},  // UTF-8 stays
      {"c1 \xc2\x9b csi", "c1 \\xc2\\x9b csi"},              // U+009B, a C1 control character
      {"latin-1 \xe9t\xe9", "latin-1 \\xe9t\\xe9"},          // not UTF-8
      {"overlong \xc0\xaf, surrogate \xed\xa0\x80", "overlong \\xc0\\xaf, surrogate \\xed\\xa0\\x80"},
      {"cut \xe2\x82", "cut \\xe2\\x82"},
      {std::string("nul\0", 4), "nul\\x00"},
  };
  for (const auto& [text, expected] : cases) EXPECT_EQ(escape_control_characters(text), expected) << text;
}

// A field of tab-separated output: the same, and its tab escaped so that it cannot split a column.
TEST(EscapeField, EscapesTheTabToo) {
  EXPECT_EQ(escape_field("a\tb"), "a\\x09b");
  EXPECT_EQ(escape_field("x \033[2J caf\xc3\xa9 \xc2\x9b"), "x \\x1b[2J caf\xc3\xa9 \\xc2\\x9b");
}

TEST(JsonString, QuotesEscapesAndAlwaysValid) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "\"\""},
      {"say \"hi\" \\ bye", "\"say \\\"hi\\\" \\\\ bye\""},
      {"tab\tnl\n\033[31m", "\"tab\\u0009nl\\u000a\\u001b[31m\""},
      {"del\177", "\"del\\u007f\""},
      {"caf\xc3\xa9", "\"caf\xc3\xa9\""},                  // well-formed UTF-8 stays
      {"c1 \xc2\x9b", "\"c1 \\u00c2\\u009b\""},             // a C1 control character: byte by byte
      {"latin-1 \xe9", "\"latin-1 \\u00e9\""},                // not UTF-8
      {std::string("nul\0", 4), "\"nul\\u0000\""},
  };
  for (const auto& [text, expected] : cases) EXPECT_EQ(json_string(text), expected) << text;
}

TEST(DiagnosticCode, DefaultsToGeneralAndIsKept) {
  DiagnosticList list;
  list.error("a", 0, "e");
  list.error(DiagnosticCode::kArchiveMemberNotElf, "lib.a(x.bc)", 0, "archive member is not an ELF file");
  list.warning(DiagnosticCode::kCutShort, "r", 7, "cut short");
  ASSERT_EQ(list.items.size(), 3u);
  EXPECT_EQ(list.items[0].code, DiagnosticCode::kGeneral);
  EXPECT_EQ(list.items[1].code, DiagnosticCode::kArchiveMemberNotElf);
  EXPECT_EQ(list.items[2].code, DiagnosticCode::kCutShort);
  EXPECT_EQ(list.items[2].severity, Severity::kWarning);
}

TEST(DiagnosticList, CountsBySeverity) {
  DiagnosticList list;
  list.warning("a", 1, "w");
  list.error("b", 2, "e");
  list.error("c", 0, "e");
  EXPECT_EQ(list.error_count(), 2u);
  EXPECT_EQ(list.warning_count(), 1u);
}

TEST(CappedSink, PassesTheFirstErrorsThenSaysTheRestAreNotReported) {
  DiagnosticList list;
  CappedSink capped(list);
  for (size_t i = 0; i < CappedSink::kMaxErrors + 50; ++i) capped.error("r", i + 1, "bad");
  capped.warning("r", 0, "still passed");
  EXPECT_EQ(capped.errors(), CappedSink::kMaxErrors + 50);
  ASSERT_EQ(list.items.size(), CappedSink::kMaxErrors + 2);
  EXPECT_EQ(list.items[CappedSink::kMaxErrors].code, DiagnosticCode::kTooManyErrors);
  EXPECT_EQ(list.items[CappedSink::kMaxErrors].line, CappedSink::kMaxErrors + 1);
  EXPECT_EQ(list.items.back().severity, Severity::kWarning);
}

}  // namespace
}  // namespace sampler
