// In-process symbolization of resolve-backtrace's markup from GSYM files (sections/symbolize_markup.h).
//
// The module map and the frame lines follow llvm-symbolizer's MarkupFilter (llvm/lib/DebugInfo/Symbolize/
// MarkupFilter.cpp), so that a user sees the same frames with or without llvm-symbolizer.
#include "sections/symbolize_markup.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "sections/core/char_buffer.h"
#include "sections/markup.h"

namespace sampler {
namespace {

std::string hex(uint64_t value, size_t width) {
  std::string text;
  do {
    text.insert(text.begin(), kHexDigits[value & 15]);
    value >>= 4;
  } while (value != 0);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

std::string hex_bytes(const std::vector<uint8_t>& bytes) {
  std::string text;
  for (uint8_t b : bytes) text += hex(b, 2);
  return text;
}

}  // namespace

std::string demangle(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  const std::string mangled(name);
  int status = 0;
  char* text = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (text == nullptr || status != 0) {
    std::free(text);
    return mangled;
  }
  std::string result(text);
  std::free(text);
  return result;
}

GsymDirectory::GsymDirectory(std::string directory, DiagnosticSink& sink)
    : directory_(std::move(directory)), sink_(sink) {}
GsymDirectory::~GsymDirectory() = default;

const symbfile::File* GsymDirectory::find_symbfile(const std::vector<uint8_t>& build_id, symbfile::Kind kind) {
  std::lock_guard lock(mutex_);
  auto key = std::make_pair(build_id, kind);
  auto found = symbfiles_.find(key);
  if (found != symbfiles_.end()) return found->second.get();
  const std::string path = directory_ + "/" + hex_bytes(build_id) +
                           (kind == symbfile::Kind::kRanges ? ".ranges.symbfile" : ".returnpads.symbfile");
  auto& slot = symbfiles_[key];
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;  // no symbfile is normal
  std::stringstream bytes;
  bytes << in.rdbuf();
  gsym::Error error;
  std::optional<symbfile::File> file = symbfile::File::parse(bytes.str(), kind, error);
  if (!file) {
    sink_.error(path, 0, "byte " + std::to_string(error.offset) + ": " + error.message);
    return nullptr;
  }
  slot = std::make_unique<symbfile::File>(std::move(*file));
  return slot.get();
}

const gsym::Reader* GsymDirectory::find(const std::vector<uint8_t>& build_id) {
  std::lock_guard lock(mutex_);
  auto found = files_.find(build_id);
  if (found != files_.end()) return found->second ? &found->second->reader() : nullptr;
  const std::string path = directory_ + "/" + hex_bytes(build_id) + ".gsym";
  gsym::Error error;
  std::unique_ptr<gsym::MappedFile> file = gsym::MappedFile::open(path, error);
  // A module without symbols is normal (libc, the vdso): only a file that is there but unusable is a problem.
  if (!file && error.message.find("No such file") == std::string::npos) {
    sink_.error(path, 0, "byte " + std::to_string(error.offset) + ": " + error.message);
  }
  auto& slot = files_[build_id];
  slot = std::move(file);
  return slot ? &slot->reader() : nullptr;
}

struct MarkupSymbolizer::Impl {
  struct Module {
    std::string name;
    std::vector<uint8_t> build_id;
  };
  struct Mmap {
    uint64_t size;
    uint64_t module_id;
    uint64_t module_relative_address;
  };

  SymbolSource& symbols;
  std::function<void(std::string_view)> write;
  DiagnosticSink& sink;
  Demangler demangler;
  std::function<void(const SymbolizedFrame&)> visit;
  std::string pending;  // the start of a line not yet ended
  std::map<uint64_t, Module> modules;
  std::map<uint64_t, Mmap> mmaps;  // by start address
  std::map<const gsym::Reader*, bool> reported;  // one message per damaged file
  std::map<const gsym::Reader*, gsym::LineTableCache> caches;
  // Demangled names by where the name lies in its mapped GSYM file (stable while the source lives): demangling
  // costs more than the lookup, and crash stacks repeat functions. Bounded by the string tables' sizes.
  std::unordered_map<const char*, std::string> demangled;
  gsym::LookupResult result;
  std::string out;

  Impl(SymbolSource& s, std::function<void(std::string_view)> w, DiagnosticSink& d, Demangler m)
      : symbols(s), write(std::move(w)), sink(d), demangler(m ? std::move(m) : Demangler(demangle)) {}

  const Mmap* containing(uint64_t address, uint64_t& start) const {
    auto it = mmaps.upper_bound(address);
    if (it == mmaps.begin()) return nullptr;
    --it;
    if (address - it->first >= it->second.size) return nullptr;
    start = it->first;
    return &it->second;
  }

  // The module map as llvm-symbolizer prints it: one "[[[ELF module ...]]]" line per module, its mmaps
  // appended until another module's element or a non-contextual line ends it.
  struct InfoMmap {
    uint64_t start, size;
    std::string mode;
  };
  std::optional<uint64_t> info_module;
  std::vector<InfoMmap> info_mmaps;

  void begin_info_line(uint64_t id) {
    const Module& module = modules.at(id);
    out = "[[[ELF module #0x" + hex(id, 1) + " \"" + module.name + "\"";
    write(out);
    info_module = id;
    info_mmaps.clear();
  }
  void end_info_line() {
    if (!info_module) return;
    std::stable_sort(info_mmaps.begin(), info_mmaps.end(),
                     [](const InfoMmap& a, const InfoMmap& b) { return a.start < b.start; });
    out.clear();
    for (size_t i = 0; i < info_mmaps.size(); ++i) {
      const InfoMmap& m = info_mmaps[i];
      out += i == 0 ? ' ' : ',';
      out += "[0x" + hex(m.start, 1) + "-0x" + hex(m.start + m.size - 1, 1) + "](" + m.mode + ")";
    }
    out += "]]]\n";
    write(out);
    info_module.reset();
  }

  void contextual(const markup::Node& node) {
    markup::ParseError error;
    if (node.tag == "reset") {
      if (!markup::parse_reset(node, error)) return;
      if (!modules.empty() || !mmaps.empty()) {
        end_info_line();
        write("[[[reset]]]\n");
      }
      modules.clear();
      mmaps.clear();
    } else if (node.tag == "module") {
      markup::ModuleElement module;
      if (!markup::parse_module(node, module, error)) return;
      if (!modules.try_emplace(module.id, Module{std::string(module.name), module.build_id}).second) return;
      end_info_line();
      begin_info_line(module.id);
      write("; BuildID=" + hex_bytes(module.build_id));
    } else if (node.tag == "mmap") {
      markup::MmapElement mmap;
      if (!markup::parse_mmap(node, mmap, error) || mmap.size == 0 || modules.count(mmap.module_id) == 0) return;
      uint64_t ignored = 0;
      // An mmap overlapping an earlier one is ignored, as llvm-symbolizer does.
      if (containing(mmap.start, ignored) != nullptr || containing(mmap.start + mmap.size - 1, ignored) != nullptr) {
        return;
      }
      mmaps.emplace(mmap.start, Mmap{mmap.size, mmap.module_id, mmap.module_relative_address});
      if (!info_module || *info_module != mmap.module_id) {
        end_info_line();
        begin_info_line(mmap.module_id);
        write("; adds");
      }
      std::string mode;
      if (mmap.readable) mode += 'r';
      if (mmap.writable) mode += 'w';
      if (mmap.executable) mode += 'x';
      info_mmaps.push_back({mmap.start, mmap.size, mode});
    }
  }

  void frame_header(uint64_t frame, size_t index, size_t count, uint64_t address) {
    std::string number = "#" + std::to_string(frame);
    if (number.size() < 6) out.append(6 - number.size(), ' ');
    out += number;
    if (index + 1 == count) {
      out += "   ";
    } else {
      std::string inner = std::to_string(index + 1);
      if (inner.size() < 2) inner.append(2 - inner.size(), ' ');
      out += '.';
      out += inner;
    }
    out += " 0x";
    out += hex(address, 16);
    out += ' ';
  }

  void bt(const markup::Node& node, std::string_view line) {
    markup::BtElement element;
    markup::ParseError error;
    if (!markup::parse_bt(node, element, error)) {
      pass(line);
      return;
    }
    // A return address is one past its call: one byte back lies inside the call (Symbolizer Markup Format, "bt").
    const uint64_t address = element.kind == markup::CodeKind::kPc ? element.address : element.address - 1;
    uint64_t start = 0;
    const Mmap* mmap = containing(address, start);
    auto module = mmap != nullptr ? modules.find(mmap->module_id) : modules.end();
    if (module == modules.end()) {
      // No mmap covers it: the raw element, as llvm-symbolizer prints it.
      out = "[[[bt";
      for (std::string_view field : node.fields) {
        out += ':';
        out.append(field);
      }
      out += "]]]\n";
      write(out);
      return;
    }
    const uint64_t relative = address - start + mmap->module_relative_address;
    const std::vector<uint8_t>& build_id = module->second.build_id;
    gsym::Found found = gsym::Found::kNo;
    // A caller frame is looked up in the return pads first (symbfile format): the instruction after a call, minus one,
    // names the whole inline chain of the call without a search.
    if (element.kind != markup::CodeKind::kPc) {
      const symbfile::File* pads = symbols.find_symbfile(build_id, symbfile::Kind::kReturnPads);
      if (pads != nullptr && pads->lookup_pad(relative, result)) found = gsym::Found::kYes;
    }
    const gsym::Reader* reader = found == gsym::Found::kYes ? nullptr : symbols.find(build_id);
    if (reader != nullptr) {
      gsym::Error problem;
      found = reader->lookup(relative, result, problem, &caches[reader]);
      if (found == gsym::Found::kError && !reported[reader]) {
        reported[reader] = true;
        sink.error(hex_bytes(module->second.build_id) + ".gsym", 0,
                   "byte " + std::to_string(problem.offset) + ": " + problem.message);
      }
    }
    if (found == gsym::Found::kNo && reader == nullptr) {
      const symbfile::File* ranges = symbols.find_symbfile(build_id, symbfile::Kind::kRanges);
      if (ranges != nullptr && ranges->lookup_ranges(relative, result)) found = gsym::Found::kYes;
    }
    if (visit) visit({element.frame, module->second.name, relative, found == gsym::Found::kYes ? &result : nullptr});
    const size_t count = found == gsym::Found::kYes ? result.frames.size() : 1;
    out.clear();
    for (size_t i = 0; i < count; ++i) {
      frame_header(element.frame, i, count, address);
      if (found == gsym::Found::kYes) {
        const gsym::Location& frame = result.frames[i];
        auto [name, added] = demangled.try_emplace(frame.name.data());
        if (added) name->second = demangler(frame.name);
        out += name->second;
        out += ' ';
        if (frame.dir.empty() && frame.file.empty()) {
          out += "<invalid>";  // llvm-symbolizer's word for a file it does not know
        } else {
          out.append(frame.dir);
          if (!frame.dir.empty()) out += '/';
          out.append(frame.file);
        }
        out += ':';
        out += std::to_string(frame.line);
        out += ' ';
      }
      out += '(';
      out += module->second.name;
      out += "+0x";
      out += hex(relative, 1);
      out += ")\n";
    }
    write(out);
  }

  void pass(std::string_view line) {
    out.assign(line);
    out += '\n';
    write(out);
  }

  void process(std::string_view line) {
    std::string_view content = line;
    if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
    auto node = markup::sole_element(content);
    if (node && markup::is_contextual_tag(node->tag)) {
      contextual(*node);  // replaced by the module lines, as llvm-symbolizer does
      return;
    }
    end_info_line();
    if (node && node->tag == "bt") {
      bt(*node, line);
    } else {
      pass(line);
    }
  }
};

MarkupSymbolizer::MarkupSymbolizer(SymbolSource& symbols, std::function<void(std::string_view)> write,
                                   DiagnosticSink& sink, Demangler demangler)
    : impl_(std::make_unique<Impl>(symbols, std::move(write), sink, std::move(demangler))) {}
MarkupSymbolizer::~MarkupSymbolizer() = default;

void MarkupSymbolizer::on_frame(std::function<void(const SymbolizedFrame&)> visit) { impl_->visit = std::move(visit); }

void MarkupSymbolizer::write(std::string_view piece) {
  while (!piece.empty()) {
    const size_t newline = piece.find('\n');
    if (newline == std::string_view::npos) {
      impl_->pending.append(piece);
      return;
    }
    if (impl_->pending.empty()) {
      impl_->process(piece.substr(0, newline));
    } else {
      impl_->pending.append(piece.substr(0, newline));
      impl_->process(impl_->pending);
      impl_->pending.clear();
    }
    piece.remove_prefix(newline + 1);
  }
}

void MarkupSymbolizer::finish() {
  if (!impl_->pending.empty()) {
    impl_->process(impl_->pending);
    impl_->pending.clear();
  }
  impl_->end_info_line();
}

}  // namespace sampler
