// sampler-symbols: symbol files for symbolizing crash stacks by build ID.
//
//   sampler-symbols gsym app libplugin.so -o symbols/      # symbols/BUILDID.gsym for each file
//   sampler-symbols lookup symbols/BUILDID.gsym 0x1140     # frames as llvm-symbolizer prints them
//   sampler-symbols push --url URL --api-key KEY app       # upload to a collector (the symbfile upload API)
//
// Two executables: this one does `lookup` (the GSYM reader of sections/ alone) and runs sampler-symbols-convert,
// installed beside it, for `gsym` and `push`, which read DWARF through libLLVM. Loading and relocating libLLVM.so
// costs as much as thousands of lookups: a lookup process must not pay for it (the figures: docs/decisions.md).
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sections/gsym.h"
#include "sections/line_reader.h"
#include "symbols/symbolize.h"
#include "tool.h"
#include "usage.h"

namespace {

using sampler::symbols_tool::kUsage;

/// An address as strtoull(text, 16) reads it (llvm-symbolizer's input is hexadecimal, "0x" optional): "0x" and
/// hex digits, the usual line, are read in place; anything else through strtoull on a terminated `copy`.
uint64_t parse_address(std::string_view text, std::string& copy) {
  if (text.size() > 2 && text.size() <= 18 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data() + 2, text.data() + text.size(), value, 16);
    if (error == std::errc() && end == text.data() + text.size()) return value;
  }
  copy.assign(text);
  return std::strtoull(copy.c_str(), nullptr, 16);
}

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
  // Frames are appended to one text, written in blocks of about 1 MiB (each write bypasses Output's buffer).
  tool::Output output;
  std::string text;
  text.reserve(2u << 20);
  gsym::LookupResult result;
  gsym::LineTableCache cache;
  std::string copy;
  auto one = [&](std::string_view address_text) {
    const gsym::Found found = file->reader().lookup(parse_address(address_text, copy), result, problem, &cache);
    if (found == gsym::Found::kError) {
      output.write(text);  // what came before it, before the message
      text.clear();
      output.flush();
      sink.error(command.operands[1], 0, "byte " + std::to_string(problem.offset) + ": " + problem.message);
    }
    symbols::append_llvm_style(found == gsym::Found::kYes ? &result : nullptr, text);
    if (text.size() >= (1u << 20)) {
      output.write(text);
      text.clear();
    }
  };
  if (command.operands.size() > 2) {
    for (size_t i = 2; i < command.operands.size(); ++i) one(command.operands[i]);
  } else {
    // Read in large blocks (iostreams' getline read a character at a time).
    LineReader input(0, "<stdin>", sink);
    for (std::string_view view; input.next(view);) one(view);
  }
  output.write(text);
  const bool written = tool::finish_output(output, sink);
  return !written || sink.errors() > 0 ? tool::kExitDataError : tool::kExitSuccess;
}

/// Runs sampler-symbols-convert, from this executable's directory, with the same arguments; returns only if it
/// cannot be run.
int run_converter(char** argv) {
  using namespace sampler;
  tool::StderrSink sink(kUsage.program);
  std::string self(4096, '\0');
  const ssize_t length = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (length <= 0) {
    sink.error("/proc/self/exe", 0, std::string("cannot find this executable's directory: ") + std::strerror(errno));
    return tool::kExitDataError;
  }
  self.resize(static_cast<size_t>(length));
  const std::string converter = self.substr(0, self.rfind('/') + 1) + "sampler-symbols-convert";
  std::vector<char*> args = {const_cast<char*>(converter.c_str())};
  for (char** arg = argv + 1; *arg != nullptr; ++arg) args.push_back(*arg);
  args.push_back(nullptr);
  execv(converter.c_str(), args.data());
  sink.error(converter, 0, std::string("cannot run it (gsym and push need it): ") + std::strerror(errno));
  return tool::kExitDataError;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sampler;
  tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  if (command.operands.empty()) return tool::usage_error(kUsage, "missing the command (gsym)");
  const std::string& name = command.operands.front();
  if (name == "lookup") {
    tool::StderrSink sink(kUsage.program);
    return lookup(command, sink);
  }
  if (name == "gsym" || name == "push") return run_converter(argv);
  return tool::usage_error(kUsage, "unknown command '" + name + "' (known: gsym, lookup, push)");
}
