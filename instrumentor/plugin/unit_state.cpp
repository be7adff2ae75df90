// The unit's state shared by the AST action and the passes (state.h); its own file so that the pass-only plugin
// (sampler-passes.so, without clang) has it too.
#include "state.h"

namespace sampler::plugin {

UnitState& unit_state() {
  static UnitState state;
  return state;
}

std::string one_line(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace sampler::plugin
