// symbfile writing (symbfile format; `sampler-symbols gsym --symbfile`): the "ranges" and "returnpads" files.
//
// A symbfile is the magic "symbfile", then messages each prefixed by two protobuf varints: its length and its
// type (1 header, 2 RangeV1, 3 ReturnPadV1, 4 StringTableV1). The messages use the field numbers of the
// format authors' public symbfile.proto (docs/formats.md section 5 lists them); we encode the protobuf wire
// format by hand (docs/decisions.md says why).
//   ranges      one RangeV1 per address range of a function (depth 0) and of each inlined call (depth >= 1),
//               with the call file and line, and the line table of the addresses no deeper call covers
//   returnpads  a StringTableV1, then one ReturnPadV1 per instruction that follows a call (at its address minus
//               one), holding the whole inline chain there, outermost function first
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sections/diagnostics.h"
#include "symbols/gsym_writer.h"

namespace sampler::symbols {

/// The "ranges" symbfile of `functions`. Names are demangled (symbfile.proto: "Demangled name").
std::string write_symbfile_ranges(const std::vector<Function>& functions);

/// The "returnpads" symbfile: `pads` are the addresses of instructions that follow calls; the inline chain of
/// each (looked up at the address minus one) comes from `gsym` (the GSYM bytes of the same functions).
std::string write_symbfile_returnpads(const std::vector<uint64_t>& pads, const std::string& gsym);

/// The addresses of the instructions that follow call instructions in the executable sections of the ELF file
/// at `path`, found by disassembling it with LLVM's MC disassembler. Problems go to `sink`.
bool find_return_pads(const std::string& path, std::vector<uint64_t>& pads, DiagnosticSink& sink);

}  // namespace sampler::symbols
