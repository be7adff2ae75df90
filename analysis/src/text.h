// Text helpers of the outputs (internal): numbers, and escaping for HTML (tab-separated fields and JSON are
// sections/diagnostics.h's escape_field and json_string).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"  // escape_field, json_string

namespace sampler::analysis {

/// A score with 4 decimals ("0.7500"); "-" for a value that is not finite.
inline std::string format_number(double value) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

/// Text for HTML element content and attribute values; control characters as visible \xNN (escape_field).
inline std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : escape_field(text)) {
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
