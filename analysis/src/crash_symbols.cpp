// Crash signatures from symbolized frames (analysis/crash_symbols.h): the body goes through the same markup
// rendering and in-process symbolizer as `resolve-backtrace --symbols` (sections/backtrace.h,
// sections/symbolize_markup.h); the frames come back through MarkupSymbolizer::on_frame.
#include "analysis/crash_symbols.h"

#include <cstdio>

#include "analysis/crash_signature.h"
#include "sections/backtrace.h"
#include "sections/hex.h"
#include "sections/line_reader.h"
#include "sections/lines.h"

namespace sampler::analysis {
namespace {


std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string symbolized_crash_signature(std::string_view body, size_t frames, SymbolSource& symbols) {
  // The signal name, as crash_signature() reads it.
  std::string signal;
  for (std::string_view rest = body; !rest.empty();) {
    std::string_view line = text::take_line(rest);
    if (line.starts_with("signal:")) {
      signal = signal_name(line);
      break;
    }
  }
  // Each frame (inlined calls expanded, innermost first) and whether it is in a system library (join_top_frames()
  // skips those, as for crash_signature()).
  std::vector<std::pair<std::string, bool>> top;
  DiagnosticList ignored;  // a stack that does not decode gives fewer frames; the raw signature is no better
  MarkupSymbolizer symbolizer(symbols, [](std::string_view) {}, ignored);
  symbolizer.on_frame([&](const SymbolizedFrame& frame) {
    if (top.size() >= frames + kMaxSkippedFrames) return;
    const std::string_view module = base_name(frame.module);
    const bool system = is_system_library(module);
    if (frame.result == nullptr) {
      char offset[32];
      std::snprintf(offset, sizeof offset, "+0x%llx", static_cast<unsigned long long>(frame.module_offset));
      top.emplace_back(std::string(module) + offset, system);
      return;
    }
    for (const gsym::Location& location : frame.result->frames) {
      std::string text = demangle(location.name);
      if (!location.file.empty()) {
        text += " (" + std::string(location.file) + ":" + std::to_string(location.line) + ")";
      }
      top.emplace_back(std::move(text), system);
    }
  });
  {
    LineReader input(body, "main-backtrace", ignored);
    render_backtraces(input, [&](std::string_view text) { symbolizer.write(text); }, ignored, frames + kMaxSkippedFrames);
  }
  symbolizer.finish();
  const std::string stack = join_top_frames(top, frames);
  if (stack.empty()) return crash_signature(body, frames);  // legacy stacks: no markup frames to symbolize
  return (signal.empty() ? std::string("crash") : signal) + " at " + stack;
}

StoreSymbols::Entry& StoreSymbols::entry(const std::vector<uint8_t>& build_id) {
  std::unique_ptr<Entry>& slot = entries_[build_id];
  if (!slot) slot = std::make_unique<Entry>();
  return *slot;
}

const gsym::Reader* StoreSymbols::find(const std::vector<uint8_t>& build_id) {
  std::lock_guard lock(mutex_);
  Entry& e = entry(build_id);
  if (!e.fetched) {
    e.fetched = true;
    std::string error;
    const std::string id = hex_bytes(build_id);
    switch (store_.get_symbols(app_, id, "gsym", e.gsym_bytes, error)) {
      case store::GetStatus::kMissing: break;
      case store::GetStatus::kError: sink_.error("symbols " + id + ".gsym", 0, error); break;
      case store::GetStatus::kFound: {
        gsym::Error problem;
        e.gsym = gsym::Reader::open(e.gsym_bytes, problem);
        if (!e.gsym) sink_.error("symbols " + id + ".gsym", 0, "byte " + std::to_string(problem.offset) + ": " +
                                                                   problem.message);
      }
    }
  }
  return e.gsym ? &*e.gsym : nullptr;
}

const symbfile::File* StoreSymbols::find_symbfile(const std::vector<uint8_t>& build_id, symbfile::Kind kind) {
  std::lock_guard lock(mutex_);
  Entry& e = entry(build_id);
  if (!e.symbfiles_fetched[kind]) {
    e.symbfiles_fetched[kind] = true;
    const std::string id = hex_bytes(build_id);
    const char* name = kind == symbfile::Kind::kRanges ? "ranges" : "returnpads";
    std::string bytes, error;
    switch (store_.get_symbols(app_, id, name, bytes, error)) {
      case store::GetStatus::kMissing: break;
      case store::GetStatus::kError: sink_.error("symbols " + id + "." + name, 0, error); break;
      case store::GetStatus::kFound: {
        gsym::Error problem;
        std::optional<symbfile::File> file = symbfile::File::parse(bytes, kind, problem);
        if (file) {
          e.symbfiles[kind] = std::make_unique<symbfile::File>(std::move(*file));
        } else {
          sink_.error("symbols " + id + "." + name, 0, "byte " + std::to_string(problem.offset) + ": " +
                                                           problem.message);
        }
      }
    }
  }
  auto it = e.symbfiles.find(kind);
  return it == e.symbfiles.end() ? nullptr : it->second.get();
}

}  // namespace sampler::analysis
