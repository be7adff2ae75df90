// resolve-backtrace: turns the main-backtrace subreport of a crashed run into symbolizer markup for
// `llvm-symbolizer --filter-markup` (docs/tools.md; the Symbolizer Markup and Compact Backtrace Formats).
//
//   resolve-backtrace report | llvm-symbolizer-19 --filter-markup --debug-file-directory=SYMBOLS
//
// The work is in sections/backtrace.h; this is options, one library call, exit status.
#include <optional>
#include <span>

#include "sections/backtrace.h"
#include "sections/input_files.h"
#include "sections/symbolize_markup.h"
#include "symbols/llvm_demangle.h"
#include "tool.h"

namespace {

constexpr std::array kOptions = {
    sampler::tool::Option{"symbols", 0, "DIR",
                          "print symbolized frames from DIR/BUILDID.gsym (sampler-symbols gsym) instead of markup"},
};

constexpr sampler::tool::Usage kUsage = {
    "resolve-backtrace",
    "[FILE]",
    "Write the crash stacks of a report as symbolizer markup for 'llvm-symbolizer --filter-markup'.",
    kOptions,
    "FILE (standard input when absent or '-'): a whole report, or main-backtrace bodies as\n"
    "'extract-report main-backtrace' prints them; plain or gzip-compressed.\n"
    "\n"
    "Output: the module map ({{{reset}}}, {{{module}}}, {{{mmap}}}) as it was, the signal as a plain line, and\n"
    "one {{{bt:N:0xADDRESS:pc|ra}}} line per frame, numbered from 0 for each stack. Old reports' glibc\n"
    "backtrace_symbols lines become {{{bt:N:0xADDRESS}}}. With a symbol directory DIR laid out as\n"
    "DIR/.build-id/xx/rest.debug:\n"
    "  resolve-backtrace report | llvm-symbolizer-19 --filter-markup --debug-file-directory=DIR\n"
    "With --symbols DIR, each frame line is printed as llvm-symbolizer --filter-markup prints it (function,\n"
    "FILE:LINE without column, inlined calls), from DIR/BUILDID.gsym; frames of modules without a GSYM file\n"
    "keep their module and offset.\n",
};

}  // namespace

int main(int argc, char** argv) {
  using namespace sampler;
  tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  if (command.operands.size() > 1) return tool::usage_error(kUsage, "at most one FILE");

  tool::StderrSink sink(kUsage.program);
  std::string name = "<stdin>";
  UniqueFd file;
  if (!command.operands.empty() && command.operands.front() != "-") {
    name = command.operands.front();
    // A report is read as it streams, so a pipe is fine; a device (/dev/zero) would never end, and opening a FIFO
    // must not wait for its writer.
    std::optional<InputFile> input = open_input(name, AcceptedKinds{.pipe = true}, sink);
    if (!input) return tool::kExitDataError;
    file = std::move(input->fd);
  }

  tool::Output output;
  {
    LineReader input(file ? file.get() : 0, name, sink);
    if (auto directory = command.value("symbols")) {
      // Markup goes through the in-process symbolizer instead of straight out.
      GsymDirectory symbols(*directory, sink);
      MarkupSymbolizer symbolizer(symbols, [&output](std::string_view text) { output.write(text); }, sink,
                                  symbols::llvm_demangle);
      render_backtraces(input, [&symbolizer](std::string_view text) { symbolizer.write(text); }, sink);
      symbolizer.finish();
    } else {
      render_backtraces(input, [&output](std::string_view text) { output.write(text); }, sink);
    }
  }
  bool written = tool::finish_output(output, sink);
  return written && sink.errors() == 0 ? tool::kExitSuccess : tool::kExitDataError;
}
