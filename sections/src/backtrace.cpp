// Rendering main-backtrace bodies as symbolizer markup (see sections/backtrace.h; docs/tools.md, resolve-backtrace,
// the Symbolizer Markup and Compact Backtrace Formats).
#include "sections/backtrace.h"

#include <algorithm>
#include <vector>

#include "checked.h"
#include "sections/core/base64.h"
#include "sections/core/cbf.h"
#include "sections/core/char_buffer.h"
#include "sections/core/markup_writer.h"
#include "sections/diagnostics.h"
#include "sections/markup.h"
#include "xml_tag.h"

namespace sampler {
namespace {

constexpr size_t npos = std::string_view::npos;
constexpr std::string_view kCbfPrefix = "cbf:";
constexpr std::string_view kSignalPrefix = "signal:";

/// "0x" (or "0X") and hex digits, any number of them, whose value fits in 64 bits.
std::optional<uint64_t> parse_hex_address(std::string_view text) {
  if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
  return checked::parse_hex(text.substr(2));
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

/// Control bytes other than tab and ESC (the markup's SGR colour sequences) mean this is not a text report.
bool looks_binary(std::string_view line) {
  return std::any_of(line.begin(), line.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\t' && c != '\x1b') || byte == 0x7f;
  });
}

std::string frame_range(uint64_t first, uint64_t count) {
  std::string text = "#" + std::to_string(first);
  if (count > 1) text += " to #" + std::to_string(first + (count - 1));
  return text;
}

}  // namespace

std::optional<uint64_t> parse_legacy_frame(std::string_view line) {
  // glibc's backtrace_symbols: "NAME[0xADDR]", "NAME(SYM+0xOFF)[0xADDR]", newer glibc "NAME(...) [0xADDR]".
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty() || line.back() != ']') return std::nullopt;
  size_t open = line.rfind('[');
  if (open == std::string_view::npos) return std::nullopt;
  auto address = parse_hex_address(line.substr(open + 1, line.size() - open - 2));
  if (!address) return std::nullopt;
  // Something must name the object: a bare "[0x1234]" is more likely plain text than a frame.
  std::string_view name = line.substr(0, open);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  if (name.empty()) return std::nullopt;
  return address;
}

std::optional<std::string> describe_signal_line(std::string_view line) {
  if (!line.starts_with(kSignalPrefix)) return std::nullopt;
  std::string_view rest = line.substr(kSignalPrefix.size());
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto number = checked::parse_decimal(rest.substr(0, colon));
  if (!number) return std::nullopt;
  rest = rest.substr(colon + 1);
  colon = rest.find(':');
  std::string_view name = rest.substr(0, colon);
  if (name.empty() || name.find_first_of("{}") != std::string_view::npos || looks_binary(name)) return std::nullopt;
  // The name is the report's text: an escape sequence in it is shown, not obeyed.
  std::string text = "Crashed with signal " + std::to_string(*number) + " (";
  append_escaped(text, name);
  text += ")";
  if (colon != std::string_view::npos) {
    // SIGSEGV, SIGBUS, SIGILL and SIGFPE carry the fault address (docs/formats.md section 3).
    auto fault = parse_hex_address(rest.substr(colon + 1));
    if (!fault) return std::nullopt;
    char buffer[24];
    CharBuffer out(buffer, sizeof buffer);
    markup::append_address(out, *fault);
    text += " at address ";
    text.append(out.data(), out.size());
  }
  return text;
}

struct BacktraceRenderer::Impl {
  std::string source_name;
  std::function<void(std::string_view)> write;
  DiagnosticSink& sink;
  bool ok = true;
  uint64_t frame_limit = kMaxFramesPerStack;

  std::string out;
  markup::MarkupParser markup;  // plain and contextual lines, elements spanning lines included
  uint64_t legacy_next_frame = 0;  // frame number of the next legacy line; 0 starts a new legacy stack
  bool binary_reported = false;   // one message per body for lines of binary data
  std::vector<uint8_t> decoded;    // the cbf line's bytes (kept to avoid reallocating per stack)
  // A cbf line that ends inside a base64 group: an error, unless it turns out to be the last line of a report
  // cut short by a crash (then a warning). Decided by what comes next.
  struct CutLine {
    uint64_t line;
    std::string error;
  };
  std::optional<CutLine> cut_line;
  std::vector<markup::Node> line_nodes;  // the markup of the line being rendered (kept to reuse its storage)

  // State of the stack being expanded.
  uint64_t next_frame = 0;     // number of the next frame
  uint64_t shown = 0;          // bt lines written for this stack
  uint64_t hidden_first = 0;   // first frame past the limit not yet summarised
  uint64_t hidden = 0;         // how many

  Impl(std::string name, std::function<void(std::string_view)> writer, DiagnosticSink& diagnostics)
      : source_name(std::move(name)), write(std::move(writer)), sink(diagnostics) {}

  void error(uint64_t line, std::string message) {
    sink.error(source_name, line, std::move(message));
    ok = false;
  }
  void put_line(std::string_view text) {
    out += text;
    out += '\n';
    if (out.size() >= (1u << 16)) flush();
  }
  void flush() {
    if (!out.empty()) write(out);
    out.clear();
  }
  void put_bt(uint64_t frame, uint64_t address, markup::CodeKind kind) {
    char buffer[80];
    CharBuffer text(buffer, sizeof buffer);
    markup::write_bt(text, frame, address, kind);
    text.append('\n');
    out.append(text.data(), text.size());
    if (out.size() >= (1u << 16)) flush();
  }

  /// Frame lines of one stack, at most frame_limit; the rest is counted for one summary line.
  /// Returns false if the frame numbers would pass 2^64-1.
  bool emit_frames(const cbf::Frame& frame, uint64_t count, uint64_t line_number);
  void summarise_hidden();
  void render_cbf(std::string_view text, uint64_t line_number);
  /// Reports a pending cut cbf line: as a warning if the report was cut short right after it, else an error.
  void settle_cut_line(bool cut_short) {
    if (!cut_line) return;
    if (cut_short) {
      sink.warning(DiagnosticCode::kCutShort, source_name, cut_line->line,
                   "cbf line cut short by the end of the report; the frames after the cut are lost");
    } else {
      error(cut_line->line, std::move(cut_line->error));
    }
    cut_line.reset();
  }
  void render_line(std::string_view line, uint64_t line_number);
  /// Checks a contextual element alone on its line; false (reported, with its column) if it is malformed.
  bool check_contextual(const markup::Node& element, uint64_t line_number);
  /// Writes the line the markup parser was given last, as markup for llvm-symbolizer: the SGR sequences outside
  /// elements as they are (the markup format lets them colour the output), every other control character escaped.
  void put_markup_line(std::string_view line, const std::vector<markup::Node>& nodes);
};

bool BacktraceRenderer::Impl::emit_frames(const cbf::Frame& frame, uint64_t count, uint64_t line_number) {
  // An async resume point is an exact code address, so it prints as pc (docs/formats.md section 3.2).
  auto kind = frame.kind == cbf::FrameKind::kRa ? markup::CodeKind::kRa : markup::CodeKind::kPc;
  uint64_t end;
  if (__builtin_add_overflow(next_frame, count, &end)) {
    error(line_number, "cbf line: frame numbers pass 18446744073709551615; the stack ends there");
    return false;
  }
  uint64_t room = frame_limit > shown ? frame_limit - shown : 0;
  uint64_t written = std::min(count, room);
  for (uint64_t i = 0; i < written; ++i) put_bt(next_frame + i, frame.address, kind);
  shown += written;
  if (written < count) {
    if (hidden == 0) hidden_first = next_frame + written;
    hidden += count - written;
  }
  next_frame = end;
  return true;
}

void BacktraceRenderer::Impl::summarise_hidden() {
  if (hidden == 0) return;
  put_line("... " + std::to_string(hidden) + (hidden == 1 ? " more frame" : " more frames") + " (" +
           frame_range(hidden_first, hidden) + ") not shown: at most " + std::to_string(frame_limit) +
           " frames are expanded per stack ...");
  hidden = 0;
}

void BacktraceRenderer::Impl::render_cbf(std::string_view text, uint64_t line_number) {
  next_frame = 0;
  shown = 0;
  hidden = 0;
  decoded.resize(base64::max_decoded_size(text.size()));
  base64::DecodeResult result = base64::decode(text.data(), text.size(), decoded.data(), decoded.size());
  bool base64_ok = result.ok;
  if (!base64_ok) {
    // Keep what can be decoded: the whole quanta before the offending character.
    std::string message = "cbf line: bad base64 at character " +
                          std::to_string(kCbfPrefix.size() + result.error_offset + 1) + ": " + result.error +
                          "; frames after it are lost";
    if (result.error_offset == text.size()) {
      cut_line = CutLine{line_number, std::move(message)};  // ends inside a group: maybe cut by a crash
    } else {
      error(line_number, std::move(message));
    }
    size_t whole = result.error_offset / 4 * 4;
    result = base64::decode(text.data(), whole, decoded.data(), decoded.size());
    if (!result.ok || result.size == 0) return;
  }
  cbf::Decoder decoder(decoded.data(), result.size);
  for (;;) {
    cbf::Item item = decoder.next();
    switch (item.type) {
      case cbf::ItemType::kFrame:
        if (!emit_frames(item.frame, 1, line_number)) return summarise_hidden();
        continue;
      case cbf::ItemType::kRepeat:
        // `rep` repeats the previous frame with the next numbers (docs/tools.md).
        if (!emit_frames(item.frame, item.count, line_number)) return summarise_hidden();
        continue;
      case cbf::ItemType::kOmit: {
        summarise_hidden();
        uint64_t end;
        if (__builtin_add_overflow(next_frame, item.count, &end)) {
          error(line_number, "cbf line: frame numbers pass 18446744073709551615; the stack ends there");
          return;
        }
        put_line("... " + std::to_string(item.count) + (item.count == 1 ? " frame" : " frames") + " omitted (" +
                 frame_range(next_frame, item.count) + ") ...");
        next_frame = end;
        continue;
      }
      case cbf::ItemType::kTruncated:
        summarise_hidden();
        put_line("... stack truncated: deeper frames were not recorded ...");
        return;
      case cbf::ItemType::kEnd:
      case cbf::ItemType::kEndOfData:
        summarise_hidden();
        return;
      case cbf::ItemType::kError:
        summarise_hidden();
        // After a base64 error the CBF data is cut at an arbitrary byte: that one problem is reported already.
        if (base64_ok) {
          error(line_number, "cbf line: malformed stack at byte " + std::to_string(item.offset) + ": " +
                                 item.error + "; the stack ends there");
        }
        return;
    }
  }
}

bool BacktraceRenderer::Impl::check_contextual(const markup::Node& element, uint64_t line_number) {
  // llvm-symbolizer stops symbolizing at a malformed contextual element, so a bad one is reported here, with its
  // column, and left out.
  markup::ParseError problem;
  bool valid;
  if (element.tag == "reset") {
    valid = markup::parse_reset(element, problem);
  } else if (element.tag == "module") {
    markup::ModuleElement module;
    valid = markup::parse_module(element, module, problem);
  } else {
    markup::MmapElement mmap;
    valid = markup::parse_mmap(element, mmap, problem);
  }
  if (!valid) {
    error(line_number, "column " + std::to_string(problem.column + 1) + ": " + problem.message + "; element left out");
  }
  return valid;
}

void BacktraceRenderer::Impl::put_markup_line(std::string_view line, const std::vector<markup::Node>& nodes) {
  size_t done = 0;
  for (const markup::Node& node : nodes) {
    // Only nodes of this line (an element that spans lines views the parser's copy) and only SGR sequences
    // go out unescaped; the bytes between them are escaped.
    if (!node.is_sgr() || node.line.data() != line.data()) continue;
    append_escaped(out, line.substr(done, node.column - done));
    out += node.text;
    done = node.column + node.text.size();
  }
  append_escaped(out, line.substr(done));
  out += '\n';
  if (out.size() >= (1u << 16)) flush();
}

void BacktraceRenderer::Impl::render_line(std::string_view line, uint64_t line_number) {
  std::vector<markup::Node>& nodes = line_nodes;
  nodes.clear();
  markup::Node node;
  if (markup.inside_element()) {
    // A line of an element that spans lines (Symbolizer Markup Format, hexdict): part of it, never a signal, cbf or
    // backtrace_symbols line of its own.
    markup.begin_line(line);
    while (markup.next(node)) nodes.push_back(node);
    legacy_next_frame = 0;
    return put_markup_line(line, nodes);
  }
  if (looks_binary(line)) {
    if (!binary_reported) {
      error(line_number, "binary data in a main-backtrace body; lines of binary data are skipped");
    }
    binary_reported = true;
    legacy_next_frame = 0;
    return;
  }
  if (auto address = parse_legacy_frame(line); address && !line.starts_with("{{{")) {
    // Legacy backtrace_symbols frames: the kind of address is unknown, so no :pc/:ra suffix (docs/tools.md).
    put_bt(legacy_next_frame++, *address, markup::CodeKind::kUnknown);
    return;
  }
  legacy_next_frame = 0;  // any other line ends a legacy stack
  if (line.starts_with(kCbfPrefix)) return render_cbf(line.substr(kCbfPrefix.size()), line_number);
  if (line.starts_with(kSignalPrefix)) {
    if (auto text = describe_signal_line(line)) return put_line(*text);
    return error(line_number, "malformed signal line (expected signal:NUMBER:NAME or signal:NUMBER:NAME:0xADDRESS)");
  }
  // Markup: contextual elements go through as they were (docs/tools.md), once checked; plain lines (an object
  // without a build ID, anything else) and blank lines go through too. A contextual element counts as alone on
  // its line when only white space and SGR sequences surround it.
  markup.begin_line(line);
  const markup::Node* element = nullptr;
  bool other_text = false;
  while (markup.next(node)) nodes.push_back(node);
  for (const markup::Node& piece : nodes) {
    if (piece.is_element()) {
      other_text |= element != nullptr;
      element = &piece;
    } else if (piece.kind == markup::Node::Kind::kText && piece.text.find_first_not_of(" \t\r\v\f") != npos) {
      other_text = true;
    }
  }
  if (markup.inside_element()) other_text = true;  // the line opens an element that spans lines
  if (element != nullptr && !other_text && markup::is_contextual_tag(element->tag) &&
      !check_contextual(*element, line_number)) {
    return;
  }
  put_markup_line(line, nodes);
}

BacktraceRenderer::BacktraceRenderer(std::string source_name, std::function<void(std::string_view)> write,
                                     DiagnosticSink& sink)
    : impl_(std::make_unique<Impl>(std::move(source_name), std::move(write), sink)) {}
BacktraceRenderer::~BacktraceRenderer() = default;

void BacktraceRenderer::end_body(bool complete) { impl_->settle_cut_line(!complete); }

void BacktraceRenderer::begin_body() {
  impl_->settle_cut_line(false);
  impl_->markup.reset();  // an element cannot span two bodies
  impl_->legacy_next_frame = 0;
  impl_->binary_reported = false;
}

void BacktraceRenderer::body_line(std::string_view line, uint64_t line_number) {
  impl_->settle_cut_line(false);  // a line follows: the cut was not the end of the report
  impl_->render_line(line, line_number);
}

bool BacktraceRenderer::finish() {
  impl_->settle_cut_line(true);
  impl_->flush();
  return impl_->ok;
}

void BacktraceRenderer::set_frame_limit(uint64_t limit) {
  impl_->frame_limit = std::min(limit, kMaxFramesPerStack);
}

bool render_backtraces(LineReader& input, const std::function<void(std::string_view)>& write,
                       DiagnosticSink& sink) {
  return render_backtraces(input, write, sink, kMaxFramesPerStack);
}

bool render_backtraces(LineReader& input, const std::function<void(std::string_view)>& write,
                       DiagnosticSink& sink, uint64_t frame_limit) {
  // The input is a whole report or bare bodies. Until the first <report> tag every line is a body line (bare
  // bodies, as extract-report prints them); from then on only main-backtrace subreports are rendered and text
  // between subreports is an error, as in read_report(). Tag lines are recognised as read_report() does.
  BacktraceRenderer renderer(input.name(), write, sink);
  renderer.set_frame_limit(frame_limit);
  // kNotText: bare input that turned out to be binary (an executable, a core file): skipped to the next tag.
  enum class State { kBare, kNotText, kOutside, kBacktrace, kOtherSubreport } state = State::kBare;
  xml::StartTagParser tags;
  std::string tag_error;
  bool ok = true;
  bool found = false;
  bool outside_reported = false;  // one error per run of text between subreports
  uint64_t subreport_line = 0;
  std::string_view line;
  while (input.next(line)) {
    uint64_t number = input.line_number();
    if (xml::is_start_tag(line, "report")) {
      if (state == State::kBacktrace || state == State::kBare) renderer.end_body(true);
      if (state == State::kBacktrace || state == State::kOtherSubreport) {
        sink.error(input.name(), subreport_line, "subreport has no closing </report> before line " +
                                                     std::to_string(number));
        ok = false;
      }
      outside_reported = false;
      if (!tags.parse(line, tag_error) || tags.name() != "report" || !tags.has("id")) {
        sink.error(input.name(), number, tags.name() == "report" || tag_error.empty()
                                             ? std::string("report tag without an id attribute")
                                             : tag_error);
        ok = false;
        state = State::kOtherSubreport;  // its body cannot be trusted to be a backtrace: skip to the next tag
      } else if (tags.value("id") == "main-backtrace") {
        state = State::kBacktrace;
        found = true;
        renderer.begin_body();
      } else {
        state = State::kOtherSubreport;
      }
      subreport_line = number;
      continue;
    }
    if (xml::is_end_tag(line, "report")) {
      if (state == State::kBacktrace || state == State::kBare) renderer.end_body(true);
      if (state == State::kBare || state == State::kNotText || state == State::kOutside) {
        sink.error(input.name(), number, "</report> without a matching <report>");
        ok = false;
      }
      state = State::kOutside;
      continue;
    }
    switch (state) {
      case State::kBare:
        if (looks_binary(line)) {
          sink.error(input.name(), number, "binary data: the input is not a report or main-backtrace body");
          ok = false;
          state = State::kNotText;
          break;
        }
        if (!is_blank(line)) found = true;
        renderer.body_line(line, number);
        break;
      case State::kBacktrace:
        renderer.body_line(line, number);
        break;
      case State::kNotText:
      case State::kOtherSubreport:
        break;
      case State::kOutside:
        if (!is_blank(line) && !outside_reported) {
          sink.error(input.name(), number, "text outside a subreport: " + xml::printable(line));
          ok = false;
          outside_reported = true;
        }
        break;
    }
  }
  // Bare bodies carry no end tag: their end is the input's, which may be a crash's cut (finish() settles that).
  if (state == State::kBacktrace) renderer.end_body(false);
  if (state == State::kBacktrace || state == State::kOtherSubreport) {
    // A report cut short by a crash is normal (docs/formats.md section 3): use what is there and warn.
    sink.warning(DiagnosticCode::kCutShort, input.name(), subreport_line,
                 "subreport cut short (no closing </report>); using what is there");
  }
  ok = renderer.finish() && ok;
  if (input.failed()) ok = false;
  if (!found) {
    if (state == State::kBare) {
      sink.error(input.name(), 0, "no backtrace in the input (it is empty)");
    } else if (state != State::kNotText) {
      sink.error(input.name(), 0, "no main-backtrace subreport in the report");
    }
    ok = false;
  }
  return ok;
}

}  // namespace sampler
