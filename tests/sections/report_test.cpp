// Feedback reports: read_report, read_samples and extract_subreports (sections/report.h), on the sampler manual's
// excerpts, entity decoding, CRLF, gzip, damaged reports and binary garbage. Diagnostics are compared exactly.
#include "sections/report.h"

#include <gtest/gtest.h>

#include <random>

#include "text_test_util.h"

namespace sampler {
namespace {

using testing::gzip;
using testing::PipeFeeder;
using testing::render;
using Trace = std::vector<std::string>;
using Messages = std::vector<std::string>;

const std::string kUnitA = "0123456789abcdef0123456789abcdef";
const std::string kUnitB = "fedcba9876543210fedcba9876543210";

// Everything the visitor sees, one string per call.
class ReportTrace : public ReportVisitor {
 public:
  void begin_subreport(std::string_view id, uint64_t line) override {
    trace.push_back("begin " + std::string(id) + " @" + std::to_string(line));
  }
  void body_line(std::string_view line, uint64_t number) override {
    trace.push_back(std::to_string(number) + ": " + std::string(line));
  }
  void end_subreport(bool complete) override { trace.push_back(complete ? "end" : "end (cut short)"); }
  Trace trace;
};

class SamplesTrace : public SamplesVisitor {
 public:
  void begin_section(const SampleSectionHeader& h) override {
    std::string text = h.kind == SampleSectionKind::kSamples ? "samples " : "timestamps ";
    text += std::string(h.unit) + " " + std::string(h.scheme);
    if (!h.when.empty()) text += " when=" + std::string(h.when);
    trace.push_back(text + " @" + std::to_string(h.line));
  }
  void section_line(std::string_view line, uint64_t number) override {
    trace.push_back(std::to_string(number) + ": " + std::string(line));
  }
  void end_section(bool complete) override { trace.push_back(complete ? "end" : "end (incomplete)"); }
  Trace trace;
};

struct Outcome {
  Trace trace;
  Messages messages;
  bool ok;
};

Outcome report_of(std::string_view text) {
  DiagnosticList diagnostics;
  LineReader input(text, "r", diagnostics);
  ReportTrace visitor;
  bool ok = read_report(input, visitor);
  return {visitor.trace, render(diagnostics), ok};
}

Outcome samples_of(std::string_view text) {
  DiagnosticList diagnostics;
  LineReader input(text, "r", diagnostics);
  SamplesTrace visitor;
  bool ok = read_samples(input, visitor);
  return {visitor.trace, render(diagnostics), ok};
}

// The sampler manual's excerpts: a samples subreport, then the legacy backtrace_symbols main-backtrace body.
const std::string kSeedReport =
    "<report id=\"samples\">\n"
    "<samples unit=\"" + kUnitA + "\" scheme=\"branches\">\n"
    "0\t4\n"
    "12\t0\n"
    "</samples>\n"
    "<samples unit=\"" + kUnitB + "\" scheme=\"returns\">\n"
    "1\t0\t3\n"
    "</samples>\n"
    "</report>\n"
    "<report id=\"main-backtrace\">\n"
    "ccrypt[0x804ff1c]\n"
    "/lib/tls/libc.so.6[0xaa78c8]\n"
    "ccrypt[0x804c3df]\n"
    "ccrypt[0x804c80e]\n"
    "ccrypt[0x804a34b]\n"
    "/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]\n"
    "ccrypt[0x8049171]\n"
    "</report>\n";

TEST(ReadReport, SeedExample) {
  Outcome outcome = report_of(kSeedReport);
  EXPECT_TRUE(outcome.ok);
  EXPECT_TRUE(outcome.messages.empty());
  EXPECT_EQ(outcome.trace, (Trace{
                               "begin samples @1",
                               "2: <samples unit=\"" + kUnitA + "\" scheme=\"branches\">",
                               "3: 0\t4",
                               "4: 12\t0",
                               "5: </samples>",
                               "6: <samples unit=\"" + kUnitB + "\" scheme=\"returns\">",
                               "7: 1\t0\t3",
                               "8: </samples>",
                               "end",
                               "begin main-backtrace @10",
                               "11: ccrypt[0x804ff1c]",
                               "12: /lib/tls/libc.so.6[0xaa78c8]",
                               "13: ccrypt[0x804c3df]",
                               "14: ccrypt[0x804c80e]",
                               "15: ccrypt[0x804a34b]",
                               "16: /lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]",
                               "17: ccrypt[0x8049171]",
                               "end",
                           }));
}

TEST(ReadReport, MarkupBacktraceBodyIsNotParsed) {
  Outcome outcome = report_of(
      "<report id=\"main-backtrace\">\n"
      "{{{reset}}}\n"
      "{{{module:0:a.out:elf:0123abcd}}}\n"
      "{{{mmap:0x400000:0x1000:load:0:rx:0x0}}}\n"
      "<not a tag & not XML\n"
      "signal:11:SIGSEGV:0x0\n"
      "cbf:AAEC\n"
      "</report>\n");
  EXPECT_TRUE(outcome.ok);
  EXPECT_TRUE(outcome.messages.empty());
  ASSERT_EQ(outcome.trace.size(), 8u);
  EXPECT_EQ(outcome.trace[4], "5: <not a tag & not XML");
}

TEST(ReadReport, EntitiesAndAttributes) {
  struct Case {
    std::string tag;
    std::string id;
  };
  const std::vector<Case> cases = {
      {"<report id=\"samples\">", "samples"},
      {"<report id='samples'>", "samples"},
      {"<report  id = \"samples\" >", "samples"},
      {"<report\tid=\"samples\">", "samples"},
      {"<report id=\"&#115;amples\">", "samples"},
      {"<report id=\"&#x73;amples\">", "samples"},
      {"<report id=\"a&amp;b&lt;c&gt;d&quot;e&apos;f\">", "a&b<c>d\"e'f"},
      {"<report version=\"2\" id=\"x\" extra='y'>", "x"},  // unknown attributes ignored, any order
      {"<report id=\"x\">  \t", "x"},                       // trailing white space
      // The plain form is read without pugixml (xml_tag.h): its edges mean what XML says.
      {"<report id=\"a>b\" >", "a>b"},
      {"<report other=\"id\" id=\"/\">", "/"},
      {"<report id=\"caf\xc3\xa9\">", "caf\xc3\xa9"},
      {"<report xml:lang=\"en\" id=\"x-1.2\">", "x-1.2"},
  };
  for (const Case& c : cases) {
    Outcome outcome = report_of(c.tag + "\nbody\n</report>\n");
    EXPECT_TRUE(outcome.ok) << c.tag;
    EXPECT_EQ(outcome.trace, (Trace{"begin " + c.id + " @1", "2: body", "end"})) << c.tag;
  }
}

TEST(ReadReport, EndTagVariants) {
  for (const char* end : {"</report>", "</report >", "</report>  "}) {
    Outcome outcome = report_of(std::string("<report id=\"x\">\nb\n") + end + "\n");
    EXPECT_TRUE(outcome.ok) << end;
    EXPECT_EQ(outcome.trace, (Trace{"begin x @1", "2: b", "end"})) << end;
  }
  // Not an end tag: a body line, and the subreport is cut short.
  Outcome outcome = report_of("<report id=\"x\">\n</reports>\n");
  EXPECT_EQ(outcome.trace, (Trace{"begin x @1", "2: </reports>", "end (cut short)"}));
}

TEST(ReadReport, EmptyElementTagIsAnEmptySubreport) {
  Outcome outcome = report_of("<report id=\"x\"/>\n<report id=\"y\">\n</report>\n");
  EXPECT_TRUE(outcome.ok);
  EXPECT_EQ(outcome.trace, (Trace{"begin x @1", "end", "begin y @2", "end"}));
}

TEST(ReadReport, CrlfAndBlankLinesBetweenSubreports) {
  Outcome outcome = report_of("\r\n<report id=\"a\">\r\nx\r\n</report>\r\n\r\n<report id=\"b\">\r\n</report>\r\n");
  EXPECT_TRUE(outcome.ok);
  EXPECT_TRUE(outcome.messages.empty());
  EXPECT_EQ(outcome.trace, (Trace{"begin a @2", "3: x", "end", "begin b @6", "end"}));
}

TEST(ReadReport, GzipReportFromAPipe) {
  PipeFeeder feeder(gzip(kSeedReport), 3);
  DiagnosticList diagnostics;
  LineReader input(feeder.fd(), "<stdin>", diagnostics);
  ReportTrace visitor;
  EXPECT_TRUE(read_report(input, visitor));
  EXPECT_EQ(visitor.trace, report_of(kSeedReport).trace);
}

TEST(ReadReport, TruncatedLastSubreportIsAWarning) {
  DiagnosticList diagnostics;
  LineReader input(std::string_view("<report id=\"samples\">\n<samples unit=\"x\">\n1\t2"), "crash.log", diagnostics);
  ReportTrace visitor;
  EXPECT_TRUE(read_report(input, visitor));  // not an error
  EXPECT_EQ(visitor.trace.back(), "end (cut short)");
  ASSERT_EQ(diagnostics.items.size(), 1u);
  EXPECT_EQ(diagnostics.items[0].severity, Severity::kWarning);
  EXPECT_EQ(diagnostics.items[0].file, "crash.log");
  EXPECT_EQ(diagnostics.items[0].message, "subreport 'samples' starting at line 1 was cut short (no </report>)");
  EXPECT_EQ(diagnostics.items[0].code, DiagnosticCode::kCutShort);  // what a caller tells a crash's cut by
}

// Every structural error, with its line number, and what the visitor still receives.
TEST(ReadReport, ErrorsWithLineNumbers) {
  struct Case {
    const char* name;
    std::string input;
    Trace trace;
    Messages messages;
  };
  const std::vector<Case> cases = {
      {"text before", "junk\nmore junk\n<report id=\"a\">\nx\n</report>\n",
       {"begin a @3", "4: x", "end"},
       {"E:1:text outside a subreport (ignored up to the next <report> tag)"}},
      {"text between", "<report id=\"a\">\n</report>\njunk\n<report id=\"b\">\n</report>\njunk\n",
       {"begin a @1", "end", "begin b @4", "end"},
       {"E:3:text outside a subreport (ignored up to the next <report> tag)",
        "E:6:text outside a subreport (ignored up to the next <report> tag)"}},
      {"stray end tag", "</report>\n<report id=\"a\">\n</report>\n</report>\n",
       {"begin a @2", "end"},
       {"E:1:</report> without a matching <report> tag", "E:4:</report> without a matching <report> tag"}},
      {"nested start tag", "<report id=\"a\">\nx\n<report id=\"b\">\ny\n</report>\n",
       {"begin a @1", "2: x", "end (cut short)", "begin b @3", "4: y", "end"},
       {"E:3:subreport 'a' starting at line 1 has no closing tag before this <report>"}},
      {"missing id", "<report name=\"a\">\nskipped\n</report>\n<report id=\"b\">\n</report>\n",
       {"begin b @4", "end"},
       {"E:1:<report> tag has no id attribute (its subreport is skipped)"}},
      {"unquoted attribute", "<report id=a>\nskipped\n</report>\n",
       {},
       {"E:1:malformed tag: Error parsing element attribute at column 12 (its subreport is skipped)"}},
      {"text after tag", "<report id=\"a\"> trailing\nskipped\n</report>\n",
       {},
       {"E:1:malformed tag: it must be one start tag alone on its line (its subreport is skipped)"}},
      {"two tags on a line", "<report id=\"a\"><x>\n</report>\n",
       {},
       {"E:1:malformed tag: Start-end tags mismatch at column 19 (its subreport is skipped)"}},
      {"unclosed quote", "<report id=\"a>\n</report>\n",
       {},
       {"E:1:malformed tag: Error parsing element attribute at column 13 (its subreport is skipped)"}},
      {"nul in tag", std::string("<report id=\"a\0\">\n</report>\n", 26),
       {},
       {"E:1:malformed tag: it contains a NUL byte at column 14 (its subreport is skipped)"}},
      // What pugixml lets pass but XML forbids is an error naming the column.
      {"duplicated attribute", "<report id=\"a\" id=\"b\">\nskipped\n</report>\n<report id=\"c\">\n</report>\n",
       {"begin c @4", "end"},
       {"E:1:malformed tag: duplicate attribute 'id' at column 16 (its subreport is skipped)"}},
      {"reference to NUL", "<report id=\"a&#x0;b\">\nskipped\n</report>\n",
       {},
       {"E:1:malformed tag: character reference '&#x0;' at column 14 names a character XML does not allow (its "
        "subreport is skipped)"}},
      {"reference to a control character", "<report id=\"&#27;[31m\">\n</report>\n",
       {},
       {"E:1:malformed tag: character reference '&#27;' at column 13 names a character XML does not allow (its "
        "subreport is skipped)"}},
      {"raw control character", "<report id=\"\033[31m\">\n</report>\n",
       {},
       {"E:1:malformed tag: control character \\x1b at column 13 (its subreport is skipped)"}},
      {"cut short after error", "junk\n<report id=\"a\">\nx\n",
       {"begin a @2", "3: x", "end (cut short)"},
       {"E:1:text outside a subreport (ignored up to the next <report> tag)",
        "W:0:subreport 'a' starting at line 2 was cut short (no </report>)"}},
      {"id needing quotes in messages", "<report id=\"a&#9;b\">\n<report id=\"c\">\n</report>\n",
       {"begin a\tb @1", "end (cut short)", "begin c @2", "end"},
       {"E:2:subreport 'a\\x09b' starting at line 1 has no closing tag before this <report>"}},
  };
  for (const Case& c : cases) {
    Outcome outcome = report_of(c.input);
    EXPECT_EQ(outcome.trace, c.trace) << c.name;
    EXPECT_EQ(outcome.messages, c.messages) << c.name;
    bool has_error = false;
    for (const std::string& m : c.messages) has_error |= m[0] == 'E';
    EXPECT_EQ(outcome.ok, !has_error) << c.name;
  }
}

TEST(ReadReport, TooManyErrorsAreCapped) {
  std::string input;
  for (int i = 0; i < 250; ++i) input += "</report>\n";
  input += "<report id=\"after\">\nstill read\n</report>\n";
  Outcome outcome = report_of(input);
  EXPECT_FALSE(outcome.ok);
  ASSERT_EQ(outcome.messages.size(), 101u);
  EXPECT_EQ(outcome.messages[99], "E:100:</report> without a matching <report> tag");
  EXPECT_EQ(outcome.messages[100],
            "E:101:too many errors (100); the rest of this input is still read, but its errors are not reported");
  EXPECT_EQ(outcome.trace, (Trace{"begin after @251", "252: still read", "end"}));
}

TEST(ReadReport, BinaryGarbageNeverCrashes) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    std::string data = testing::random_bytes(4u << 20, seed);
    // Sprinkle tag starts so that the tag paths get garbage too.
    std::mt19937 generator(seed);
    for (int i = 0; i < 2000; ++i) {
      size_t at = generator() % (data.size() - 20);
      static const char* const kPieces[] = {"\n<report id=\"", "\n</report>\n", "\n<report ", "\n<samples "};
      std::string piece = kPieces[generator() % 4];
      data.replace(at, piece.size(), piece);
    }
    DiagnosticList diagnostics;
    LineReader input(std::string_view(data), "garbage", diagnostics);
    ReportTrace visitor;
    read_report(input, visitor);
    EXPECT_LE(diagnostics.error_count(), 101u);
    DiagnosticList samples_diagnostics;
    LineReader again(std::string_view(data), "garbage", samples_diagnostics);
    SamplesTrace samples;
    read_samples(again, samples);
    EXPECT_LE(samples_diagnostics.error_count(), 101u);
  }
}

// ---- read_samples

const std::string kTimestamps = "<timestamps unit=\"" + kUnitA + "\" scheme=\"branches\" when=\"first\">\n"
                                "17\n"
                                "0\n"
                                "</timestamps>\n";

TEST(ReadSamples, WholeReportReadsOnlySamplesSubreports) {
  std::string input = "<report id=\"other\">\n<samples unit=\"" + kUnitB + "\" scheme=\"x\">\n9\n</samples>\n</report>\n" +
                      kSeedReport;
  Outcome outcome = samples_of(input);
  EXPECT_TRUE(outcome.ok);
  EXPECT_TRUE(outcome.messages.empty());
  EXPECT_EQ(outcome.trace, (Trace{"samples " + kUnitA + " branches @7", "8: 0\t4", "9: 12\t0", "end",
                                  "samples " + kUnitB + " returns @11", "12: 1\t0\t3", "end"}));
}

TEST(ReadSamples, BareSubreportAsExtractReportPrintsIt) {
  std::string input = "<samples unit=\"" + kUnitA + "\" scheme=\"branches\">\n0\t4\n</samples>\n" + kTimestamps;
  Outcome outcome = samples_of(input);
  EXPECT_TRUE(outcome.ok);
  EXPECT_TRUE(outcome.messages.empty());
  EXPECT_EQ(outcome.trace, (Trace{"samples " + kUnitA + " branches @1", "2: 0\t4", "end",
                                  "timestamps " + kUnitA + " branches when=first @4", "5: 17", "6: 0", "end"}));
}

TEST(ReadSamples, HeaderAttributes) {
  struct Case {
    std::string tag;
    std::string header;
  };
  const std::vector<Case> cases = {
      {"<samples scheme=\"branches\" unit=\"" + kUnitA + "\">", "samples " + kUnitA + " branches @1"},
      {"<samples unit='" + kUnitA + "' scheme='float-kinds' x=\"1\">", "samples " + kUnitA + " float-kinds @1"},
      {"<samples unit=\"&#x30;123456789abcdef0123456789abcdef\" scheme=\"a&amp;b\">", "samples " + kUnitA + " a&b @1"},
      {"<timestamps when=\"last\" scheme=\"returns\" unit=\"" + kUnitB + "\">",
       "timestamps " + kUnitB + " returns when=last @1"},
  };
  for (const Case& c : cases) {
    bool timestamps = c.tag.rfind("<timestamps", 0) == 0;
    Outcome outcome = samples_of(c.tag + "\n5\n" + (timestamps ? "</timestamps>\n" : "</samples>\n"));
    EXPECT_TRUE(outcome.ok) << c.tag;
    EXPECT_EQ(outcome.trace, (Trace{c.header, "2: 5", "end"})) << c.tag;
  }
}

TEST(ReadSamples, CrlfAndGzip) {
  std::string crlf;
  for (char c : kSeedReport) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  Outcome plain = samples_of(kSeedReport);
  EXPECT_EQ(samples_of(crlf).trace, plain.trace);
  std::string compressed = gzip(crlf);
  Outcome zipped = samples_of(compressed);
  EXPECT_TRUE(zipped.ok);
  EXPECT_EQ(zipped.trace, plain.trace);
}

TEST(ReadSamples, CutShortInsideASection) {
  std::string input = "<report id=\"samples\">\n<samples unit=\"" + kUnitA + "\" scheme=\"branches\">\n1\t2\n3";
  Outcome outcome = samples_of(input);
  EXPECT_TRUE(outcome.ok);
  EXPECT_EQ(outcome.trace, (Trace{"samples " + kUnitA + " branches @2", "3: 1\t2", "4: 3", "end (incomplete)"}));
  EXPECT_EQ(outcome.messages, Messages{"W:0:subreport 'samples' starting at line 1 was cut short (no </report>)"});
  // A bare subreport cut short.
  outcome = samples_of("<samples unit=\"" + kUnitA + "\" scheme=\"branches\">\n1\t2\n");
  EXPECT_TRUE(outcome.ok);
  EXPECT_EQ(outcome.trace, (Trace{"samples " + kUnitA + " branches @1", "2: 1\t2", "end (incomplete)"}));
  EXPECT_EQ(outcome.messages, Messages{"W:0:samples section starting at line 1 was cut short (no end tag)"});
}

// read_report with a samples visitor: one pass; a samples subreport is read as a bare samples body, with the
// report's line numbers, and only its begin and end go to the report visitor.
TEST(ReadReportWithSamples, OnePassWithTheReportsLineNumbers) {
  auto both_of = [](std::string_view text, Trace& samples_trace) {
    DiagnosticList diagnostics;
    LineReader input(text, "r", diagnostics);
    ReportTrace visitor;
    SamplesTrace samples;
    bool ok = read_report(input, visitor, samples);
    samples_trace = samples.trace;
    return Outcome{visitor.trace, render(diagnostics), ok};
  };
  std::string input = "<report id=\"other\">\nx\n</report>\n<report id=\"samples\">\njunk\n"
                      "<samples unit=\"" + kUnitA + "\" scheme=\"branches\">\n1\t2\n</samples>\n\n"
                      "<samples unit=\"" + kUnitB + "\" scheme=\"returns\">\n0\t0\t1\n</report>\n";
  Trace samples;
  Outcome outcome = both_of(input, samples);
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.trace, (Trace{"begin other @1", "2: x", "end", "begin samples @4", "end"}));
  EXPECT_EQ(samples, (Trace{"samples " + kUnitA + " branches @6", "7: 1\t2", "end", "samples " + kUnitB +
                            " returns @10", "11: 0\t0\t1", "end (incomplete)"}));
  EXPECT_EQ(outcome.messages,
            (Messages{"E:5:text outside a samples or timestamps section (ignored up to the next one)",
                      "W:0:samples section starting at line 10 was cut short (no end tag)"}));
  // Cut short inside a section by a crash: two warnings, what is there is delivered.
  outcome = both_of("<report id=\"samples\">\n<samples unit=\"" + kUnitA + "\" scheme=\"branches\">\n1\t2\n",
                    samples);
  EXPECT_TRUE(outcome.ok);
  EXPECT_EQ(outcome.trace, (Trace{"begin samples @1", "end (cut short)"}));
  EXPECT_EQ(samples, (Trace{"samples " + kUnitA + " branches @2", "3: 1\t2", "end (incomplete)"}));
  EXPECT_EQ(outcome.messages, (Messages{"W:0:subreport 'samples' starting at line 1 was cut short (no </report>)",
                                        "W:0:samples section starting at line 2 was cut short (no end tag)"}));
}

TEST(ReadSamples, ErrorsWithLineNumbers) {
  const std::string open_a = "<samples unit=\"" + kUnitA + "\" scheme=\"branches\">\n";
  const std::string header_a = "samples " + kUnitA + " branches";
  struct Case {
    const char* name;
    std::string input;
    Trace trace;
    Messages messages;
  };
  const std::vector<Case> cases = {
      {"missing unit", "<samples scheme=\"branches\">\n1\n</samples>\n" + open_a + "2\n</samples>\n",
       {header_a + " @4", "5: 2", "end"},
       {"E:1:<samples> tag has no unit attribute (its section is skipped)"}},
      {"missing scheme", "<samples unit=\"" + kUnitA + "\">\n1\n</samples>\n",
       {},
       {"E:1:<samples> tag has no scheme attribute (its section is skipped)"}},
      {"empty scheme", "<samples unit=\"" + kUnitA + "\" scheme=\"\">\n1\n</samples>\n",
       {},
       {"E:1:<samples> tag has an empty scheme (its section is skipped)"}},
      {"upper-case unit", "x\n<samples unit=\"0123456789ABCDEF0123456789abcdef\" scheme=\"b\">\n1\n</samples>\n",
       {},
       {"E:1:text outside a subreport (ignored up to the next <report> tag)",
        "E:2:unit \"0123456789ABCDEF0123456789abcdef\" is not 32 lower-case hexadecimal digits (its section is "
        "skipped)"}},
      {"short unit", "<samples unit=\"0123\" scheme=\"b\">\n</samples>\n",
       {},
       {"E:1:unit \"0123\" is not 32 lower-case hexadecimal digits (its section is skipped)"}},
      {"timestamps without when", "<timestamps unit=\"" + kUnitA + "\" scheme=\"b\">\n1\n</timestamps>\n",
       {},
       {"E:1:<timestamps> tag has no when attribute (its section is skipped)"}},
      {"bad when", "<timestamps unit=\"" + kUnitA + "\" scheme=\"b\" when=\"middle\">\n1\n</timestamps>\n",
       {},
       {"E:1:when=\"middle\" is neither \"first\" nor \"last\" (its section is skipped)"}},
      {"mismatched end tag", open_a + "1\n</timestamps>\n",
       {header_a + " @1", "2: 1", "end (incomplete)"},
       {"E:3:</timestamps> does not match the <samples> section starting at line 1"}},
      {"stray end tag", "</samples>\n" + open_a + "</samples>\n",
       {header_a + " @2", "end"},
       {"E:1:</samples> without a matching start tag"}},
      {"no end tag before next section", open_a + "1\n" + open_a + "2\n</samples>\n",
       {header_a + " @1", "2: 1", "end (incomplete)", header_a + " @3", "4: 2", "end"},
       {"E:3:<samples> section starting at line 1 has no end tag before this <samples>"}},
      {"no end tag before </report>", "<report id=\"samples\">\n" + open_a + "1\n</report>\n",
       {header_a + " @2", "3: 1", "end (incomplete)"},
       {"E:2:<samples> section starting at line 2 has no end tag before </report>"}},
      {"no end tag before <report>", open_a + "1\n<report id=\"samples\">\n</report>\n",
       {header_a + " @1", "2: 1", "end (incomplete)"},
       {"E:3:<samples> section starting at line 1 has no end tag before this <report>"}},
      {"text outside a section in a samples report",
       "<report id=\"samples\">\njunk\njunk\n" + open_a + "</samples>\nmore\n</report>\n",
       {header_a + " @4", "end"},
       {"E:2:text outside a samples or timestamps section (ignored up to the next one)",
        "E:6:text outside a samples or timestamps section (ignored up to the next one)"}},
      {"malformed section tag", "<samples unit=\"" + kUnitA + "\" scheme=\"b\"\n1\n</samples>\n",
       {},
       {"E:1:malformed tag: it must be one start tag alone on its line (its section is skipped)"}},
      {"line starting with < inside a section", open_a + "<3\n</samples>\n",
       {header_a + " @1", "2: <3", "end"},
       {}},
  };
  for (const Case& c : cases) {
    Outcome outcome = samples_of(c.input);
    EXPECT_EQ(outcome.trace, c.trace) << c.name;
    EXPECT_EQ(outcome.messages, c.messages) << c.name;
    EXPECT_EQ(outcome.ok, c.messages.empty()) << c.name;
  }
}

// ---- bulk delivery: runs of lines in one call, the same lines whatever the buffer size

class BulkSamples : public SamplesVisitor {
 public:
  void begin_section(const SampleSectionHeader& h) override { trace.push_back("begin @" + std::to_string(h.line)); }
  void section_lines(std::string_view lines, uint64_t first) override {
    trace.push_back("run @" + std::to_string(first) + ": " + std::string(lines));
  }
  void section_line(std::string_view line, uint64_t number) override {
    trace.push_back("line @" + std::to_string(number) + ": " + std::string(line));
  }
  void end_section(bool complete) override { trace.push_back(complete ? "end" : "end (incomplete)"); }
  Trace trace;
};

TEST(ReadSamples, RunsOfLinesComeInOneCall) {
  const std::string input = "<samples unit=\"" + kUnitA + "\" scheme=\"returns\">\r\n1\t2\t3\r\n4\t5\t6\r\n<7\r\n"
                            "8\t9\t10\r\n</samples>\r\n<samples unit=\"" + kUnitA + "\" scheme=\"b\">\n11\n12";
  DiagnosticList diagnostics;
  LineReader reader(std::string_view(input), "r", diagnostics);
  BulkSamples visitor;
  EXPECT_TRUE(read_samples(reader, visitor));
  EXPECT_EQ(visitor.trace, (Trace{"begin @1", "run @2: 1\t2\t3\r\n4\t5\t6\r\n", "line @4: <7", "run @5: 8\t9\t10\r\n",
                                  "end", "begin @7", "run @8: 11\n", "line @9: 12", "end (incomplete)"}));
}

class BulkReport : public ReportVisitor {
 public:
  void body_lines(std::string_view lines, uint64_t first) override {
    trace.push_back("run @" + std::to_string(first) + ": " + std::string(lines));
  }
  void body_line(std::string_view line, uint64_t number) override {
    trace.push_back("line @" + std::to_string(number) + ": " + std::string(line));
  }
  Trace trace;
};

TEST(ReadReport, RunsOfLinesComeInOneCall) {
  DiagnosticList diagnostics;
  LineReader reader(std::string_view("<report id=\"a\">\nx\ny\n<z\n</report>\n"), "r", diagnostics);
  BulkReport visitor;
  EXPECT_TRUE(read_report(reader, visitor));
  EXPECT_EQ(visitor.trace, (Trace{"run @2: x\ny\n", "line @4: <z"}));
}

// Random reports read with every buffer size give the same trace and diagnostics (block boundaries fall
// everywhere, down to one line per block).
TEST(ReadReport, SameResultAtEveryBufferSize) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::string text;
    std::mt19937 generator(seed);
    static const char* const kLines[] = {
        "<report id=\"samples\">", "<report id=\"other\">", "</report>", "<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"s\">",
        "</samples>", "<timestamps unit=\"0123456789abcdef0123456789abcdef\" scheme=\"s\" when=\"last\">", "</timestamps>",
        "1\t2", "3", "", "<4", "junk", "<samples unit=\"bad\" scheme=\"s\">", "<report id=x>"};
    int count = static_cast<int>(generator() % 150);
    for (int i = 0; i < count; ++i) {
      text += kLines[generator() % (sizeof kLines / sizeof kLines[0])];
      text += generator() % 4 == 0 ? "\r\n" : "\n";
    }
    if (generator() % 2 == 0) text += "5";
    Outcome reference = report_of(text);
    Outcome samples_reference = samples_of(text);
    for (size_t read_size : {size_t{1}, size_t{2}, size_t{9}, size_t{100}}) {
      DiagnosticList diagnostics;
      PipeFeeder feeder(text, read_size);
      LineReader input(feeder.fd(), "r", diagnostics);
      input.set_limits(LineReader::kMaxLineLength, read_size);
      ReportTrace visitor;
      EXPECT_EQ(read_report(input, visitor), reference.ok);
      EXPECT_EQ(visitor.trace, reference.trace) << "seed " << seed << " read size " << read_size;
      EXPECT_EQ(render(diagnostics), reference.messages) << "seed " << seed << " read size " << read_size;

      DiagnosticList samples_diagnostics;
      LineReader again(std::string_view(text), "r", samples_diagnostics);
      again.set_limits(LineReader::kMaxLineLength, read_size);
      SamplesTrace samples;
      EXPECT_EQ(read_samples(again, samples), samples_reference.ok);
      EXPECT_EQ(samples.trace, samples_reference.trace) << "seed " << seed << " read size " << read_size;
      EXPECT_EQ(render(samples_diagnostics), samples_reference.messages) << "seed " << seed;
    }
  }
}

// ---- extract_subreports

struct Extracted {
  std::string out;
  uint64_t found;
  bool ok;
  Messages messages;
  size_t largest_piece = 0;
};

Extracted extract(const std::string& data, std::string_view id, bool pipe = false, size_t read_size = 0) {
  Extracted result;
  DiagnosticList diagnostics;
  auto collect = [&result](std::string_view piece) {
    result.out += piece;
    result.largest_piece = std::max(result.largest_piece, piece.size());
  };
  ExtractResult r;
  if (pipe) {
    PipeFeeder feeder(data, read_size != 0 ? read_size : 65536);
    LineReader input(feeder.fd(), "<stdin>", diagnostics);
    if (read_size != 0) input.set_limits(LineReader::kMaxLineLength, read_size);
    r = extract_subreports(input, id, collect);
  } else {
    LineReader input(std::string_view(data), "<stdin>", diagnostics);
    if (read_size != 0) input.set_limits(LineReader::kMaxLineLength, read_size);
    r = extract_subreports(input, id, collect);
  }
  result.found = r.found;
  result.ok = r.ok;
  result.messages = render(diagnostics);
  return result;
}

TEST(ExtractSubreports, SeedExample) {
  Extracted samples = extract(kSeedReport, "samples");
  EXPECT_EQ(samples.found, 1u);
  EXPECT_TRUE(samples.ok);
  EXPECT_EQ(samples.out, "<samples unit=\"" + kUnitA + "\" scheme=\"branches\">\n0\t4\n12\t0\n</samples>\n"
                         "<samples unit=\"" + kUnitB + "\" scheme=\"returns\">\n1\t0\t3\n</samples>\n");
  Extracted backtrace = extract(kSeedReport, "main-backtrace");
  EXPECT_EQ(backtrace.found, 1u);
  EXPECT_EQ(backtrace.out.substr(0, 18), "ccrypt[0x804ff1c]\n");
  Extracted none = extract(kSeedReport, "nothing");
  EXPECT_EQ(none.found, 0u);
  EXPECT_TRUE(none.ok);
  EXPECT_EQ(none.out, "");
}

TEST(ExtractSubreports, EveryMatchInOrderCrlfAndCutShort) {
  std::string input = "<report id=\"x\">\r\none\r\n</report>\r\n<report id=\"y\">\r\nno\r\n</report>\r\n"
                      "<report id=\"x\">\r\ntwo\r\n<three\r\nfour";
  Extracted x = extract(input, "x");
  EXPECT_EQ(x.found, 2u);
  EXPECT_TRUE(x.ok);
  EXPECT_EQ(x.out, "one\ntwo\n<three\nfour\n");
  EXPECT_EQ(x.messages, Messages{"W:0:subreport 'x' starting at line 7 was cut short (no </report>)"});
}

TEST(ExtractSubreports, GzipAndErrors) {
  std::string input = "junk\n<report id=\"x\">\na\n<report id=\"x\">\nb\n</report>\n";
  Extracted x = extract(gzip(input), "x", true);
  EXPECT_EQ(x.found, 2u);
  EXPECT_FALSE(x.ok);
  EXPECT_EQ(x.out, "a\nb\n");
  EXPECT_EQ(x.messages, (Messages{"E:1:text outside a subreport (ignored up to the next <report> tag)",
                                  "E:4:subreport 'x' starting at line 2 has no closing tag before this <report>"}));
}

TEST(ExtractSubreports, BigBodiesGoOutInBigPieces) {
  std::string input = "<report id=\"samples\">\n";
  std::string body;
  for (int i = 0; i < 200000; ++i) body += std::to_string(i) + "\t0\n";
  input += body + "</report>\n";
  Extracted x = extract(input, "samples", true);
  EXPECT_TRUE(x.out == body);
  EXPECT_GT(x.largest_piece, 60000u);
}

// A random report with every kind of line, extracted through every buffer size: the output and the
// diagnostics equal what read_report's visitor sees, line for line.
std::string random_report(uint32_t seed) {
  std::mt19937 generator(seed);
  static const char* const kLines[] = {
      "<report id=\"samples\">", "<report id=\"main-backtrace\">", "<report id=\"x\"/>", "</report>", "</report >",
      "<report id=bad>", "<report>", "<samples unit=\"u\">", "1\t2\t3", "", "<", "<r", "{{{reset}}}",
      "ccrypt[0x804ff1c]", "junk", "</report> trailing", "<report id=\"samples\" >", "12345678901234567890",
  };
  std::string text;
  int lines = static_cast<int>(generator() % 200);
  for (int i = 0; i < lines; ++i) {
    text += kLines[generator() % (sizeof kLines / sizeof kLines[0])];
    text += generator() % 5 == 0 ? "\r\n" : "\n";
  }
  if (generator() % 3 == 0) text += "last line without newline";
  return text;
}

class BodyCollector : public ReportVisitor {
 public:
  explicit BodyCollector(std::string id) : id_(std::move(id)) {}
  void begin_subreport(std::string_view id, uint64_t) override {
    target_ = id == id_;
    found += target_;
  }
  void body_line(std::string_view line, uint64_t) override {
    if (target_) {
      out += line;
      out += '\n';
    }
  }
  void end_subreport(bool) override { target_ = false; }
  std::string out;
  uint64_t found = 0;

 private:
  std::string id_;
  bool target_ = false;
};

TEST(ExtractSubreports, AgreesWithReadReport) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::string text = random_report(seed);
    for (const char* id : {"samples", "main-backtrace", "x"}) {
      DiagnosticList diagnostics;
      LineReader input(std::string_view(text), "<stdin>", diagnostics);
      BodyCollector collector(id);
      bool ok = read_report(input, collector);
      for (size_t read_size : {size_t{1}, size_t{5}, size_t{64}, size_t{0}}) {
        Extracted x = extract(text, id, seed % 2 == 0, read_size);
        EXPECT_EQ(x.out, collector.out) << "seed " << seed << " id " << id << " read size " << read_size;
        EXPECT_EQ(x.found, collector.found) << "seed " << seed;
        EXPECT_EQ(x.ok, ok) << "seed " << seed;
        EXPECT_EQ(x.messages, render(diagnostics)) << "seed " << seed << " read size " << read_size;
      }
    }
  }
}

}  // namespace
}  // namespace sampler
