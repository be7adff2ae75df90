// Turning main-backtrace subreports into symbolizer markup (docs/formats.md section 3.2, docs/tools.md,
// resolve-backtrace; LLVM's Symbolizer Markup Format, Swift's Compact Backtrace Format).
//
// A main-backtrace body holds, one item per line: the contextual elements ({{{reset}}}, {{{module}}},
// {{{mmap}}}) describing the objects mapped at the crash, plain lines for objects without a build ID, the
// `signal:NUMBER:NAME[:0xFAULT]` line and the `cbf:BASE64` stack; or, in old reports, glibc backtrace_symbols
// lines ("ccrypt[0x804ff1c]", "/lib/libc.so.6(__libc_start_main+0xd3)[0xa94e23]"). The renderer writes what
// `llvm-symbolizer --filter-markup` reads:
//   contextual elements and plain lines   as they were
//   signal:11:SIGSEGV:0x10                "Crashed with signal 11 (SIGSEGV) at address 0x10"
//   cbf:...                               {{{bt:N:0xADDR:pc}}} / {{{bt:N:0xADDR:ra}}}, one line per frame;
//                                         `rep` repeats the frame with the next numbers, `omit` skips numbers
//                                         and says so on a plain line, `trunc` says the stack was truncated
//   legacy backtrace_symbols lines         {{{bt:N:0xADDR}}} (no suffix: the kind is unknown)
// Frames are numbered from 0 for each stack; at most kMaxFramesPerStack are expanded per stack, the rest is
// summarised on one plain line.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"
#include "sections/line_reader.h"

namespace sampler {

/// The most frame lines written for one stack (docs/tools.md).
inline constexpr uint64_t kMaxFramesPerStack = 1000000;

/// Renders main-backtrace bodies line by line. Output goes to `write` in pieces of any size (whole lines in
/// the end); diagnostics go to the sink, naming `source_name` and the line.
class BacktraceRenderer {
 public:
  BacktraceRenderer(std::string source_name, std::function<void(std::string_view)> write, DiagnosticSink& sink);
  ~BacktraceRenderer();  ///< does not flush: call finish()
  BacktraceRenderer(const BacktraceRenderer&) = delete;
  BacktraceRenderer& operator=(const BacktraceRenderer&) = delete;

  /// Starts a new body (a main-backtrace subreport): legacy frame numbers restart from 0.
  void begin_body();
  /// One line of a body, without its line end; `line_number` is its 1-based line in the source.
  void body_line(std::string_view line, uint64_t line_number);
  /// Ends a body. complete is false when the report ended before </report> (a crash cut it short): a cbf line
  /// cut inside a base64 group as the last line of such a body is then a warning, not an error (docs/formats.md 3.3).
  void end_body(bool complete);
  /// Writes everything still buffered; a cut cbf line still pending is treated as cut short by the end of the
  /// input (a warning). Returns true if no error was reported since construction.
  bool finish();

  /// Lowers the per-stack frame limit (tests); at most kMaxFramesPerStack.
  void set_frame_limit(uint64_t limit);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads `input`, either a whole report (only its main-backtrace subreports are rendered; a report cut short
/// gets the reader's warning) or bare main-backtrace bodies as `extract-report main-backtrace` prints them,
/// and renders every body. Returns true if no error was reported.
bool render_backtraces(LineReader& input, const std::function<void(std::string_view)>& write,
                       DiagnosticSink& sink);
/// The same with at most `frame_limit` frame lines per stack (BacktraceRenderer::set_frame_limit): fuzzing and
/// tests, where expanding 10^6 frames per stack would only cost time.
bool render_backtraces(LineReader& input, const std::function<void(std::string_view)>& write,
                       DiagnosticSink& sink, uint64_t frame_limit);

/// A glibc backtrace_symbols line: "NAME[0xADDR]", "NAME(SYMBOL+0xOFF)[0xADDR]" or "NAME(...) [0xADDR]" (newer
/// glibc puts a space before "["). Returns the address, or nullopt if `line` is not such a line.
std::optional<uint64_t> parse_legacy_frame(std::string_view line);

/// The `signal:NUMBER:NAME` or `signal:NUMBER:NAME:0xFAULT` line as a plain human-readable line (without line
/// end), or nullopt if `line` starts with "signal:" but is malformed.
std::optional<std::string> describe_signal_line(std::string_view line);

}  // namespace sampler
