// Rendering main-backtrace bodies as symbolizer markup (sections/backtrace.h): CBF stacks with rep, omit and
// trunc, legacy backtrace_symbols lines, the signal line, context passed through, and malformed input.
#include "sections/backtrace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sections/core/base64.h"
#include "sections/core/cbf.h"

namespace sampler {
namespace {

std::string cbf_line(const std::vector<uint8_t>& bytes) {
  std::string text(base64::encoded_size(bytes.size()), '\0');
  text.resize(base64::encode(bytes.data(), bytes.size(), text.data(), text.size()));
  return "cbf:" + text;
}

struct Rendered {
  std::string out;
  bool ok;
  DiagnosticList diagnostics;
  std::vector<std::string> messages() const {
    std::vector<std::string> out_messages;
    for (const Diagnostic& d : diagnostics.items) out_messages.push_back(format_diagnostic("t", d));
    return out_messages;
  }
};

/// Feeds `lines` as one body (line numbers from 1).
Rendered render_body(const std::vector<std::string>& lines, uint64_t frame_limit = kMaxFramesPerStack) {
  Rendered result;
  BacktraceRenderer renderer("r", [&result](std::string_view text) { result.out += text; }, result.diagnostics);
  renderer.set_frame_limit(frame_limit);
  renderer.begin_body();
  uint64_t number = 0;
  for (const std::string& line : lines) renderer.body_line(line, ++number);
  result.ok = renderer.finish();
  return result;
}

Rendered render_input(const std::string& input) {
  Rendered result;
  LineReader reader(input, "<stdin>", result.diagnostics);
  result.ok = render_backtraces(reader, [&result](std::string_view text) { result.out += text; },
                                result.diagnostics);
  return result;
}

// A 64-bit stack: pc absolute, ra relative +0x10, rep 2, omit 3, ra absolute, trunc.
const std::vector<uint8_t> kStack = {
    0x02,                                                  // version 0, 64-bit
    0x1f, 0x00, 0x00, 0x55, 0x55, 0x55, 0x55, 0x51, 0x31,  // pc absolute, 8 bytes
    0x20, 0x10,                                            // ra relative, 1 byte: +0x10
    0x81,                                                  // rep: 2 more times
    0x42,                                                  // omit 3 frames
    0x2f, 0x00, 0x00, 0x7f, 0xff, 0xf7, 0xa2, 0x9d, 0x90,  // ra absolute, 8 bytes
    0x01,                                                  // trunc
};
const char* const kStackMarkup =
    "{{{bt:0:0x555555555131:pc}}}\n"
    "{{{bt:1:0x555555555141:ra}}}\n"
    "{{{bt:2:0x555555555141:ra}}}\n"
    "{{{bt:3:0x555555555141:ra}}}\n"
    "... 3 frames omitted (#4 to #6) ...\n"
    "{{{bt:7:0x7ffff7a29d90:ra}}}\n"
    "... stack truncated: deeper frames were not recorded ...\n";

TEST(ParseLegacyFrame, Table) {
  struct Case {
    const char* line;
    std::optional<uint64_t> address;
  };
  const Case cases[] = {
      {"ccrypt[0x804ff1c]", 0x804ff1c},
      {"/lib/tls/libc.so.6[0xaa78c8]", 0xaa78c8},
      {"/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]", 0xa94e23},
      {"./prog(main+0x1d) [0x400b1d]", 0x400b1d},
      {"./prog(+0x1139) [0x55555555513a]  ", 0x55555555513a},
      {"a[0XFFFFFFFFFFFFFFFF]", UINT64_MAX},
      {"a[0x0000000000000000001]", 1},
      {"[0x1234]", std::nullopt},
      {"ccrypt", std::nullopt},
      {"ccrypt[0x]", std::nullopt},
      {"ccrypt[0xzz]", std::nullopt},
      {"ccrypt[1234]", std::nullopt},
      {"ccrypt[0x11111111111111111]", std::nullopt},
      {"ccrypt[0x1234] trailing", std::nullopt},
      {"", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(parse_legacy_frame(c.line), c.address) << c.line;
}

TEST(DescribeSignalLine, Table) {
  EXPECT_EQ(describe_signal_line("signal:11:SIGSEGV:0x10"), "Crashed with signal 11 (SIGSEGV) at address 0x10");
  EXPECT_EQ(describe_signal_line("signal:7:SIGBUS:0x7"), "Crashed with signal 7 (SIGBUS) at address 0x07");
  EXPECT_EQ(describe_signal_line("signal:6:SIGABRT"), "Crashed with signal 6 (SIGABRT)");
  for (const char* bad : {"signal:", "signal:11", "signal:11:", "signal:x:SIGSEGV", "signal:11:SIGSEGV:16",
                          "signal:11:SIGSEGV:0x", "signal:11:SIG{SEGV}", "signal:-1:SIGSEGV",
                          "signal:99999999999999999999999:SIGSEGV"}) {
    EXPECT_FALSE(describe_signal_line(bad).has_value()) << bad;
  }
}

TEST(BacktraceRenderer, CbfFramesRepOmitTrunc) {
  Rendered r = render_body({cbf_line(kStack)});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out, kStackMarkup);
  EXPECT_TRUE(r.diagnostics.items.empty());
}

TEST(BacktraceRenderer, ContextPassesThroughAndTheSignalBecomesAPlainLine) {
  Rendered r = render_body({
      "{{{reset}}}",
      "{{{module:0:app:elf:0123456789abcdef}}}",
      "{{{mmap:0x555555554000:0x1000:load:0:r:0x00}}}",
      "{{{mmap:0x555555555000:0x1000:load:0:rx:0x1000}}}",
      "[vdso] 0x7ffff7fc1000-0x7ffff7fc3000 (no build ID)",
      "signal:11:SIGSEGV:0x0",
      cbf_line(kStack),
  });
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out, std::string("{{{reset}}}\n"
                               "{{{module:0:app:elf:0123456789abcdef}}}\n"
                               "{{{mmap:0x555555554000:0x1000:load:0:r:0x00}}}\n"
                               "{{{mmap:0x555555555000:0x1000:load:0:rx:0x1000}}}\n"
                               "[vdso] 0x7ffff7fc1000-0x7ffff7fc3000 (no build ID)\n"
                               "Crashed with signal 11 (SIGSEGV) at address 0x00\n") +
                       kStackMarkup);
}

TEST(BacktraceRenderer, MalformedContextualElementsAreLeftOut) {
  // llvm-symbolizer rejects an empty build ID; other markup and plain text pass through. Colour around a
  // contextual element does not hide it from the check.
  Rendered r = render_body({"{{{reset}}}", "{{{module:1:app:elf:}}}", "{{{mmap:0x1000:0x1000:load:1:rx:0x00}}}",
                            "\033[1m{{{mmap:0x2000:0x1000:load:1:rx:0xg}}}\033[0m",
                            "see {{{module:1:app:elf:00}}} here", "{{{bt:0:0x10}}}"});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.out,
            "{{{reset}}}\n{{{mmap:0x1000:0x1000:load:1:rx:0x00}}}\nsee {{{module:1:app:elf:00}}} here\n"
            "{{{bt:0:0x10}}}\n");
  ASSERT_EQ(r.diagnostics.items.size(), 2u);
  EXPECT_EQ(r.diagnostics.items[0].line, 2u);
  EXPECT_TRUE(r.diagnostics.items[0].message.starts_with("column 21: ")) << r.diagnostics.items[0].message;
  EXPECT_TRUE(r.diagnostics.items[0].message.ends_with("; element left out"));
  EXPECT_EQ(r.diagnostics.items[1].line, 4u);
  EXPECT_EQ(r.diagnostics.items[1].message,
            "column 39: mmap: bad module-relative address: not a hex digit; element left out");
}

// What llvm-symbolizer accepts goes through (compiler-rt's 0x%zx, odd build IDs, extra fields).
TEST(BacktraceRenderer, ContextualElementsAreReadAsLlvmSymbolizerReadsThem) {
  const std::vector<std::string> lines = {"{{{reset:x}}}", "{{{module:0X1:a}b:elf:123:extra}}}",
                                          "{{{mmap:0x7f0000:0x1000:load:0:rx:0x0}}}"};
  Rendered r = render_body(lines);
  EXPECT_TRUE(r.ok) << (r.diagnostics.items.empty() ? "" : r.diagnostics.items[0].message);
  EXPECT_EQ(r.out, lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n");
}

// The lines of an element that spans lines are part of it, not signal, cbf or legacy lines.
TEST(BacktraceRenderer, ElementsThatSpanLinesPassThroughWhole) {
  Rendered r = render_body({"regs {{{hexdict:", "app(main+0x10)[0x7f0010]", "signal:11:SIGSEGV }}} done",
                            "cbf:!!", "app[0x10]"});
  EXPECT_FALSE(r.ok);  // the cbf line after the element is read as one
  EXPECT_EQ(r.out, "regs {{{hexdict:\napp(main+0x10)[0x7f0010]\nsignal:11:SIGSEGV }}} done\n{{{bt:0:0x10}}}\n");
  ASSERT_EQ(r.diagnostics.items.size(), 1u);
  EXPECT_EQ(r.diagnostics.items[0].line, 4u);
  // A new body ends an element left open.
  Rendered again = render_body({"{{{hexdict:", "x"});
  EXPECT_EQ(again.out, "{{{hexdict:\nx\n");
}

// Control characters of the report are shown escaped; the Symbolizer Markup Format's SGR sequences outside elements
// go through for llvm-symbolizer, which interprets them.
TEST(BacktraceRenderer, ControlCharactersAreEscaped) {
  Rendered r = render_body({"signal:11:SIG\033[31mSEGV:0x10", "\033[31mred\033[0m \033[2J\033]0;title",
                            "{{{module:1:\033[31mapp:elf:00}}}", "caf\xc3\xa9 \xe9"});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out,
            "Crashed with signal 11 (SIG\\x1b[31mSEGV) at address 0x10\n"
            "\033[31mred\033[0m \\x1b[2J\\x1b]0;title\n"
            "{{{module:1:\\x1b[31mapp:elf:00}}}\n"
            "caf\xc3\xa9 \\xe9\n");
}

TEST(BacktraceRenderer, EncoderOutputAsTheRuntimeWritesIt) {
  // 32-bit words, async frames print as pc, runs become rep, the capture limit ends in trunc.
  const cbf::Frame frames[] = {
      {cbf::FrameKind::kPc, 0x08048000}, {cbf::FrameKind::kRa, 0x0804ff1c}, {cbf::FrameKind::kRa, 0x0804ff1c},
      {cbf::FrameKind::kRa, 0x0804ff1c}, {cbf::FrameKind::kAsync, 0xffffff00},
  };
  std::vector<uint8_t> bytes(cbf::max_encoded_size(cbf::WordSize::k32, 5));
  bytes.resize(cbf::encode(cbf::WordSize::k32, frames, 5, false, bytes.data(), bytes.size()));
  ASSERT_FALSE(bytes.empty());
  Rendered r = render_body({cbf_line(bytes)});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out,
            "{{{bt:0:0x08048000:pc}}}\n"
            "{{{bt:1:0x0804ff1c:ra}}}\n"
            "{{{bt:2:0x0804ff1c:ra}}}\n"
            "{{{bt:3:0x0804ff1c:ra}}}\n"
            "{{{bt:4:0xffffff00:pc}}}\n");
}

TEST(BacktraceRenderer, FramesPastTheLimitAreSummarisedOnOneLine) {
  // pc, then rep 9 (external count): 10 frames, limit 4.
  std::vector<uint8_t> bytes = {0x02, 0x18, 0x42, 0x88, 0x09, 0x28, 0x44, 0x00};
  Rendered r = render_body({cbf_line(bytes)}, 4);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out,
            "{{{bt:0:0x42:pc}}}\n"
            "{{{bt:1:0x42:pc}}}\n"
            "{{{bt:2:0x42:pc}}}\n"
            "{{{bt:3:0x42:pc}}}\n"
            "... 7 more frames (#4 to #10) not shown: at most 4 frames are expanded per stack ...\n");

  // A huge rep stays cheap: the default limit of 10^6 frames.
  std::vector<uint8_t> huge = {0x02, 0x18, 0x42, 0x8f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x00};
  Rendered h = render_body({cbf_line(huge)});
  EXPECT_TRUE(h.ok);
  size_t lines = std::count(h.out.begin(), h.out.end(), '\n');
  EXPECT_EQ(lines, kMaxFramesPerStack + 1);
  EXPECT_TRUE(h.out.ends_with("{{{bt:999999:0x42:pc}}}\n... 18446744073708551615 more frames (#1000000 to "
                              "#18446744073709551614) not shown: at most 1000000 frames are expanded per "
                              "stack ...\n"))
      << h.out.substr(h.out.size() - 300);
}

TEST(BacktraceRenderer, FrameNumbersPastTwoToTheSixtyFourAreAnError) {
  // pc, then rep 2^64-1: the last frame number would be 2^64.
  std::vector<uint8_t> bytes = {0x02, 0x18, 0x42, 0x8f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00};
  Rendered r = render_body({cbf_line(bytes)}, 2);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.messages(), std::vector<std::string>{"t: 'r':1: error: cbf line: frame numbers pass "
                                                   "18446744073709551615; the stack ends there"});
}

TEST(BacktraceRenderer, MalformedCbfKeepsTheFramesBeforeTheError) {
  // pc 0x42, ra +1, then a reserved opcode at byte 5.
  Rendered r = render_body({cbf_line({0x02, 0x18, 0x42, 0x20, 0x01, 0xf0, 0x00}), "after"});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.out, "{{{bt:0:0x42:pc}}}\n{{{bt:1:0x43:ra}}}\nafter\n");
  ASSERT_EQ(r.diagnostics.items.size(), 1u);
  EXPECT_EQ(r.diagnostics.items[0].line, 1u);
  EXPECT_TRUE(r.diagnostics.items[0].message.starts_with("cbf line: malformed stack at byte 5: "))
      << r.diagnostics.items[0].message;

  Rendered empty = render_body({"cbf:"});
  EXPECT_FALSE(empty.ok);
  EXPECT_EQ(empty.out, "");
}

TEST(BacktraceRenderer, BadBase64KeepsTheWholeQuantaBeforeIt) {
  std::string line = cbf_line(kStack);
  line[4 + 16] = '!';  // the fifth quantum: the first 12 bytes (pc and ra) survive
  Rendered r = render_body({line});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.out, "{{{bt:0:0x555555555131:pc}}}\n{{{bt:1:0x555555555141:ra}}}\n");
  ASSERT_EQ(r.diagnostics.items.size(), 1u);
  const std::string& message = r.diagnostics.items[0].message;
  EXPECT_TRUE(message.starts_with("cbf line: bad base64 at character 21: ")) << message;
  EXPECT_TRUE(message.ends_with("; frames after it are lost")) << message;
}

TEST(BacktraceRenderer, LegacyLinesNumberFromZeroForEachStack) {
  Rendered r = render_body({
      "ccrypt[0x804ff1c]",
      "/lib/tls/libc.so.6[0xaa78c8]",
      "/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]",
      "",
      "ccrypt[0x8049171]",
  });
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out,
            "{{{bt:0:0x0804ff1c}}}\n"
            "{{{bt:1:0xaa78c8}}}\n"
            "{{{bt:2:0xa94e23}}}\n"
            "\n"
            "{{{bt:0:0x08049171}}}\n");
}

TEST(BacktraceRenderer, MalformedSignalLineAndBinaryData) {
  Rendered r = render_body({"signal:SEGV", std::string("\x7f" "ELF\x02\x01", 6), std::string("a\0b", 3), "text"});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.out, "text\n");
  EXPECT_EQ(r.messages(), (std::vector<std::string>{
                              "t: 'r':1: error: malformed signal line (expected signal:NUMBER:NAME or "
                              "signal:NUMBER:NAME:0xADDRESS)",
                              "t: 'r':2: error: binary data in a main-backtrace body; lines of binary data are skipped",
                          }));
}

TEST(RenderBacktraces, WholeReportRendersOnlyMainBacktraceSubreports) {
  std::string input =
      "<report id=\"samples\">\n"
      "<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"returns\">\n"
      "1\t2\t3\n"
      "</samples>\n"
      "</report>\n"
      "<report id=\"main-backtrace\">\n"
      "{{{reset}}}\n"
      "signal:6:SIGABRT\n"
      "ccrypt[0x804ff1c]\n"
      "</report>\n"
      "<report id='main-backtrace'>\n"
      "ccrypt[0x10]\n"
      "</report>\n";
  Rendered r = render_input(input);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out, "{{{reset}}}\nCrashed with signal 6 (SIGABRT)\n{{{bt:0:0x0804ff1c}}}\n{{{bt:0:0x10}}}\n");
  EXPECT_TRUE(r.diagnostics.items.empty());
}

TEST(RenderBacktraces, BareBodiesAsExtractReportPrintsThem) {
  Rendered r = render_input("{{{reset}}}\r\nsignal:11:SIGSEGV:0x10\r\n" + cbf_line(kStack) + "\r\n");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out, std::string("{{{reset}}}\nCrashed with signal 11 (SIGSEGV) at address 0x10\n") + kStackMarkup);
}

TEST(RenderBacktraces, ABinaryFileIsOneErrorAndNoOutput) {
  std::string binary("\x7f" "ELF\x02\x01\x01\0\nsome printable text\n\x01\x02\nmore text ccrypt[0x10]\n", 55);
  Rendered r = render_input(binary);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.messages(), std::vector<std::string>{"t: '<stdin>':1: error: binary data: the input is not a report or "
                                                   "main-backtrace body"});
}

TEST(RenderBacktraces, CutShortReportIsAWarning) {
  Rendered r = render_input("<report id=\"main-backtrace\">\n{{{reset}}}\nsignal:6:SIGABRT\n");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.out, "{{{reset}}}\nCrashed with signal 6 (SIGABRT)\n");
  EXPECT_EQ(r.messages(), std::vector<std::string>{"t: '<stdin>':1: warning: subreport cut short (no closing "
                                                   "</report>); using what is there"});
}

TEST(RenderBacktraces, ACbfLineCutByTheEndOfAReportCutShortIsAWarning) {
  std::string line = cbf_line(kStack);
  std::string cut = line.substr(0, 4 + 18);  // inside the fifth group: pc and ra survive
  const char* frames = "{{{bt:0:0x555555555131:pc}}}\n{{{bt:1:0x555555555141:ra}}}\n";
  Rendered at_end = render_input("<report id=\"main-backtrace\">\n" + cut + "\n");
  EXPECT_TRUE(at_end.ok);
  EXPECT_EQ(at_end.out, frames);
  EXPECT_EQ(at_end.messages(),
            (std::vector<std::string>{
                "t: '<stdin>':2: warning: cbf line cut short by the end of the report; the frames after the cut "
                "are lost",
                "t: '<stdin>':1: warning: subreport cut short (no closing </report>); using what is there"}));

  Rendered bare = render_input(cut);  // bare body: the input ends inside the line
  EXPECT_TRUE(bare.ok);
  EXPECT_EQ(bare.out, frames);

  // Followed by another line, or closed by </report>, the same line is malformed: an error.
  for (const std::string& input : {"<report id=\"main-backtrace\">\n" + cut + "\n</report>\n",
                                   "<report id=\"main-backtrace\">\n" + cut + "\nplain\n", cut + "\nplain\n"}) {
    Rendered r = render_input(input);
    EXPECT_FALSE(r.ok) << input;
    EXPECT_EQ(r.diagnostics.error_count(), 1u) << input;
    EXPECT_TRUE(r.out.starts_with(frames)) << input;
  }
}

TEST(RenderBacktraces, ProblemsWithTheReportStructure) {
  Rendered none = render_input("<report id=\"samples\">\n</report>\n");
  EXPECT_FALSE(none.ok);
  EXPECT_EQ(none.messages(),
            std::vector<std::string>{"t: '<stdin>': error: no main-backtrace subreport in the report"});

  Rendered empty = render_input("");
  EXPECT_FALSE(empty.ok);
  EXPECT_EQ(empty.messages(), std::vector<std::string>{"t: '<stdin>': error: no backtrace in the input (it is empty)"});

  Rendered stray = render_input(
      "<report id=\"main-backtrace\">\nccrypt[0x10]\n</report>\nstray\nmore stray\n</report>\n"
      "<report id=\"main-backtrace\">\n<report id=\"other\">\nx\n");
  EXPECT_FALSE(stray.ok);
  EXPECT_EQ(stray.out, "{{{bt:0:0x10}}}\n");
  EXPECT_EQ(stray.messages(), (std::vector<std::string>{
                                  "t: '<stdin>':4: error: text outside a subreport: stray",
                                  "t: '<stdin>':6: error: </report> without a matching <report>",
                                  "t: '<stdin>':7: error: subreport has no closing </report> before line 8",
                                  "t: '<stdin>':8: warning: subreport cut short (no closing </report>); using what "
                                  "is there",
                              }));
}

}  // namespace
}  // namespace sampler
