// From an ELF file's DWARF to a GSYM file named by its build ID (`sampler-symbols gsym`).
//
// DWARF is read with LLVM's DebugInfo library (docs/decisions.md, "Symbols"): the same reading llvm-symbolizer
// does, so the frames our GSYM gives equal the ones it prints. Functions are DW_TAG_subprogram ranges (each range
// of a split function is its own entry), their line rows, and the tree of DW_TAG_inlined_subroutine below them;
// function symbols of .symtab that no DWARF function covers (start-up code, assembly) are added without lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sections/diagnostics.h"
#include "symbols/gsym_writer.h"

namespace sampler::symbols {

struct ConvertOptions {
  /// Where separate debug files are looked up by build ID when the ELF has no .debug_info:
  /// DIR/.build-id/xx/rest.debug for each DIR (a Debian -dbgsym package installs into /usr/lib/debug).
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
  /// Also write BUILDID.ranges.symbfile and BUILDID.returnpads.symbfile (symbols/symbfile.h).
  bool symbfile = false;
};

/// What one ELF file gave.
struct DebugInfo {
  std::string build_id;  ///< raw bytes; empty if the file has none
  std::vector<Function> functions;
  bool had_dwarf = false;
};

/// Reads `path` (an executable, shared library or separate debug file). Problems go to `sink` naming the file;
/// returns false if the file could not be read at all.
bool read_debug_info(const std::string& path, const ConvertOptions& options, DebugInfo& out, DiagnosticSink& sink);

/// The symbol files of one ELF file, in memory.
struct SymbolFiles {
  std::string build_id;    ///< raw bytes
  std::string gsym;
  std::string ranges;      ///< "" unless options.symbfile
  std::string returnpads;  ///< "" unless options.symbfile
};

/// Reads `path` into its GSYM file (and symbfiles if options.symbfile). False after an error reported to `sink`
/// (no build ID, unreadable file).
bool make_symbol_files(const std::string& path, const ConvertOptions& options, SymbolFiles& out,
                       DiagnosticSink& sink);

/// Reads `path` and writes OUT_DIR/BUILDID.gsym (lower-case hex), and the symbfiles if options.symbfile. Returns
/// the GSYM path written, or "" after an error reported to `sink` (no build ID, unreadable file, cannot write).
std::string convert_to_gsym(const std::string& path, const std::string& out_dir, const ConvertOptions& options,
                            DiagnosticSink& sink);


/// LLVM ends the process on errors it cannot return (a failed allocation, "LLVM ERROR: ..."): `gave_up(reason)` is
/// called instead, and must not return (a tool prints a diagnostic and exits 1).
void on_llvm_fatal_error(void (*gave_up)(const char* reason));

}  // namespace sampler::symbols
