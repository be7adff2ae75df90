// llvm-symbolizer's plain output for GSYM lookups (symbols/symbolize.h).
#include "symbols/symbolize.h"

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
    out += ':';
    out += std::to_string(frame.line);
    out += '\n';
  }
  out += '\n';
}

}  // namespace sampler::symbols
