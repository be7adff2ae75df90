// extract-section: writes one named section of ELF files and ar archive members to standard output
// (docs/tools.md).
//
//   extract-section .debug_site_info app libplugin.so libstatic.a > app.sites
//
// NUL bytes are removed and compressed sections decompressed; the work is in sections/elf_section.h, this is
// options, one library call per file, exit status. Uncompressed sections go from the file's mapping to standard
// output in large writes, without being copied; compressed ones in pieces as they are decompressed.
#include <array>

#include "sections/elf_section.h"
#include "tool.h"

namespace {

constexpr std::array kOptions = {
    sampler::tool::Option{"require", 0, nullptr, "exit with status 1 if a file or member lacks the section"},
};

constexpr sampler::tool::Usage kUsage = {
    "extract-section",
    "[--require] SECTION FILE...",
    "Write section SECTION of each FILE to standard output, in order, with NUL bytes removed.",
    kOptions,
    "FILE: ELF executables, shared libraries, relocatable objects (ELF32 or ELF64, either byte order), or ar\n"
    "archives, whose members are read in order. Sections compressed with zlib or zstd (SHF_COMPRESSED) and\n"
    "legacy .zdebug sections are decompressed; a request for .debug_X also finds .zdebug_X.\n"
    "\n"
    "A file or member without the section, or with an empty one, gets a warning. A file that cannot be read,\n"
    "is not ELF, or has a section whose headers are inconsistent gets an error; the other files are still\n"
    "processed.\n",
};

}  // namespace

int main(int argc, char** argv) {
  using namespace sampler;
  tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  if (command.operands.empty()) return tool::usage_error(kUsage, "missing SECTION and FILE operands");
  if (command.operands.size() == 1) return tool::usage_error(kUsage, "no FILE given after the SECTION");
  const std::string& section = command.operands.front();
  if (section.empty()) return tool::usage_error(kUsage, "the section name is empty");

  tool::Output output;
  tool::StderrSink sink(kUsage.program, &output);
  bool lacking = false;
  // Streamed: a compressed section goes out piece by piece as it is decompressed, never held whole.
  ElfSectionStream stream;
  stream.piece = [&output](std::string_view piece) {
    for_each_non_nul_span(piece, [&output](std::string_view span) { output.write(span); });
  };
  stream.done = [&](const ElfSection& found) {
    if (found.status == ElfSection::Status::kFound) return;
    lacking = true;
    if (found.status == ElfSection::Status::kMissing) {
      sink.warning(DiagnosticCode::kMissingSection, found.label, 0, "no section '" + section + "'");
    } else {
      sink.warning(DiagnosticCode::kEmptySection, found.label, 0, "section '" + section + "' is empty");
    }
  };
  for (size_t i = 1; i < command.operands.size(); ++i) {
    for_each_elf_section_streamed(command.operands[i], section, stream, sink);
  }
  const bool written = tool::finish_output(output, sink);
  const bool failed = !written || sink.errors() > 0 || (lacking && command.has("require"));
  return failed ? tool::kExitDataError : tool::kExitSuccess;
}
