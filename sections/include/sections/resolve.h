// Joining samples and timestamps with their static sites (docs/tools.md, resolveSamples and resolveTimestamps;
// the sampler manual, "samples subreport").
//
// The sites come from a SitesIndex (sections/sites_index.h: finding and reading the FILEs a user names);
// resolve_samples() then streams a report (or a bare samples subreport) through read_samples() and writes one
// tab-separated line per site. Repeated sections of the same key are merged (counters summed, bounds min/max,
// timestamps earliest non-zero first / latest last) and printed where the key first appeared, which means the
// output can only be written once the input has ended: the samples text is kept (once, compactly) until then.
// With merging off, every section is written as soon as it is complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"
#include "sections/line_reader.h"
#include "sections/report.h"
#include "sections/sites_index.h"

namespace sampler {

/// What resolve_samples() joins and how.
struct ResolveOptions {
  /// kSamples (resolveSamples): "FILE unit scheme static-fields... counters..." per site.
  /// kTimestamps (resolveTimestamps): "timestamp FILE unit scheme when static-fields..." per site.
  /// Sections of the other kind are skipped.
  SampleSectionKind kind = SampleSectionKind::kSamples;
  /// Merge repeated sections of a key (timestamps: of a key and `when`), printed at its first appearance.
  bool merge = true;
};

/// Reads samples from `input` with read_samples() and calls `write` with the joined output, in pieces of any
/// size (the text is tab-separated lines, each ending in "\n"). Diagnostics (one per problem) go to `sink`:
///  - a section whose (unit, scheme) no FILE has: one error per key, naming unit and scheme;
///  - a section whose line count differs from its sites: an error naming the unit, the scheme, both counts and
///    both places; that section is left out (a section cut short by the end of input is not an error when
///    it has no more lines than its sites: its lines are resolved);
///  - a malformed samples line (wrong number of fields for a known scheme, a value that is not a number): an
///    error naming the line; that site is left out of the output (of the merged output, when merging);
///  - a merged counter past 2^64-1: an error naming the site; that site is left out.
/// Everything else is still written. Returns true if no error was reported (by the reader or the join).
bool resolve_samples(LineReader& input, const SitesIndex& sites, const ResolveOptions& options,
                     const std::function<void(std::string_view)>& write, DiagnosticSink& sink);

/// A value of a bounds site as its text shows it (docs/formats.md section 3): signed or unsigned decimal, or 0x hex.
struct BoundValue {
  bool negative = false;
  uint64_t magnitude = 0;
};

/// Parses "-123", "123" or "0x1f" (hex digits of either case; at most 64 bits); nullopt for anything else.
std::optional<BoundValue> parse_bound_value(std::string_view text);
/// Orders bound values as the integers they denote (so -1 < 0 < 0x10 < 18446744073709551615).
bool bound_less(const BoundValue& a, const BoundValue& b);
/// Parses an unsigned decimal counter of at most 64 bits (digits only); nullopt otherwise.
std::optional<uint64_t> parse_counter(std::string_view text);

}  // namespace sampler
