// Fuzz target: feedback reports (sections/report.h, sections/line_reader.h) from memory, plain and gzip.
//
// Every input is read by read_report, read_samples and extract_subreports. Beyond "no crash, no hang", the
// target checks properties the reader promises:
//  - the bulk calls (body_lines, section_lines) and the per-line calls see exactly the same lines;
//  - the same text gzip-compressed, or read through a pipe, or with tiny read sizes (buffer boundaries
//    everywhere), gives the same visitor calls and the same diagnostics;
//  - with a tiny line-length limit, no delivered line is longer than the limit;
//  - every subreport/section that begins also ends, once;
//  - extract_subreports writes exactly the body lines read_report delivers for its id, with the same diagnostics.
#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "sections/line_reader.h"
#include "sections/report.h"

namespace sampler::fuzz {
namespace {

// Splits a bulk run into its lines, checking the promised shape: whole lines, each ending in "\n", none
// starting with '<'. Calls `line` with each line without its "\n" and one "\r", as the per-line calls have it.
template <class F>
void split_run(std::string_view lines, uint64_t first, F&& line) {
  FUZZ_CHECK(!lines.empty());
  uint64_t number = first;
  while (!lines.empty()) {
    const size_t nl = lines.find('\n');
    FUZZ_CHECK(nl != std::string_view::npos);
    std::string_view one = lines.substr(0, nl);
    FUZZ_CHECK(one.empty() || one[0] != '<');
    if (!one.empty() && one.back() == '\r') one.remove_suffix(1);
    line(one, number++);
    lines.remove_prefix(nl + 1);
  }
}

// Records every visitor call; `bulk` takes body_lines in runs (and splits them) instead of line by line.
class ReportTrace : public ReportVisitor {
 public:
  explicit ReportTrace(bool bulk, size_t max_line) : bulk_(bulk), max_line_(max_line) {}
  void begin_subreport(std::string_view id, uint64_t line) override {
    FUZZ_CHECK(!open_);
    open_ = true;
    trace += "B " + std::string(id) + " " + std::to_string(line) + "\n";
    id_.assign(id);
    ++found[id_];
  }
  void body_line(std::string_view line, uint64_t number) override {
    FUZZ_CHECK(open_);
    FUZZ_CHECK(line.size() <= max_line_);
    trace += std::to_string(number) + " " + std::string(line) + "\n";
    bodies[id_].append(line).append("\n");
  }
  void body_lines(std::string_view lines, uint64_t first) override {
    if (!bulk_) return ReportVisitor::body_lines(lines, first);
    split_run(lines, first, [&](std::string_view one, uint64_t n) { body_line(one, n); });
  }
  void end_subreport(bool complete) override {
    FUZZ_CHECK(open_);
    open_ = false;
    trace += complete ? "E\n" : "E cut\n";
  }
  bool open() const { return open_; }
  std::string trace;
  /// What extract_subreports must write for each id, and how many subreports it must find.
  std::map<std::string, std::string> bodies;
  std::map<std::string, uint64_t> found;

 private:
  bool bulk_;
  size_t max_line_;
  bool open_ = false;
  std::string id_;
};

class SamplesTrace : public SamplesVisitor {
 public:
  explicit SamplesTrace(bool bulk) : bulk_(bulk) {}
  void begin_section(const SampleSectionHeader& h) override {
    FUZZ_CHECK(!open_);
    open_ = true;
    FUZZ_CHECK(h.unit.size() == 32);
    if (h.kind == SampleSectionKind::kTimestamps) FUZZ_CHECK(h.when == "first" || h.when == "last");
    trace += (h.kind == SampleSectionKind::kSamples ? "S " : "T ") + std::string(h.unit) + " " +
             std::string(h.scheme) + " " + std::string(h.when) + " " + std::to_string(h.line) + "\n";
  }
  void section_line(std::string_view line, uint64_t number) override {
    FUZZ_CHECK(open_);
    trace += std::to_string(number) + " " + std::string(line) + "\n";
  }
  void section_lines(std::string_view lines, uint64_t first) override {
    if (!bulk_) return SamplesVisitor::section_lines(lines, first);
    split_run(lines, first, [&](std::string_view one, uint64_t n) { section_line(one, n); });
  }
  void end_section(bool complete) override {
    FUZZ_CHECK(open_);
    open_ = false;
    trace += complete ? "E\n" : "E cut\n";
  }
  bool open() const { return open_; }
  std::string trace;

 private:
  bool bulk_;
  bool open_ = false;
};

struct Run {
  std::string trace;
  std::string diagnostics;
  bool ok;
  std::map<std::string, std::string> bodies;
  std::map<std::string, uint64_t> found;
};

// A pipe holding `text`, its write end closed: the reader's descriptor path (stdin for the tools). -1 if the
// text does not fit in the pipe's buffer (then the descriptor path is not tried).
int pipe_holding(std::string_view text) {
  if (text.size() > 60000) return -1;
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const ssize_t written = text.empty() ? 0 : write(fds[1], text.data(), text.size());
  close(fds[1]);
  if (written != static_cast<ssize_t>(text.size())) {
    close(fds[0]);
    return -1;
  }
  return fds[0];
}

// read_size 0: the reader's default. from_pipe: through a descriptor instead of from memory.
Run report_run(std::string_view text, bool bulk, size_t read_size, size_t max_line = LineReader::kMaxLineLength,
               bool from_pipe = false) {
  DiagnosticList diagnostics;
  const int fd = from_pipe ? pipe_holding(text) : -1;
  if (from_pipe && fd < 0) return report_run(text, bulk, read_size, max_line, false);
  std::unique_ptr<LineReader> reader = fd >= 0 ? std::make_unique<LineReader>(fd, "fuzz", diagnostics)
                                               : std::make_unique<LineReader>(text, "fuzz", diagnostics);
  LineReader& input = *reader;
  if (read_size != 0 || max_line != LineReader::kMaxLineLength) {
    input.set_limits(max_line, read_size != 0 ? read_size : LineReader::kDefaultReadSize);
  }
  ReportTrace visitor(bulk, max_line);
  const bool ok = read_report(input, visitor);
  if (fd >= 0) close(fd);
  FUZZ_CHECK(!visitor.open());
  FUZZ_CHECK(ok == (diagnostics.error_count() == 0));
  return {visitor.trace, render(diagnostics), ok, visitor.bodies, visitor.found};
}

Run samples_run(std::string_view text, bool bulk, size_t read_size) {
  DiagnosticList diagnostics;
  LineReader input(text, "fuzz", diagnostics);
  if (read_size != 0) input.set_limits(LineReader::kMaxLineLength, read_size);
  SamplesTrace visitor(bulk);
  const bool ok = read_samples(input, visitor);
  FUZZ_CHECK(!visitor.open());
  FUZZ_CHECK(ok == (diagnostics.error_count() == 0));
  return {visitor.trace, render(diagnostics), ok, {}, {}};
}

bool same(const Run& a, const Run& b) { return a.trace == b.trace && a.diagnostics == b.diagnostics && a.ok == b.ok; }

// extract_subreports writes exactly the body lines read_report delivers for the id, each ending in "\n", and
// reports the same diagnostics.
void check_extract(std::string_view text, const Run& report) {
  for (const std::string id : {"samples", "main-backtrace"}) {
    DiagnosticList diagnostics;
    LineReader input(text, "fuzz", diagnostics);
    std::string out;
    const ExtractResult result =
        extract_subreports(input, id, [&](std::string_view piece) { out.append(piece); });
    FUZZ_CHECK(result.ok == (diagnostics.error_count() == 0));
    FUZZ_CHECK(result.ok == report.ok);
    FUZZ_CHECK(render(diagnostics) == report.diagnostics);
    const auto body = report.bodies.find(id);
    FUZZ_CHECK(out == (body == report.bodies.end() ? std::string() : body->second));
    const auto found = report.found.find(id);
    FUZZ_CHECK(result.found == (found == report.found.end() ? 0 : found->second));
  }
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler::fuzz;
  using sampler::LineReader;
  const std::string_view text = as_text(data, size);

  const Run lines = report_run(text, false, 0);
  const Run bulk = report_run(text, true, 0);
  FUZZ_CHECK(same(lines, bulk));
  // Buffer boundaries everywhere: a read size chosen by the input's length, from 1 to 13 bytes, through a pipe
  // (memory input is read in place; read sizes matter for descriptors and gzip).
  const size_t small_read = 1 + size % 13;
  FUZZ_CHECK(same(lines, report_run(text, true, small_read, LineReader::kMaxLineLength, true)));
  FUZZ_CHECK(same(lines, report_run(text, false, 0, LineReader::kMaxLineLength, true)));
  // The same text gzip-compressed goes through the decompressing source (unless it is gzip already).
  const bool is_gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (!is_gzip) {
    const std::string compressed = gzip(text);
    if (!compressed.empty()) {
      FUZZ_CHECK(same(lines, report_run(compressed, true, 0)));
      FUZZ_CHECK(same(lines, report_run(compressed, false, small_read)));
      FUZZ_CHECK(same(lines, report_run(compressed, true, small_read, LineReader::kMaxLineLength, true)));
    }
  }
  // Tiny line-length limit: long lines are skipped with an error, never delivered.
  report_run(text, size % 2 == 0, small_read, 8 + size % 24);

  const Run samples = samples_run(text, false, 0);
  FUZZ_CHECK(same(samples, samples_run(text, true, small_read)));

  check_extract(text, lines);
  return 0;
}
