// A run's summary: what read_runs() takes from a report (its samples sections' observed sites and true
// predicates, whether it crashed and its first main-backtrace), made once when a collector stores the report, so
// that the console ranks stored runs without parsing their reports again (docs/collection.md, "The console").
//
// It needs no site information: each samples section is kept under its (unit, scheme) with the section's own
// line indices, and read_runs() (ReadOptions::summary_of) matches sections with sites when a page is made, with
// the checks and the diagnostics it applies to a report. Crash groups are made then too, from the kept stack:
// symbols pushed after the upload still name its frames.
//
// Bytes (every number a varint, analysis/id_list.h; a string is its length, then its bytes):
//   format (1), flags (bit 0: a samples subreport, bit 1: a main-backtrace), [the main-backtrace body],
//   sections, then per samples section: its start tag's line, unit, scheme, lines read, state (bit 0: ended by
//   its end tag, bit 1: a malformed line), [the malformed line's index and number], counters per line (0 when no
//   line was read), then the observed sites (line indices) and the true predicates (line * predicates per site
//   + predicate) as id lists.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sections/report.h"

namespace sampler::analysis {

/// Makes a summary in the pass that reads a report: give it as both visitors of read_report(input, s, s).
class RunSummarizer : public ReportVisitor, public SamplesVisitor {
 public:
  RunSummarizer();
  ~RunSummarizer() override;
  RunSummarizer(const RunSummarizer&) = delete;
  RunSummarizer& operator=(const RunSummarizer&) = delete;

  void begin_subreport(std::string_view id, uint64_t line) override;
  void body_lines(std::string_view lines, uint64_t first_line_number) override;
  void body_line(std::string_view line, uint64_t line_number) override;
  void end_subreport(bool complete) override;
  void begin_section(const SampleSectionHeader& header) override;
  void section_lines(std::string_view lines, uint64_t first_line_number) override;
  void section_line(std::string_view line, uint64_t line_number) override;
  void end_section(bool complete) override;

  /// Samples and timestamps sections met.
  size_t sections() const;
  /// The summary's bytes (once the report was read).
  std::string bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The summary of a whole report's text, in one pass (a stored run without one).
std::string summarize_report(std::string_view text);

/// One samples section of a summary, its id lists checked against its lines (analysis/id_list.h lists).
struct SummarySection {
  uint64_t line = 0;  ///< the section's start tag's line in the report
  std::string_view unit, scheme;
  uint64_t lines = 0;  ///< samples lines read
  bool complete = false, malformed = false;
  uint64_t malformed_index = 0, malformed_line = 0;
  uint32_t counters = 0;               ///< counters per line (0: no line was read)
  const uint8_t* sites = nullptr;      ///< observed line indices
  const uint8_t* predicates = nullptr; ///< true predicates: line * predicates per site + predicate
};

/// Reads a summary's bytes, every length checked against the end (a stored summary may be corrupt): whether the
/// run has a samples subreport, its first main-backtrace body (none: nullopt), and each samples section in turn.
/// False if the bytes are not a whole summary (sections met before the fault were given to `section`).
bool read_summary(std::string_view bytes, bool& have_samples, std::optional<std::string_view>& backtrace,
                  const std::function<void(const SummarySection&)>& section);

}  // namespace sampler::analysis
