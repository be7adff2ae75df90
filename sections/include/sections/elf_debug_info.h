// What a symbolizer can use of an ELF file: its GNU build ID, and whether it carries debug information or a
// symbol table (sampler-symbol-dir; LLVM's Symbolizer Markup Format "Dependence on Build IDs").
//
// llvm-symbolizer, gdb and find-debuginfo find the debug information of a module by its build ID, in a directory
// laid out as DIR/.build-id/xx/rest.debug (xx the build ID's first byte in hex, rest the others). The headers
// are checked as for extract-section before libelf reads anything (sections/elf_section.h); only the headers and
// the notes are read, never the sections' contents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sections/diagnostics.h"

namespace sampler {

struct ElfDebugInfo {
  std::vector<uint8_t> build_id;  ///< the NT_GNU_BUILD_ID note's bytes; empty if the file has none
  bool has_dwarf = false;         ///< a .debug_info (or .zdebug_info) section with contents: file and line
  bool has_symbol_table = false;  ///< a .symtab section with contents: function names at least
};

/// Reads the ELF file at `path` (a regular file holding one ELF: an ar archive, or anything else, is an error,
/// DiagnosticCode::kNotElf). Problems go to `sink` naming `path`; returns nullopt then.
std::optional<ElfDebugInfo> read_elf_debug_info(const std::string& path, DiagnosticSink& sink);

/// The same over an image in memory (tests, fuzzing); `label` names it in diagnostics.
std::optional<ElfDebugInfo> read_elf_debug_info_in_memory(std::string_view image, const std::string& label,
                                                          DiagnosticSink& sink);

/// "DIR-relative" path of a build ID's entry: ".build-id/4a/234d3d...e0.debug" (lower-case hex). The build ID must
/// have at least 2 bytes.
std::string build_id_entry(const std::vector<uint8_t>& build_id);


}  // namespace sampler
