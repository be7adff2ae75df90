// Text helpers of the outputs (internal): numbers; escaping for HTML is analysis/html.h's html_escape, for
// tab-separated fields and JSON sections/diagnostics.h's escape_field and json_string.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "analysis/html.h"  // html_escape
#include "sections/diagnostics.h"  // escape_field, json_string

namespace sampler::analysis {

/// A score with 4 decimals ("0.7500"); "-" for a value that is not finite.
inline std::string format_number(double value) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

}  // namespace sampler::analysis
