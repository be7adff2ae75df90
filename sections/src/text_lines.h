// Small helpers for the messages about sites and samples, shared by the sites index and the join (private to the
// formats library).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "sections/lines.h"  // next_line

namespace sampler::text {

/// "'LABEL':LINE" (or "'LABEL'" for line 0): where a section is, for messages.
inline std::string place(std::string_view label, uint64_t line) {
  std::string text = "'";
  text += label;
  text += "'";
  if (line != 0) {
    text += ':';
    text += std::to_string(line);
  }
  return text;
}

/// The value text quoted for a message, shortened so that a 10 MB line does not become a 10 MB message.
inline std::string quote_value(std::string_view value) {
  constexpr size_t kShown = 40;
  std::string text = "'";
  text += value.substr(0, kShown);
  if (value.size() > kShown) text += "...";
  text += "'";
  return text;
}

}  // namespace sampler::text
