// Feedback reports (shared/seeds/004 "Dynamic Feedback Reports", SPEC section 3): a streaming reader.
//
// A report is a sequence of subreports:
//     <report id="samples">            one per line; the tag is XML (attributes parsed with pugixml)
//     ...body lines...                 never XML-parsed
//     </report>
// The `samples` subreport holds <samples unit=".." scheme=".."> and <timestamps unit=".." scheme=".."
// when="first|last"> sections, one line per site. A `main-backtrace` subreport holds symbolizer markup, a
// signal line and a cbf line, or legacy backtrace_symbols lines. A last subreport without its closing tag (the
// program crashed while writing) is delivered with complete=false and a warning; it is not an error.
#pragma once

#include <cstdint>
#include <string_view>

#include "sections/diagnostics.h"
#include "sections/line_reader.h"

namespace sampler {

/// Receives a report's structure. Every view is valid only during the call.
class ReportVisitor {
 public:
  virtual ~ReportVisitor() = default;
  virtual void begin_subreport(std::string_view id, uint64_t line) { (void)id; (void)line; }
  virtual void body_line(std::string_view line, uint64_t line_number) { (void)line; (void)line_number; }
  /// complete is false when the input ended before </report>.
  virtual void end_subreport(bool complete) { (void)complete; }
};

/// Reads a whole report from `input`. Text outside a subreport, a malformed or unclosed tag: one error each
/// (with its line), then reading goes on. Returns true if no error was reported.
bool read_report(LineReader& input, ReportVisitor& visitor);

enum class SampleSectionKind { kSamples, kTimestamps };

/// The start tag of a samples or timestamps section.
struct SampleSectionHeader {
  SampleSectionKind kind;
  std::string_view unit;    ///< 32 lower-case hex digits (validated)
  std::string_view scheme;  ///< entities decoded
  std::string_view when;    ///< timestamps only: "first" or "last"
  uint64_t line;            ///< line of the start tag
};

/// Receives the sections of a samples subreport. Every view is valid only during the call.
class SamplesVisitor {
 public:
  virtual ~SamplesVisitor() = default;
  virtual void begin_section(const SampleSectionHeader& header) { (void)header; }
  virtual void section_line(std::string_view line, uint64_t line_number) { (void)line; (void)line_number; }
  /// complete is false when the section or the input ended before </samples> or </timestamps>.
  virtual void end_section(bool complete) { (void)complete; }
};

/// Reads samples and timestamps sections from either a whole report (only subreports with id="samples" are
/// read; others are skipped) or a bare samples subreport body as `extract-report samples` prints it.
/// Returns true if no error was reported.
bool read_samples(LineReader& input, SamplesVisitor& visitor);

}  // namespace sampler
