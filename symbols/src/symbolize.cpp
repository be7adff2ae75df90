// llvm-symbolizer's plain output for GSYM lookups (symbols/symbolize.h).
#include "symbols/symbolize.h"

#include <charconv>

namespace sampler::symbols {

void append_llvm_style(const gsym::LookupResult* result, std::string& out) {
  if (result == nullptr || result->frames.empty()) {
    out += "??\n??:0\n\n";
    return;
  }
  for (const gsym::Location& frame : result->frames) {
    out.append(frame.name.empty() ? std::string_view("??") : frame.name);
    out += '\n';
    if (frame.file.empty() && frame.dir.empty()) {
      out += "??";
    } else {
      out.append(frame.dir);
      if (!frame.dir.empty()) out += '/';
      out.append(frame.file);
    }
    char digits[16];
    digits[0] = ':';
    char* end = std::to_chars(digits + 1, digits + sizeof digits - 1, frame.line).ptr;
    *end++ = '\n';
    out.append(digits, end);
  }
  out += '\n';
}

}  // namespace sampler::symbols
