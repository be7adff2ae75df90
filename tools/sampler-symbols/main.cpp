// sampler-symbols: symbol files for symbolizing crash stacks by build ID (issue 13).
//
//   sampler-symbols gsym app libplugin.so -o symbols/      # symbols/BUILDID.gsym for each file
//   sampler-symbols lookup symbols/BUILDID.gsym 0x1140     # frames as llvm-symbolizer prints them
//
// The work is in symbols/dwarf_to_gsym.h (DWARF through LLVM's DebugInfo, GSYM as seed 001 lays it out); this is
// options, one library call per file, exit status. Each file written is read back and checked before the next.
#include <array>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "sections/gsym.h"
#include "symbols/dwarf_to_gsym.h"
#include "symbols/symbolize.h"
#include "tool.h"

namespace {

constexpr std::array kOptions = {
    sampler::tool::Option{"output", 'o', "DIR", "write DIR/BUILDID.gsym (default: the current directory)"},
    sampler::tool::Option{"symbfile", 0, nullptr,
                          "also write DIR/BUILDID.ranges.symbfile and DIR/BUILDID.returnpads.symbfile (seed 002)"},
    sampler::tool::Option{"debug-dir", 0, "DIR",
                          "look up separate debug files as DIR/.build-id/xx/rest.debug (default /usr/lib/debug)"},
};

constexpr sampler::tool::Usage kUsage = {
    "sampler-symbols",
    "gsym [-o DIR] [--symbfile] FILE... | lookup GSYM [ADDRESS...]",
    "Write a GSYM symbol file, named by build ID, for each ELF FILE from its DWARF debug information.",
    kOptions,
    "gsym: each FILE (executable or shared library, with DWARF or with a separate debug file found by its build\n"
    "ID) gives DIR/BUILDID.gsym: functions, source files and lines, and inlined calls, which\n"
    "resolve-backtrace --symbols DIR and llvm-gsymutil read. Function symbols without DWARF are kept by name.\n"
    "A file without a build ID, or that cannot be read, gets an error; the other files are still processed.\n"
    "\n"
    "lookup: prints the frames of each hexadecimal ADDRESS (or of each line of standard input) as\n"
    "llvm-symbolizer --no-demangle does, without columns: NAME and FILE:LINE per frame, innermost first.\n",
};

/// sampler-symbols lookup: one GSYM file, addresses from the operands or standard input.
int lookup(const sampler::tool::CommandLine& command, sampler::tool::StderrSink& sink) {
  using namespace sampler;
  if (command.operands.size() < 2) return tool::usage_error(kUsage, "no GSYM file given");
  gsym::Error problem;
  auto file = gsym::MappedFile::open(command.operands[1], problem);
  if (!file) {
    sink.error(command.operands[1], 0, "byte " + std::to_string(problem.offset) + ": " + problem.message);
    return tool::kExitDataError;
  }
  tool::Output output;
  std::string text;
  gsym::LookupResult result;
  gsym::LineTableCache cache;
  auto one = [&](const std::string& address_text) {
    char* end = nullptr;
    const uint64_t address = std::strtoull(address_text.c_str(), &end, 16);
    text.clear();
    const gsym::Found found = file->reader().lookup(address, result, problem, &cache);
    if (found == gsym::Found::kError) {
      sink.error(command.operands[1], 0, "byte " + std::to_string(problem.offset) + ": " + problem.message);
    }
    symbols::append_llvm_style(found == gsym::Found::kYes ? &result : nullptr, text);
    output.write(text);
  };
  if (command.operands.size() > 2) {
    for (size_t i = 2; i < command.operands.size(); ++i) one(command.operands[i]);
  } else {
    for (std::string line; std::getline(std::cin, line);) one(line);
  }
  const bool written = tool::finish_output(output, sink);
  return !written || sink.errors() > 0 ? tool::kExitDataError : tool::kExitSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sampler;
  tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  if (command.operands.empty()) return tool::usage_error(kUsage, "missing the command (gsym)");
  if (command.operands.front() == "lookup") {
    tool::StderrSink sink(kUsage.program);
    return lookup(command, sink);
  }
  if (command.operands.front() != "gsym") {
    return tool::usage_error(kUsage, "unknown command '" + command.operands.front() + "' (known: gsym, lookup)");
  }
  if (command.operands.size() == 1) return tool::usage_error(kUsage, "no FILE given");
  const std::string out_dir = command.value("output").value_or(".");
  std::error_code error;
  if (!std::filesystem::is_directory(out_dir, error)) {
    return tool::usage_error(kUsage, "'" + out_dir + "' is not a directory");
  }
  symbols::ConvertOptions options;
  if (auto dir = command.value("debug-dir")) options.debug_dirs = {*dir};
  options.symbfile = command.has("symbfile");

  tool::StderrSink sink(kUsage.program);
  for (size_t i = 1; i < command.operands.size(); ++i) {
    const std::string written = symbols::convert_to_gsym(command.operands[i], out_dir, options, sink);
    if (written.empty()) continue;
    // Read back what was written: a writer bug shows here, not in a crash report months later.
    gsym::Error problem;
    auto file = gsym::MappedFile::open(written, problem);
    if (!file || !file->reader().verify(problem)) {
      sink.error(written, 0, "byte " + std::to_string(problem.offset) + ": " + problem.message);
    }
  }
  return sink.errors() > 0 ? tool::kExitDataError : tool::kExitSuccess;
}
