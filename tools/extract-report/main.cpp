// extract-report: writes the body of every subreport with a given id from a feedback report on standard input
// (docs/tools.md; the sampler manual, "Subreport Extraction").
//
//   extract-report samples < report.log | resolveSamples app libplugin.so
//
// The input may be gzip-compressed and have CRLF line ends; a last subreport cut short by a crash is a warning.
// The work is sections/report.h's extract_subreports, which hands over runs of body lines straight from its
// read buffer; they go to standard output in large writes. This is options, one library call, exit status.
#include <span>

#include "sections/report.h"
#include "tool.h"

namespace {

constexpr sampler::tool::Usage kUsage = {
    "extract-report",
    "ID",
    "Write the body of every subreport <report id=\"ID\"> read on standard input, in order, without its tags.",
    std::span<const sampler::tool::Option>(),
    "Standard input: a feedback report, plain or gzip-compressed (recognised by its magic bytes), with LF or\n"
    "CRLF line ends. 'extract-report samples' prints the samples subreport that resolveSamples and\n"
    "resolveTimestamps read; 'extract-report main-backtrace' the crash stack for resolve-backtrace.\n"
    "\n"
    "A last subreport cut short by a crash (no </report>) is written as far as it goes, with a warning; that\n"
    "is not an error. It is an error when no subreport has that id, or when the input is malformed (text\n"
    "outside subreports, bad tags, corrupt gzip data): everything readable is still written.\n",
};

}  // namespace

int main(int argc, char** argv) {
  using namespace sampler;
  tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  if (command.operands.empty()) return tool::usage_error(kUsage, "missing ID operand (the subreport's id)");
  if (command.operands.size() > 1) {
    return tool::usage_error(kUsage, "extra operand '" + command.operands[1] + "' (the report is read on standard input)");
  }
  const std::string& id = command.operands.front();
  if (id.empty()) return tool::usage_error(kUsage, "the subreport id is empty");

  tool::Output output;
  tool::StderrSink sink(kUsage.program, &output);
  LineReader input(0, "<stdin>", sink);
  ExtractResult result = extract_subreports(input, id, [&output](std::string_view text) { output.write(text); });
  if (result.found == 0) sink.error(input.name(), 0, "no subreport with id '" + id + "'");
  const bool written = tool::finish_output(output, sink);
  return written && result.ok && result.found > 0 ? tool::kExitSuccess : tool::kExitDataError;
}
