// Fuzz target: the main-backtrace renderer (sections/backtrace.h): render_backtraces over a report or bare bodies,
// the line-by-line BacktraceRenderer, parse_legacy_frame and describe_signal_line. The renderer parses field
// input: markup elements, signal lines, base64 and CBF, glibc backtrace_symbols lines.
//
// Stacks are expanded to at most kFrameLimit frame lines here (the real limit, 10^6, would only cost time).
// Checked properties: the output is whole lines without control characters (but tab and the Symbolizer Markup Format's
// SGR sequences); every contextual element alone on its line is one the markup reader accepts (llvm-symbolizer
// --filter-markup stops at a malformed one); bt lines have consecutive frame
// numbers within a stack; no stack has more than kFrameLimit frame lines; the result is true exactly when no
// error was reported.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "sections/backtrace.h"
#include "sections/markup.h"

namespace sampler::fuzz {
namespace {

constexpr uint64_t kFrameLimit = 300;

// `numbering`: check frame numbers and the per-stack limit (not when the input holds bt elements of its own,
// which plain lines pass through).
void check_output(const std::string& out, bool numbering) {
  FUZZ_CHECK(out.empty() || out.back() == '\n');
  std::string_view rest = out;
  uint64_t run = 0;  // bt lines since the last frame 0
  uint64_t previous = 0;
  bool have_previous = false;
  markup::MarkupParser parser;  // lines of an element that spans lines are part of it, never elements of their own
  markup::Node node;
  while (!rest.empty()) {
    const size_t newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline + 1);
    // No control character but tab and the SGR sequences the Symbolizer Markup Format allows.
    for (size_t i = 0; i < line.size(); ++i) {
      const auto c = static_cast<unsigned char>(line[i]);
      if (c == 0x1b) {
        const size_t length = markup::sgr_length(line.substr(i));
        FUZZ_CHECK(length != 0);
        i += length - 1;
        continue;
      }
      FUZZ_CHECK((c >= 0x20 && c != 0x7f) || c == '\t');
    }
    parser.begin_line(line);
    while (parser.next(node)) {
    }
    // Only lines that are one element are the renderer's own (bt) or checked contextual ones; anything else is
    // a plain line passed through as it was.
    const auto element = markup::sole_element(line);
    if (parser.line_started_inside() || parser.inside_element() || !element ||
        (element->tag != "bt" && !markup::is_contextual_tag(element->tag))) {
      have_previous = false;  // plain lines (omitted frames, summaries, signal) break a run of numbers
      // A stack may begin with omitted frames instead of frame 0: its own limit starts there.
      if (line.starts_with("... ") &&
          (line.find(" omitted (#0)") != std::string_view::npos ||
           line.find(" omitted (#0 to ") != std::string_view::npos)) {
        run = 0;
      }
      continue;
    }
    markup::ParseError error;
    if (element->tag == "bt") {
      markup::BtElement bt;
      if (!markup::parse_bt(*element, bt, error)) {
        have_previous = false;  // a malformed bt passed through from the input as a plain line
        continue;
      }
      if (bt.frame == 0) run = 0;
      if (numbering && have_previous && bt.frame != 0) FUZZ_CHECK(bt.frame == previous + 1);
      // Legacy frames (no kind) are one per input line, not limited.
      if (numbering) FUZZ_CHECK(++run <= kFrameLimit || bt.kind == markup::CodeKind::kUnknown);
      previous = bt.frame;
      have_previous = true;
      continue;
    }
    have_previous = false;
    if (element->tag == "reset") {
      FUZZ_CHECK(markup::parse_reset(*element, error));
    } else if (element->tag == "module") {
      markup::ModuleElement module;
      FUZZ_CHECK(markup::parse_module(*element, module, error));
    } else {
      markup::MmapElement mmap;
      FUZZ_CHECK(markup::parse_mmap(*element, mmap, error));
    }
  }
}

}  // namespace
}  // namespace sampler::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sampler;
  using namespace sampler::fuzz;
  const std::string_view text = as_text(data, size);
  const bool has_bt = text.find("{{{bt") != std::string_view::npos;

  // The tool's path: a report or bare bodies.
  {
    DiagnosticList diagnostics;
    LineReader input(text, "fuzz", diagnostics);
    std::string out;
    const bool ok = render_backtraces(input, [&](std::string_view piece) { out.append(piece); }, diagnostics,
                                      kFrameLimit);
    FUZZ_CHECK(ok == (diagnostics.error_count() == 0));
    check_output(out, !has_bt);
  }
  // Every line as a body line of one body, and the line-level helpers.
  {
    DiagnosticList diagnostics;
    std::string out;
    BacktraceRenderer renderer("fuzz", [&](std::string_view piece) { out.append(piece); }, diagnostics);
    renderer.set_frame_limit(kFrameLimit);
    renderer.begin_body();
    std::string_view rest = text;
    uint64_t number = 0;
    for (;;) {
      const size_t newline = rest.find('\n');
      const std::string_view line = rest.substr(0, newline);
      renderer.body_line(line, ++number);
      if (auto address = parse_legacy_frame(line)) FUZZ_CHECK(line.find(']') != std::string_view::npos);
      if (auto description = describe_signal_line(line)) {
        FUZZ_CHECK(line.starts_with("signal:") && description->starts_with("Crashed with signal "));
      }
      if (newline == std::string_view::npos) break;
      rest.remove_prefix(newline + 1);
    }
    const bool ok = renderer.finish();
    FUZZ_CHECK(ok == (diagnostics.error_count() == 0));
    check_output(out, !has_bt);
  }
  return 0;
}
