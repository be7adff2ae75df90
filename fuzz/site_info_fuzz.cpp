// Fuzz target: static site information (sections/site_info.h, parse_site_info).
//
// Checks, besides "no crash, no hang": every section's body is a view into the input made of whole lines
// (each ending in "\n"), its site_count is its number of lines, its tag line number is where the body starts,
// its unit is a valid signature and its scheme is not empty; and the result is true exactly when no error
// was reported.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "fuzz_util.h"
#include "sections/site_info.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler;
  using namespace sampler::fuzz;
  const std::string_view text = as_text(data, size);
  DiagnosticList diagnostics;
  uint64_t previous_line = 0;
  const bool ok = parse_site_info(
      text, "fuzz",
      [&](const SitesSection& section) {
        FUZZ_CHECK(is_unit_signature(section.unit));
        FUZZ_CHECK(!section.scheme.empty());
        FUZZ_CHECK(section.line > previous_line);  // sections come in input order
        previous_line = section.line;
        const auto lines = std::count(section.body.begin(), section.body.end(), '\n');
        FUZZ_CHECK(section.site_count == static_cast<size_t>(lines));
        if (!section.body.empty()) {
          FUZZ_CHECK(is_inside(section.body, text));
          FUZZ_CHECK(section.body.back() == '\n');
          // The body starts on the line after the tag.
          const size_t start = static_cast<size_t>(section.body.data() - text.data());
          const auto before = std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(start), '\n');
          FUZZ_CHECK(static_cast<uint64_t>(before) == section.line);
        }
        const SchemeInfo* scheme = find_scheme(section.scheme);
        if (scheme != nullptr) FUZZ_CHECK(scheme->name == section.scheme);
      },
      diagnostics);
  FUZZ_CHECK(ok == (diagnostics.error_count() == 0));
  for (const auto& d : diagnostics.items) FUZZ_CHECK(d.file == "fuzz");
  return 0;
}
