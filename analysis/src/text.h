// Text helpers of the outputs (internal): numbers, and escaping for tab-separated text and HTML (JSON's is
// sections/diagnostics.h's json_string).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"  // json_string

namespace sampler::analysis {

/// A score with 4 decimals ("0.7500"); "-" for a value that is not finite.
inline std::string format_number(double value) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

/// Control characters (tab and DEL included: the outputs are tab-separated) written as \xNN, so they never reach a
/// terminal as they are nor split a column.
inline std::string escape_control(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// Text for HTML element content and attribute values; control characters as U+FFFD-free visible \xNN.
inline std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : escape_control(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace sampler::analysis
