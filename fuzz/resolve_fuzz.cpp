// Fuzz target: joining samples and timestamps with their sites (sections/resolve.h): SitesIndex::add_text and
// resolve_samples, the engine of resolveSamples and resolveTimestamps, plus the bounds-value and counter parsers.
//
// The input is site information text, a line "%%", then a report or bare samples subreport (without the
// separator, all of it is both). It is resolved as samples and as timestamps, merged and not merged. Checked
// properties: the output is whole tab-separated lines; the result is true exactly when no error was reported;
// a bound value or counter that parses prints back to the same integer.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "sections/resolve.h"

namespace sampler::fuzz {
namespace {

void check_values(std::string_view text) {
  // The first few tab-separated fields of the text, as counters and bound values.
  for (int i = 0; i < 4 && !text.empty(); ++i) {
    const size_t tab = text.find_first_of("\t\n");
    const std::string_view field = text.substr(0, tab);
    if (auto counter = parse_counter(field)) {
      // Printed back: the field without its leading zeros ("0" stays).
      FUZZ_CHECK(!field.empty());
      const size_t zeros = std::min(field.find_first_not_of('0'), field.size() - 1);
      FUZZ_CHECK(std::to_string(*counter) == field.substr(zeros));
    }
    if (auto bound = parse_bound_value(field)) {
      FUZZ_CHECK(!bound_less(*bound, *bound));
      const BoundValue zero{};
      if (bound->negative && bound->magnitude != 0) FUZZ_CHECK(bound_less(*bound, zero) && !bound_less(zero, *bound));
    }
    if (tab == std::string_view::npos) break;
    text.remove_prefix(tab + 1);
  }
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler;
  using namespace sampler::fuzz;
  const std::string_view text = as_text(data, size);
  constexpr std::string_view kSeparator = "\n%%\n";
  const size_t split = text.find(kSeparator);
  const std::string_view sites_text = split == std::string_view::npos ? text : text.substr(0, split + 1);
  const std::string_view samples_text =
      split == std::string_view::npos ? text : text.substr(split + kSeparator.size());

  DiagnosticList index_diagnostics;
  SitesIndex index;
  const bool index_ok = index.add_text("fuzz.sites", std::string(sites_text), index_diagnostics);
  FUZZ_CHECK(index_ok == (index_diagnostics.error_count() == 0));

  for (const auto kind : {SampleSectionKind::kSamples, SampleSectionKind::kTimestamps}) {
    for (const bool merge : {true, false}) {
      DiagnosticList diagnostics;
      LineReader input(samples_text, "fuzz", diagnostics);
      std::string out;
      const bool ok = resolve_samples(input, index, ResolveOptions{kind, merge},
                                      [&](std::string_view piece) { out.append(piece); }, diagnostics);
      FUZZ_CHECK(ok == (diagnostics.error_count() == 0));
      FUZZ_CHECK(out.empty() || out.back() == '\n');
      // Every output line has at least the FILE, unit and scheme columns.
      std::string_view rest = out;
      while (!rest.empty()) {
        const size_t newline = rest.find('\n');
        const std::string_view line = rest.substr(0, newline);
        size_t tabs = 0;
        for (char c : line) tabs += c == '\t';
        FUZZ_CHECK(tabs >= 2);
        rest.remove_prefix(newline + 1);
      }
    }
  }
  check_values(samples_text);
  return 0;
}
