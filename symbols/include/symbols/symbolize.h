// Printing GSYM lookups the way llvm-symbolizer does, so the two can be compared line by line (tests, bench).
#pragma once

#include <string>

#include "sections/gsym.h"

namespace sampler::symbols {

/// Appends the frames of `result` (nullptr: the address is unknown) as `llvm-symbolizer --no-demangle` prints
/// them without columns: per frame "NAME\nDIR/FILE:LINE\n" ("??" for an unknown name or file), then "\n".
void append_llvm_style(const gsym::LookupResult* result, std::string& out);

}  // namespace sampler::symbols
