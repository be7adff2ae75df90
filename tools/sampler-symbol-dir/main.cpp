// sampler-symbol-dir: lays out a symbol directory DIR/.build-id/xx/rest.debug from binaries, separate debug files,
// or directories of them, so that the crash pipeline needs no hand-made directory (docs/tools.md):
//
//   sampler-symbol-dir symbols app libplugin.so /usr/lib/debug
//   resolve-backtrace crash.txt | llvm-symbolizer-19 --filter-markup --debug-file-directory=symbols
//
// The work is in symbols/symbol_dir.h; this is options, one library call, exit status.
#include <array>
#include <string>

#include "symbols/symbol_dir.h"
#include "tool.h"

using namespace sampler;

namespace {

constexpr std::array kOptions = {
    tool::Option{"dry-run", 'n', nullptr, "change nothing; list the entries that would be made"},
    tool::Option{"verbose", 'v', nullptr, "list each entry made"},
};

constexpr tool::Usage kUsage = {
    "sampler-symbol-dir",
    "[OPTIONS] DIR FILE...",
    "Lay out DIR/.build-id/xx/rest.debug for the ELF files among FILE..., for llvm-symbolizer and gdb.",
    kOptions,
    "FILE: executables, shared libraries, separate debug files (objcopy --only-keep-debug, a -debuginfo or\n"
    "-dbgsym package's files), or directories searched recursively for them, such as /usr/lib/debug.\n"
    "For each GNU build ID found, DIR/.build-id/xx/rest.debug (xx the first byte in hex, rest the others) becomes\n"
    "the most useful file with that ID: one with DWARF debug information, else one with a symbol table. It is a\n"
    "hard link, or a copy where none can be made; the files themselves are only read. An entry already there\n"
    "stays if it is as useful or more, and is replaced otherwise. Then:\n"
    "  resolve-backtrace crash.txt | llvm-symbolizer-19 --filter-markup --debug-file-directory=DIR\n"
    "--dry-run and --verbose print one line per entry: FILE<TAB>.build-id/xx/rest.debug.\n"
    "A FILE that is missing, not ELF, or has no build ID is an error; in directories such files are passed over.",
};

}  // namespace

int main(int argc, char** argv) {
  tool::CommandLine command_line = tool::parse_command_line(kUsage, argc, argv);
  if (command_line.exit_status) return *command_line.exit_status;
  if (command_line.operands.empty()) return tool::usage_error(kUsage, "missing DIR and FILE operands");
  if (command_line.operands.size() == 1) return tool::usage_error(kUsage, "no FILE given after DIR");

  symbols::SymbolDirOptions options;
  options.directory = command_line.operands.front();
  options.inputs.assign(command_line.operands.begin() + 1, command_line.operands.end());
  options.dry_run = command_line.has("dry-run");
  if (options.directory.empty()) return tool::usage_error(kUsage, "the directory name is empty");

  const bool list = options.dry_run || command_line.has("verbose");
  tool::Output output;
  tool::StderrSink sink(kUsage.program, &output);
  bool ok = symbols::make_symbol_dir(options, [&](const symbols::SymbolEntry& entry) {
    if (!list) return;
    output.write(entry.source);
    output.write('\t');
    output.write(entry.entry);
    output.write('\n');
  }, sink);
  ok &= tool::finish_output(output, sink);
  return ok ? tool::kExitSuccess : tool::kExitDataError;
}
