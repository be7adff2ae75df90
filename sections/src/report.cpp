// Feedback reports: the streaming report reader, the samples reader and subreport extraction
// (see sections/report.h; the sampler manual, "Dynamic Feedback Reports", docs/formats.md section 3).
//
// One state machine, ReportParser, knows the subreport structure; it is a template over what to do with
// the pieces so that the per-line path (a body line: one test of its first byte, one call) inlines. Only
// lines starting with '<' are tag candidates; body lines are never XML-parsed.
#include "sections/report.h"

#include <cstring>
#include <string>

#include "error_limit.h"
#include "line_reader_blocks.h"
#include "sections/site_info.h"
#include "text_scan.h"
#include "xml_tag.h"

namespace sampler {

namespace {

bool starts_with_lt(std::string_view line) { return !line.empty() && line[0] == '<'; }

std::string quoted(std::string_view text) { return "'" + xml::printable(text) + "'"; }

// The subreport structure. Handler receives:
//   void begin(std::string_view id, uint64_t line)    a subreport starts
//   void body(std::string_view line, uint64_t number)  one of its body lines
//   void end(bool complete)                            it ends (complete: at its </report>)
//   bool outside(std::string_view line, uint64_t n)    a non-blank line outside any subreport; true if the
//                                                      handler takes it (bare samples), false for an error
template <class Handler>
class ReportParser {
 public:
  ReportParser(Handler& handler, LimitedDiagnostics& diagnostics)
      : handler_(handler), diagnostics_(diagnostics) {}

  /// True while lines are body lines of a subreport (or of one being skipped) unless they start with '<'.
  bool in_body() const { return state_ != State::kOutside; }
  /// True while body lines are delivered to the handler.
  bool delivering() const { return state_ == State::kInside; }

  void line(std::string_view text, uint64_t number) {
    if (state_ == State::kInside && !starts_with_lt(text)) {
      handler_.body(text, number);
    } else if (state_ == State::kSkipping && !starts_with_lt(text)) {
      // the body of a subreport whose start tag was rejected
    } else {
      tag_candidate(text, number);
    }
  }

  void finish() {
    if (state_ == State::kInside) {
      // A crash while the report was written: use what is there, warn (docs/formats.md section 3).
      diagnostics_.warning(DiagnosticCode::kCutShort, 0,
                           "subreport " + quoted(id_) + " starting at line " + std::to_string(start_line_) +
                               " was cut short (no </report>)");
      handler_.end(false);
    }
    state_ = State::kOutside;
  }

 private:
  enum class State { kOutside, kInside, kSkipping };

  void tag_candidate(std::string_view text, uint64_t number) {
    if (xml::is_start_tag(text, "report")) {
      if (state_ == State::kInside) {
        diagnostics_.error(number, "subreport " + quoted(id_) + " starting at line " +
                                       std::to_string(start_line_) + " has no closing tag before this <report>");
        handler_.end(false);
      }
      state_ = State::kSkipping;
      std::string error;
      if (!tags_.parse(text, error)) {
        diagnostics_.error(number, error + " (its subreport is skipped)");
        return;
      }
      if (!tags_.has("id")) {
        diagnostics_.error(number, "<report> tag has no id attribute (its subreport is skipped)");
        return;
      }
      id_.assign(tags_.value("id"));
      start_line_ = number;
      outside_reported_ = false;
      handler_.begin(id_, number);
      if (tags_.self_closing()) {  // <report id="x"/>: an empty subreport
        handler_.end(true);
        state_ = State::kOutside;
      } else {
        state_ = State::kInside;
      }
      return;
    }
    if (xml::is_end_tag(text, "report")) {
      if (state_ == State::kInside) {
        handler_.end(true);
      } else if (state_ == State::kOutside) {
        diagnostics_.error(number, "</report> without a matching <report> tag");
      }
      state_ = State::kOutside;
      return;
    }
    switch (state_) {
      case State::kInside:
        handler_.body(text, number);  // a body line that starts with '<' but is no report tag
        return;
      case State::kSkipping:
        return;
      case State::kOutside:
        if (text.empty()) return;  // blank lines between subreports are harmless
        if (handler_.outside(text, number)) {
          outside_reported_ = false;
          return;
        }
        if (!outside_reported_) {
          diagnostics_.error(number, "text outside a subreport (ignored up to the next <report> tag)");
          outside_reported_ = true;
        }
        return;
    }
  }

  Handler& handler_;
  LimitedDiagnostics& diagnostics_;
  xml::StartTagParser tags_;
  State state_ = State::kOutside;
  std::string id_;
  uint64_t start_line_ = 0;
  bool outside_reported_ = false;
};

// read_report: forwards to the visitor.
class VisitorHandler {
 public:
  explicit VisitorHandler(ReportVisitor& visitor) : visitor_(visitor) {}
  void begin(std::string_view id, uint64_t line) { visitor_.begin_subreport(id, line); }
  void body(std::string_view line, uint64_t number) { visitor_.body_line(line, number); }
  void end(bool complete) { visitor_.end_subreport(complete); }
  bool outside(std::string_view, uint64_t) { return false; }

 private:
  ReportVisitor& visitor_;
};

// read_samples: the sections inside `samples` subreports, or bare sections at the top level.
class SamplesHandler {
 public:
  SamplesHandler(SamplesVisitor& visitor, LimitedDiagnostics& diagnostics)
      : visitor_(visitor), diagnostics_(diagnostics) {}

  void begin(std::string_view id, uint64_t number) {
    close_unterminated(number, "before this <report>");
    samples_report_ = id == "samples";
    outside_reported_ = false;
  }

  void body(std::string_view line, uint64_t number) {
    if (!samples_report_) return;  // other subreports are not ours to read
    if (section_ == Section::kOpen && !starts_with_lt(line)) {
      visitor_.section_line(line, number);
      return;
    }
    if (!section_line(line, number) && !outside_reported_) {
      diagnostics_.error(number, "text outside a samples or timestamps section (ignored up to the next one)");
      outside_reported_ = true;
    }
  }

  void end(bool complete) {
    // Cut short: the subreport's warning says so; a </report> inside an open section is an error.
    if (complete) {
      close_unterminated(0, "before </report>");
    } else if (section_ == Section::kOpen) {
      visitor_.end_section(false);
    }
    section_ = Section::kNone;
    samples_report_ = false;
  }

  bool outside(std::string_view line, uint64_t number) { return section_line(line, number); }

  /// Inside the samples subreport (not another one).
  bool samples_report() const { return samples_report_; }
  /// Inside a section, well-formed (its lines are delivered) or not (they are skipped).
  bool in_section() const { return section_ != Section::kNone; }
  bool section_open() const { return section_ == Section::kOpen; }

  // End of input outside any subreport: a bare section still open was cut short.
  void finish() {
    if (section_ == Section::kOpen) {
      diagnostics_.warning(DiagnosticCode::kCutShort, 0,
                           std::string(kind_ == SampleSectionKind::kSamples ? "samples" : "timestamps") +
                               " section starting at line " + std::to_string(section_start_) +
                               " was cut short (no end tag)");
      visitor_.end_section(false);
    }
    section_ = Section::kNone;
  }

 private:
  enum class Section { kNone, kOpen, kSkipping };

  static const char* tag_name(SampleSectionKind kind) {
    return kind == SampleSectionKind::kSamples ? "samples" : "timestamps";
  }

  // A section that ends without its end tag. `where` completes the message; number 0: the current line is
  // unknown (the diagnostic points at the section's start).
  void close_unterminated(uint64_t number, const char* where) {
    if (section_ == Section::kOpen) {
      diagnostics_.error(number != 0 ? number : section_start_,
                         std::string("<") + tag_name(kind_) + "> section starting at line " +
                             std::to_string(section_start_) + " has no end tag " + where);
      visitor_.end_section(false);
    }
    section_ = Section::kNone;
  }

  // A line of a samples subreport (or of a bare one) that is not a plain section line. Returns false if it
  // is text outside any section.
  bool section_line(std::string_view line, uint64_t number) {
    if (starts_with_lt(line)) {
      if (xml::is_start_tag(line, "samples")) {
        start_section(SampleSectionKind::kSamples, line, number);
        return true;
      }
      if (xml::is_start_tag(line, "timestamps")) {
        start_section(SampleSectionKind::kTimestamps, line, number);
        return true;
      }
      bool ends_samples = xml::is_end_tag(line, "samples");
      if (ends_samples || xml::is_end_tag(line, "timestamps")) {
        SampleSectionKind kind = ends_samples ? SampleSectionKind::kSamples : SampleSectionKind::kTimestamps;
        if (section_ == Section::kOpen) {
          if (kind == kind_) {
            visitor_.end_section(true);
          } else {
            diagnostics_.error(number, std::string("</") + tag_name(kind) + "> does not match the <" +
                                           tag_name(kind_) + "> section starting at line " +
                                           std::to_string(section_start_));
            visitor_.end_section(false);
          }
        } else if (section_ == Section::kNone) {
          diagnostics_.error(number, std::string("</") + tag_name(kind) + "> without a matching start tag");
        }
        section_ = Section::kNone;
        return true;
      }
    }
    switch (section_) {
      case Section::kOpen:
        visitor_.section_line(line, number);  // starts with '<' but is no tag: the consumer judges it
        return true;
      case Section::kSkipping:
        return true;
      case Section::kNone:
        break;
    }
    return false;
  }

  void start_section(SampleSectionKind kind, std::string_view line, uint64_t number) {
    close_unterminated(number, ("before this <" + std::string(tag_name(kind)) + ">").c_str());
    section_ = Section::kSkipping;  // until the header proves well-formed
    outside_reported_ = false;
    kind_ = kind;
    section_start_ = number;
    std::string error;
    const char* name = tag_name(kind);
    if (!tags_.parse(line, error)) {
      diagnostics_.error(number, error + " (its section is skipped)");
      return;
    }
    for (const char* attribute : {"unit", "scheme"}) {
      if (!tags_.has(attribute)) {
        diagnostics_.error(number, std::string("<") + name + "> tag has no " + attribute +
                                       " attribute (its section is skipped)");
        return;
      }
    }
    SampleSectionHeader header{kind, tags_.value("unit"), tags_.value("scheme"), {}, number};
    if (!is_unit_signature(header.unit)) {
      diagnostics_.error(number, "unit \"" + xml::printable(header.unit) +
                                     "\" is not 32 lower-case hexadecimal digits (its section is skipped)");
      return;
    }
    if (header.scheme.empty()) {
      diagnostics_.error(number, std::string("<") + name + "> tag has an empty scheme (its section is skipped)");
      return;
    }
    if (kind == SampleSectionKind::kTimestamps) {
      if (!tags_.has("when")) {
        diagnostics_.error(number, "<timestamps> tag has no when attribute (its section is skipped)");
        return;
      }
      header.when = tags_.value("when");
      if (header.when != "first" && header.when != "last") {
        diagnostics_.error(number, "when=\"" + xml::printable(header.when) +
                                       "\" is neither \"first\" nor \"last\" (its section is skipped)");
        return;
      }
    }
    visitor_.begin_section(header);
    if (tags_.self_closing()) {
      visitor_.end_section(true);
      section_ = Section::kNone;
    } else {
      section_ = Section::kOpen;
    }
  }

  SamplesVisitor& visitor_;
  LimitedDiagnostics& diagnostics_;
  xml::StartTagParser tags_;
  bool samples_report_ = false;
  bool outside_reported_ = false;
  Section section_ = Section::kNone;
  SampleSectionKind kind_ = SampleSectionKind::kSamples;
  uint64_t section_start_ = 0;
};

// read_report with a samples visitor: the body of each samples subreport is read as read_samples reads a bare
// samples body (what `extract-report samples` prints), in the same pass; other subreports go to the report
// visitor as read_report gives them.
class ReportSamplesHandler {
 public:
  ReportSamplesHandler(ReportVisitor& visitor, SamplesVisitor& samples, LimitedDiagnostics& diagnostics)
      : visitor_(visitor), samples_(samples), sections_(samples, diagnostics), diagnostics_(diagnostics) {}

  void begin(std::string_view id, uint64_t line) {
    samples_report_ = id == "samples";
    outside_reported_ = false;
    visitor_.begin_subreport(id, line);
  }

  void body(std::string_view line, uint64_t number) {
    if (!samples_report_) {
      visitor_.body_line(line, number);
    } else if (sections_.section_open() && !starts_with_lt(line)) {
      samples_.section_line(line, number);
    } else if (line.empty()) {
      // blank lines outside a section are harmless, as between subreports
    } else if (sections_.outside(line, number)) {
      outside_reported_ = false;
    } else if (!outside_reported_) {
      diagnostics_.error(number, "text outside a samples or timestamps section (ignored up to the next one)");
      outside_reported_ = true;
    }
  }

  void end(bool complete) {
    if (samples_report_) sections_.finish();  // a section still open was cut short, as at a bare body's end
    samples_report_ = false;
    visitor_.end_subreport(complete);
  }

  bool outside(std::string_view, uint64_t) { return false; }

  bool samples_report() const { return samples_report_; }
  const SamplesHandler& sections() const { return sections_; }

 private:
  ReportVisitor& visitor_;
  SamplesVisitor& samples_;
  SamplesHandler sections_;
  LimitedDiagnostics& diagnostics_;
  bool samples_report_ = false;
  bool outside_reported_ = false;
};

// extract_subreports: body lines that reach the parser one by one (those starting with '<', and all of them
// when the input has CRLF line ends) go out here; runs of plain body lines go out in bulk (see below).
class ExtractHandler {
 public:
  ExtractHandler(std::string_view id, const std::function<void(std::string_view)>& write)
      : id_(id), write_(write) {}

  void begin(std::string_view id, uint64_t) {
    target_ = id == id_;
    if (target_) ++found_;
  }
  void body(std::string_view line, uint64_t) {
    if (target_) write_line(line);
  }
  void end(bool) { target_ = false; }
  bool outside(std::string_view, uint64_t) { return false; }

  void write_line(std::string_view line) {
    write_(line);
    write_(std::string_view("\n", 1));
  }

  bool target() const { return target_; }
  uint64_t found() const { return found_; }

 private:
  std::string_view id_;
  const std::function<void(std::string_view)>& write_;
  bool target_ = false;
  uint64_t found_ = 0;
};

std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Calls line_fn(line, number) for each line of `run` (whole lines ending in "\n"), without "\n" and one "\r".
template <class LineFn>
void split_run(std::string_view run, uint64_t first_line_number, LineFn&& line_fn) {
  uint64_t number = first_line_number;
  text::for_each_line(run, [&](size_t begin, size_t end) {
    line_fn(strip_cr(run.substr(begin, end - begin)), number++);
  });
}

// Feeds `input` to `parser` one line at a time, except runs of lines that cannot be tags: while in_run() is
// true, every line up to the next one starting with '<' goes to on_run(run, first_line_number) in one piece
// (whole lines, each ending in "\n"). Only lines starting with '<' can change the state, so in_run() is
// asked again only after one of them. The input's last line, if it has no "\n", always goes to the parser.
template <class Parser, class InRun, class OnRun>
void drive(LineReader& input, Parser& parser, InRun&& in_run, OnRun&& on_run) {
  std::string_view block;
  while (LineReaderBlocks::next(input, block)) {
    const uint64_t first_line = input.line_number() + 1;  // number of the block's first line
    uint64_t lines = 0;                                   // lines of the block done so far
    const void* last_newline = memrchr(block.data(), '\n', block.size());
    const std::string_view whole =
        block.substr(0, last_newline != nullptr
                            ? static_cast<size_t>(static_cast<const char*>(last_newline) - block.data()) + 1
                            : 0);
    size_t pos = 0;
    while (pos < block.size()) {
      if (pos < whole.size() && in_run()) {
        size_t tag = text::find_line_starting_with(whole, pos, '<');
        if (tag > pos) {
          std::string_view run = whole.substr(pos, tag - pos);
          on_run(run, first_line + lines);
          lines += text::count_newlines(run);
          pos = tag;
          continue;
        }
      }
      const void* newline = std::memchr(block.data() + pos, '\n', block.size() - pos);
      size_t end = newline != nullptr ? static_cast<size_t>(static_cast<const char*>(newline) - block.data())
                                      : block.size();
      parser.line(strip_cr(block.substr(pos, end - pos)), first_line + lines);
      ++lines;
      pos = newline != nullptr ? end + 1 : end;
    }
    LineReaderBlocks::consume(input, block.size(), lines);
  }
  parser.finish();
}

}  // namespace

void ReportVisitor::body_lines(std::string_view lines, uint64_t first_line_number) {
  split_run(lines, first_line_number, [this](std::string_view line, uint64_t number) { body_line(line, number); });
}

void SamplesVisitor::section_lines(std::string_view lines, uint64_t first_line_number) {
  split_run(lines, first_line_number,
            [this](std::string_view line, uint64_t number) { section_line(line, number); });
}

bool read_report(LineReader& input, ReportVisitor& visitor) {
  LimitedDiagnostics diagnostics(input.sink(), input.name());
  uint64_t reader_errors = input.error_count();
  VisitorHandler handler(visitor);
  ReportParser<VisitorHandler> parser(handler, diagnostics);
  drive(
      input, parser, [&] { return parser.in_body(); },
      [&](std::string_view run, uint64_t first) {
        if (parser.delivering()) visitor.body_lines(run, first);
      });
  return diagnostics.errors() == 0 && input.error_count() == reader_errors;
}

bool read_report(LineReader& input, ReportVisitor& visitor, SamplesVisitor& samples) {
  LimitedDiagnostics diagnostics(input.sink(), input.name());
  uint64_t reader_errors = input.error_count();
  ReportSamplesHandler handler(visitor, samples, diagnostics);
  ReportParser<ReportSamplesHandler> parser(handler, diagnostics);
  // Runs: the body of another subreport, or the lines of a section (handed over only if it is well-formed).
  auto in_run = [&] {
    return parser.in_body() &&
           (!parser.delivering() || !handler.samples_report() || handler.sections().in_section());
  };
  drive(input, parser, in_run, [&](std::string_view run, uint64_t first) {
    if (!parser.delivering()) return;
    if (!handler.samples_report()) {
      visitor.body_lines(run, first);
    } else if (handler.sections().section_open()) {
      samples.section_lines(run, first);
    }
  });
  return diagnostics.errors() == 0 && input.error_count() == reader_errors;
}

bool read_samples(LineReader& input, SamplesVisitor& visitor) {
  LimitedDiagnostics diagnostics(input.sink(), input.name());
  uint64_t reader_errors = input.error_count();
  SamplesHandler handler(visitor, diagnostics);
  ReportParser<SamplesHandler> parser(handler, diagnostics);
  // Lines that are not ours (another subreport, or one whose tag was rejected) are skipped in runs too.
  auto ignored = [&] { return parser.in_body() && (!parser.delivering() || !handler.samples_report()); };
  drive(
      input, parser, [&] { return ignored() || handler.in_section(); },
      [&](std::string_view run, uint64_t first) {
        if (!ignored() && handler.section_open()) visitor.section_lines(run, first);
      });
  handler.finish();
  return diagnostics.errors() == 0 && input.error_count() == reader_errors;
}

ExtractResult extract_subreports(LineReader& input, std::string_view id,
                                 const std::function<void(std::string_view)>& write) {
  LimitedDiagnostics diagnostics(input.sink(), input.name());
  uint64_t reader_errors = input.error_count();
  ExtractHandler handler(id, write);
  ReportParser<ExtractHandler> parser(handler, diagnostics);
  drive(
      input, parser, [&] { return parser.in_body(); },
      [&](std::string_view run, uint64_t) {
        if (!parser.delivering() || !handler.target()) return;
        if (std::memchr(run.data(), '\r', run.size()) == nullptr) {
          write(run);  // the common case: the run goes out as it is, in one piece
        } else {
          split_run(run, 0, [&](std::string_view line, uint64_t) { handler.write_line(line); });
        }
      });
  ExtractResult result;
  result.found = handler.found();
  result.ok = diagnostics.errors() == 0 && input.error_count() == reader_errors;
  return result;
}

}  // namespace sampler
