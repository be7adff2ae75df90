// Symbolizing markup in-process from GSYM files (`resolve-backtrace --symbols DIR`).
//
// Reads the markup resolve-backtrace writes (sections/backtrace.h) line by line, keeps the module map as
// `llvm-symbolizer --filter-markup` does ({{{reset}}}, {{{module}}}, {{{mmap}}}), and replaces each line that is
// a {{{bt}}} element by the frame lines llvm-symbolizer prints for it, looked up in DIR/BUILDID.gsym:
//
//     #0    0x000055a1f3a7396a crash_segv /src/examples/crash.c:44 (/tmp/demo/app+0x296a)
//     #1.1  0x000055a1f3a73cc4 inlined_callee /src/examples/crash.h:12 (/tmp/demo/app+0x2cc4)
//     #1    0x000055a1f3a73cc4 crash_level_3 /src/examples/crash.c:125 (/tmp/demo/app+0x2cc4)
//
// The same fields as llvm-symbolizer's, but FILE:LINE without a column (GSYM holds none). A return address
// (`ra`, or no kind) is looked up and printed minus one, as llvm-symbolizer does. A frame in a module without a
// GSYM file (or outside every function of it) keeps only its module and offset; a frame no mmap covers is
// printed as the raw element "[[[bt:...]]]", as llvm-symbolizer does. Names are demangled. The contextual
// elements become llvm-symbolizer's "[[[ELF module #0x0 "NAME"; BuildID=HEX [START-END](MODE),...]]]" lines;
// every other line passes through unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sections/diagnostics.h"
#include "sections/gsym.h"
#include "sections/symbfile.h"

namespace sampler {

/// Finds the GSYM file of a build ID.
class SymbolSource {
 public:
  virtual ~SymbolSource() = default;
  /// The reader for `build_id` (raw bytes), or nullptr when there are no symbols for it. The reader stays
  /// valid as long as the source.
  virtual const gsym::Reader* find(const std::vector<uint8_t>& build_id) = 0;
  /// The symbfile of `kind` for `build_id` (symbfile format), or nullptr (the default: none). Return pads answer for
  /// caller frames before GSYM does; ranges answer where there is no GSYM file.
  virtual const symbfile::File* find_symbfile(const std::vector<uint8_t>& build_id, symbfile::Kind kind) {
    (void)build_id;
    (void)kind;
    return nullptr;
  }
};

/// DIR/BUILDID.gsym (lower-case hex), each file mapped once when first needed, and the symbfiles
/// DIR/BUILDID.ranges.symbfile and DIR/BUILDID.returnpads.symbfile (`sampler-symbols gsym --symbfile`), each
/// read whole when first needed. A file that exists but is malformed is reported to the sink once and treated
/// as absent. Thread-safe: lookups through the readers it returns are (they are const and never change).
class GsymDirectory : public SymbolSource {
 public:
  GsymDirectory(std::string directory, DiagnosticSink& sink);
  ~GsymDirectory() override;
  const gsym::Reader* find(const std::vector<uint8_t>& build_id) override;
  const symbfile::File* find_symbfile(const std::vector<uint8_t>& build_id, symbfile::Kind kind) override;

 private:
  std::string directory_;
  DiagnosticSink& sink_;
  std::mutex mutex_;
  std::map<std::vector<uint8_t>, std::unique_ptr<gsym::MappedFile>> files_;  // nullptr: looked for, none
  std::map<std::pair<std::vector<uint8_t>, symbfile::Kind>, std::unique_ptr<symbfile::File>> symbfiles_;
};

/// One symbolized frame of a stack, for callers that want frames rather than text (sampler-analyze's crash
/// groups). `result` is nullptr when no symbols cover the address; its names are as stored (mangled for GSYM).
struct SymbolizedFrame {
  uint64_t frame = 0;              ///< the bt element's frame number
  std::string_view module;         ///< the module's name from the markup
  uint64_t module_offset = 0;      ///< the looked-up address relative to the module
  const gsym::LookupResult* result = nullptr;  ///< frames innermost first, or nullptr
};

/// Turns a stored (mangled) name into the name printed.
using Demangler = std::function<std::string(std::string_view)>;

/// The markup filter. Output goes to `write` in whole lines.
class MarkupSymbolizer {
 public:
  /// `demangler` empty: sampler::demangle (the C++ runtime's). resolve-backtrace passes LLVM's, whose spelling
  /// llvm-symbolizer prints ("vector<int>>" where the runtime's says "vector<int> >").
  MarkupSymbolizer(SymbolSource& symbols, std::function<void(std::string_view)> write, DiagnosticSink& sink,
                   Demangler demangler = {});
  ~MarkupSymbolizer();
  MarkupSymbolizer(const MarkupSymbolizer&) = delete;
  MarkupSymbolizer& operator=(const MarkupSymbolizer&) = delete;

  /// Markup text in pieces of any size; complete lines are processed as they arrive.
  void write(std::string_view piece);
  /// Processes a last line without a line end.
  void finish();
  /// Also calls `visit` for each frame of a bt element inside a module (before its lines are written).
  void on_frame(std::function<void(const SymbolizedFrame&)> visit);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// `name` demangled by the C++ runtime (abi::__cxa_demangle) if it is an Itanium C++ mangled name, else unchanged.
std::string demangle(std::string_view name);

}  // namespace sampler
