// Writing GSYM files (docs/formats.md section 5) from functions already read out of debug information.
//
// The encoder knows nothing of DWARF: symbols/dwarf_to_gsym.h fills the Function list, tests fill it by hand and
// read the result back with sections/gsym.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sampler::symbols {

/// A source file as a path; the writer splits it at the last '/' into directory and base name.
struct LineRow {
  uint64_t address = 0;
  std::string file;  ///< path; empty if unknown
  uint32_t line = 0;
};

struct AddressRange {
  uint64_t start = 0;
  uint64_t end = 0;  ///< one past the last byte
};

/// One inlined call: where its code lies, what was inlined, where the call was; the calls inlined into it.
struct InlineCall {
  std::vector<AddressRange> ranges;  ///< inside the enclosing call's (or the function's) ranges
  std::string name;
  std::string call_file;             ///< path of the call site's file
  uint32_t call_line = 0;
  std::vector<InlineCall> children;
};

/// One function (or one contiguous part of it) of the binary.
struct Function {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;             ///< linkage name if it has one (as llvm-symbolizer --no-demangle prints)
  std::vector<LineRow> lines;   ///< ascending addresses, all within [start, start + size); may be empty
  std::vector<InlineCall> inlined;  ///< calls inlined directly into this function
};

/// The bytes of a GSYM file holding `functions` (sorted here; two at the same address keep the first given),
/// with `uuid` (a build ID; at most 20 bytes are kept) in the header. Little-endian, version 1.
std::string write_gsym(std::vector<Function> functions, std::string_view uuid);

}  // namespace sampler::symbols
