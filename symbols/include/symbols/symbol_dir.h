// sampler-symbol-dir's logic: lay out a symbol directory DIR/.build-id/xx/rest.debug, the layout in which
// llvm-symbolizer (--debug-file-directory=DIR), gdb and find-debuginfo look a module's debug information up by its
// GNU build ID, from binaries, separate debug files, or directories of them (a package's /usr/lib/debug). After
// it, the crash pipeline is one command (docs/tools.md):
//     resolve-backtrace crash.txt | llvm-symbolizer-19 --filter-markup --debug-file-directory=DIR
//
// Each entry is a hard link to the file, or a copy where a hard link cannot be made (another file system, a file
// of another user); the files themselves are only read. No subprocess is started (docs/tools.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sections/diagnostics.h"

namespace sampler::symbols {

/// What make_symbol_dir() does.
struct SymbolDirOptions {
  std::string directory;            ///< DIR: created if need be; entries go to DIR/.build-id/
  std::vector<std::string> inputs;  ///< ELF files, or directories searched recursively for ELF files
  bool dry_run = false;             ///< decide and report, change nothing
};

/// One entry made (or, in a dry run, that would be made).
struct SymbolEntry {
  std::string source;     ///< the file the entry is
  std::string entry;      ///< relative to DIR: ".build-id/xx/rest.debug"
  std::string build_id;   ///< lower-case hex
  bool copied = false;    ///< a copy (no hard link could be made); always false in a dry run
  bool replaced = false;  ///< an entry was there and is replaced (it was less useful, or not this build ID's)
};

/// How useful a file is to a symbolizer: DWARF (function, file and line) > a symbol table (function names) >
/// neither (a fully stripped binary: nothing to link).
int usefulness(bool has_dwarf, bool has_symbol_table);

/// For every build ID found among the inputs, makes DIR/.build-id/xx/rest.debug the most useful file with that
/// build ID (the first given among equals). An entry that is already there stays if it is the same file or a more
/// useful one; otherwise it is replaced (atomically: a new name, then rename). Files found in directories that are
/// not ELF, or have no build ID, are passed over; an input named directly that cannot be used (missing, not ELF,
/// no build ID) is an error, and one with neither debug information nor a symbol table, whose build ID no other
/// input provides, a warning. `on_entry` is called for each entry made. Returns true if no error was reported.
bool make_symbol_dir(const SymbolDirOptions& options, const std::function<void(const SymbolEntry&)>& on_entry,
                     DiagnosticSink& sink);

}  // namespace sampler::symbols
