// Crash signatures from raw stacks (analysis/crash_signature.h): module-relative addresses, no symbolizer.
#include "analysis/crash_signature.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "sections/cbf_decode.h"
#include "sections/lines.h"
#include "sections/markup.h"

namespace sampler::analysis {
namespace {

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

std::string signal_name(std::string_view line) {
  std::string_view rest = line.substr(7);
  size_t colon = rest.find(':');
  std::string_view name = colon == std::string_view::npos ? rest : rest.substr(colon + 1);
  return std::string(name.substr(0, name.find(':')));
}

std::string join_top_frames(const std::vector<std::pair<std::string, bool>>& top, size_t frames) {
  size_t first = 0;
  while (first < top.size() && top[first].second) ++first;
  if (first == top.size()) first = 0;  // all in system libraries: keep them
  std::string stack;
  for (size_t i = first; i < top.size() && i < first + frames; ++i) {
    stack += (stack.empty() ? "" : " < ") + top[i].first;
  }
  if (first > 0) stack += " (after " + std::to_string(first) + " frames in system libraries)";
  return stack;
}

bool is_system_library(std::string_view name) {
  for (std::string_view prefix : {"libc.so", "libc-", "libpthread", "ld-linux", "ld64.so", "libstdc++", "libgcc_s",
                                  "libm.so", "libasan", "libubsan", "libtsan", "libsampler.so"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::string crash_signature(std::string_view body, size_t frames) {
  struct Mapping {
    uint64_t start, size, vaddr, module;
  };
  std::map<uint64_t, std::string> modules;
  std::vector<Mapping> mappings;
  std::string signal, legacy;
  size_t legacy_frames = 0;
  std::string_view cbf;
  while (!body.empty()) {
    std::string_view line = text::take_line(body);
    if (line.starts_with("cbf:")) {
      if (cbf.empty()) cbf = line.substr(4);
    } else if (line.starts_with("signal:")) {
      signal = signal_name(line);
    } else if (std::optional<markup::Node> node = markup::sole_element(line)) {
      markup::ParseError error;
      if (node->tag == "module") {
        markup::ModuleElement module;
        if (markup::parse_module(*node, module, error)) {
          std::string name(module.name);
          size_t slash = name.rfind('/');
          modules[module.id] = slash == std::string::npos ? name : name.substr(slash + 1);
        }
      } else if (node->tag == "mmap") {
        markup::MmapElement mmap;
        if (markup::parse_mmap(*node, mmap, error)) {
          mappings.push_back({mmap.start, mmap.size, mmap.module_relative_address, mmap.module_id});
        }
      }
    } else if (line.find('[') != std::string_view::npos && line.ends_with("]") && legacy_frames < frames) {
      // A legacy backtrace_symbols line ("ccrypt[0x804ff1c]"): kept as it is.
      legacy += (legacy.empty() ? "" : " < ") + std::string(line);
      ++legacy_frames;
    }
  }
  std::string stack;
  if (!cbf.empty()) {
    // Each frame as MODULE+0xOFFSET, and whether it is in a system library (join_top_frames() skips those).
    std::vector<std::pair<std::string, bool>> top;
    cbf::DecodedStack decoded = cbf::decode_stack_base64(cbf);
    for (const cbf::Item& item : decoded.items) {
      if (top.size() >= frames + kMaxSkippedFrames) break;
      if (item.type != cbf::ItemType::kFrame && item.type != cbf::ItemType::kRepeat) continue;
      uint64_t address = item.frame.address;
      std::string where = hex(address);
      bool system = false;
      for (const Mapping& m : mappings) {
        if (address >= m.start && address - m.start < m.size) {
          auto module = modules.find(m.module);
          std::string name = module != modules.end() ? module->second : "module" + std::to_string(m.module);
          system = is_system_library(name);
          where = name + "+" + hex(address - m.start + m.vaddr);
          break;
        }
      }
      top.emplace_back(std::move(where), system);
    }
    stack = join_top_frames(top, frames);
  } else {
    stack = legacy;
  }
  if (stack.empty() && signal.empty()) return "";
  return (signal.empty() ? std::string("crash") : signal) + (stack.empty() ? "" : " at " + stack);
}

}  // namespace sampler::analysis
