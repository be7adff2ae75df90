// Static site information (the sampler manual, "Site Information", docs/formats.md section 2).
//
//     <sites unit="0123456789abcdef0123456789abcdef" scheme="branches">
//     file<TAB>line<TAB>function<TAB>cfg-node<TAB>scheme fields...      one site per line
//     </sites>
// Sections follow each other; NUL bytes between them are tolerated (the linker pads concatenated sections).
// Tag lines are parsed with pugixml (entities decoded, attribute order free); site lines are never XML-parsed.
// Parsing never copies site lines: sections are views into the caller's text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"

namespace sampler {

/// The schemes docs/formats.md section 2 knows. Unknown schemes are carried through untouched.
struct SchemeInfo {
  std::string_view name;
  int static_fields;  ///< scheme-specific fields after the 4 common ones
  int counters;       ///< dynamic columns per site in a samples section
  bool is_bounds;     ///< bounds: counters are min and max, merged by min/max instead of summed
};

/// The scheme's description, or nullptr for an unknown scheme.
const SchemeInfo* find_scheme(std::string_view name);

/// Every scheme docs/formats.md section 2 knows, sorted by name: sections/scheme_table.h's rows as the formats see
/// them. The runtime's sampler/unit.h (SAMPLER_COLUMNS_*) and docs/formats.md repeat them;
/// tests/sections/scheme_table_test.cpp checks that they agree.
std::span<const SchemeInfo> known_schemes();

/// True for exactly 32 lower-case hexadecimal digits.
bool is_unit_signature(std::string_view text);

struct SitesSection {
  std::string unit;       ///< decoded attribute value, validated by is_unit_signature
  std::string scheme;     ///< decoded attribute value
  std::string_view body;  ///< the site lines, each ending in "\n" (a view into the parsed text; may hold "\r")
  size_t site_count = 0;  ///< number of lines in body
  uint64_t line = 0;      ///< 1-based line of the <sites> tag in the parsed text
};

/// Parses `text` (which must outlive every SitesSection passed to on_section) and calls on_section for each
/// well-formed section, in order. Problems (no closing tag, bad unit signature, missing attribute, text outside
/// a section) are reported to `sink` as errors naming `source_name` and the line; parsing resumes at the next
/// start tag. Returns true if no error was reported.
bool parse_site_info(std::string_view text, std::string_view source_name,
                     const std::function<void(const SitesSection&)>& on_section, DiagnosticSink& sink);

}  // namespace sampler
