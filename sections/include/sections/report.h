// Feedback reports (the sampler manual, "Dynamic Feedback Reports", docs/formats.md section 3): a streaming reader.
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
#include <functional>
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
  /// A run of consecutive body lines, none of them starting with '<': whole lines, each ending in "\n" (with
  /// a "\r" before it when the input has CRLF line ends); the first one is line `first_line_number`. The
  /// reader hands over long runs in one call; the default calls body_line() for each line (without its "\n"
  /// and one "\r"). Override it to take bulk input without a call per line.
  virtual void body_lines(std::string_view lines, uint64_t first_line_number);
  /// complete is false when the input ended before </report>.
  virtual void end_subreport(bool complete) { (void)complete; }
};

/// Reads a whole report from `input`. Text outside a subreport, a malformed or unclosed tag: one error each
/// (with its line), then reading goes on. Returns true if no error was reported.
///
/// Details: a run of lines outside any subreport gets one error (at its first line); blank lines between
/// subreports are tolerated. A <report> tag without an id is an error and its body is skipped. A <report> tag
/// while a subreport is open is an error: the open one ends with end_subreport(false) and a new one begins.
/// A subreport still open at the end of input ends with end_subreport(false) and a warning naming its start
/// line (a crash cut the report short: docs/formats.md section 3). After 100 errors in one input, one more error says
/// so and further errors are not reported (reading goes on; the result is still false).
bool read_report(LineReader& input, ReportVisitor& visitor);

/// What extract_subreports found.
struct ExtractResult {
  uint64_t found = 0;  ///< subreports with the requested id (complete or cut short)
  bool ok = true;      ///< no error was reported (a warning for a subreport cut short is not an error)
};

/// Writes the body of every subreport whose id is `id`, in input order, without its tags: the engine of
/// `extract-report ID` (docs/tools.md). `write` receives the body lines, each ending in "\n" (a "\r"
/// before it removed; a last line without "\n" gets one): runs of whole lines as large as the reader's buffer
/// allows, except that a line from which a "\r" was removed, or that starts with '<', comes as the line and
/// then its "\n" (either may be empty). A caller can hand every piece straight to write(2). The structure rules
/// and diagnostics are those of read_report (the fuzz target `report` checks both agree).
ExtractResult extract_subreports(LineReader& input, std::string_view id,
                                 const std::function<void(std::string_view)>& write);

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
  /// A run of consecutive section lines, none of them starting with '<': whole lines, each ending in "\n"
  /// (with a "\r" before it when the input has CRLF line ends); the first one is line `first_line_number`.
  /// The default calls section_line() for each line (without its "\n" and one "\r"). Override it to take bulk
  /// input without a call per line.
  virtual void section_lines(std::string_view lines, uint64_t first_line_number);
  /// complete is false when the section or the input ended before </samples> or </timestamps>.
  virtual void end_section(bool complete) { (void)complete; }
};

/// read_report() and read_samples() in one pass over a whole report: the body of each subreport whose id is
/// "samples" goes to `samples`, read as read_samples() reads a bare samples body (the output of
/// `extract-report samples`), with the report's line numbers; only its begin_subreport() and end_subreport()
/// go to `visitor`. Other subreports go to `visitor` as read_report() gives them. A section still open at the
/// end of its subreport gets a warning and end_section(false). Returns true if no error was reported.
bool read_report(LineReader& input, ReportVisitor& visitor, SamplesVisitor& samples);

/// Reads samples and timestamps sections from either a whole report (only subreports with id="samples" are
/// read; others are skipped) or a bare samples subreport body as `extract-report samples` prints it.
/// Returns true if no error was reported.
///
/// Errors (each with its line; the section concerned is skipped, reading goes on): a malformed start tag, a
/// missing unit or scheme attribute, a unit that is not 32 lower-case hex digits, a timestamps `when` other
/// than "first" or "last", an end tag that does not match, a section with no end tag before the next start
/// tag or </report> (delivered with end_section(false)), text outside a section (once per run of lines).
/// Section lines are not checked here: they are handed over as they are.
bool read_samples(LineReader& input, SamplesVisitor& visitor);

}  // namespace sampler
