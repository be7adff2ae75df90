// DWARF (through LLVM's DebugInfo) to GSYM functions (symbols/dwarf_to_gsym.h).
//
// The choices follow LLVM's own DwarfTransformer (llvm/lib/DebugInfo/GSYM/DwarfTransformer.cpp), so that files
// we write answer as llvm-gsymutil's do: linkage names, absolute file paths as llvm-symbolizer builds them, one
// entry per range of a split function, a first row moved to the function's start, repeated file/line rows
// dropped (they cannot change an answer), inlined calls kept only where they lie inside their parent.
#include "symbols/dwarf_to_gsym.h"

#include "symbols/symbfile.h"

#include "sections/elf_section.h"
#include "sections/hex.h"

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/DebugInfo/DWARF/DWARFCompileUnit.h>
#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/DebugInfo/DWARF/DWARFDebugLine.h>
#include <llvm/DebugInfo/DWARF/DWARFDie.h>
#include <llvm/DebugInfo/DWARF/DWARFFormValue.h>
#include <llvm/Object/BuildID.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/ErrorHandling.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>
#include <unordered_map>

namespace sampler::symbols {
namespace {

using llvm::DWARFDie;
namespace dw = llvm::dwarf;

constexpr size_t kMaxReportedDwarfProblems = 10;  // a damaged file says so, without thousands of lines
constexpr size_t kMaxInlineDepth = 200;            // below the reader's limit (sections/gsym.h)

/// The problems LLVM's DWARF parser reports, kept (the library never prints) and passed on a few at a time.
struct DwarfProblems {
  std::vector<std::string> messages;
  size_t count = 0;
  void add(llvm::Error error) {
    ++count;
    std::string text = llvm::toString(std::move(error));
    if (messages.size() < kMaxReportedDwarfProblems) messages.push_back(std::move(text));
  }
};

/// One compile unit's line table and its file names (DWARF index -> absolute path, as llvm-symbolizer prints).
class UnitLines {
 public:
  UnitLines(llvm::DWARFContext& context, llvm::DWARFUnit& unit)
      : table_(context.getLineTableForUnit(&unit)), comp_dir_(unit.getCompilationDir()) {}
  const llvm::DWARFDebugLine::LineTable* table() const { return table_; }
  const std::string& path(uint64_t index) {
    auto found = paths_.find(index);
    if (found != paths_.end()) return found->second;
    std::string path;
    if (table_ != nullptr) {
      table_->getFileNameByIndex(index, comp_dir_ ? comp_dir_ : "",
                                 llvm::DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath, path);
    }
    return paths_.emplace(index, std::move(path)).first->second;
  }

 private:
  const llvm::DWARFDebugLine::LineTable* table_;
  const char* comp_dir_;
  std::unordered_map<uint64_t, std::string> paths_;
};

std::string die_name(const DWARFDie& die) {
  const char* name = die.getName(llvm::DINameKind::LinkageName);
  return name != nullptr ? name : "";
}

std::vector<AddressRange> die_ranges(const DWARFDie& die) {
  std::vector<AddressRange> out;
  auto ranges = die.getAddressRanges();
  if (!ranges) {
    llvm::consumeError(ranges.takeError());
    return out;
  }
  for (const auto& r : *ranges) {
    if (r.LowPC < r.HighPC) out.push_back({r.LowPC, r.HighPC});
  }
  std::sort(out.begin(), out.end(), [](const AddressRange& a, const AddressRange& b) { return a.start < b.start; });
  return out;
}

bool inside(const AddressRange& r, const std::vector<AddressRange>& parents) {
  return std::any_of(parents.begin(), parents.end(),
                     [&](const AddressRange& p) { return r.start >= p.start && r.end <= p.end; });
}

/// The calls inlined below `die` that lie inside `parent` (lexical blocks are looked through, as LLVM does).
void collect_inlined(const DWARFDie& die, const std::vector<AddressRange>& parent, UnitLines& lines,
                     std::vector<InlineCall>& out, size_t depth) {
  if (depth > kMaxInlineDepth) return;
  for (DWARFDie child = die.getFirstChild(); child && !child.isNULL(); child = child.getSibling()) {
    const auto tag = child.getTag();
    if (tag == dw::DW_TAG_inlined_subroutine) {
      InlineCall call;
      for (const AddressRange& r : die_ranges(child)) {
        if (inside(r, parent)) call.ranges.push_back(r);
      }
      if (call.ranges.empty()) continue;
      call.name = die_name(child);
      call.call_file = lines.path(llvm::dwarf::toUnsigned(child.find(dw::DW_AT_call_file), 0));
      call.call_line = static_cast<uint32_t>(llvm::dwarf::toUnsigned(child.find(dw::DW_AT_call_line), 0));
      collect_inlined(child, call.ranges, lines, call.children, depth + 1);
      out.push_back(std::move(call));
    } else if (tag == dw::DW_TAG_lexical_block) {
      collect_inlined(child, parent, lines, out, depth + 1);
    }
  }
}

/// The line rows of [f.start, f.start + f.size), as LLVM's DwarfTransformer keeps them.
void collect_lines(Function& f, UnitLines& lines) {
  const auto* table = lines.table();
  if (table == nullptr) return;
  std::vector<uint32_t> rows;
  if (!table->lookupAddressRange({f.start, llvm::object::SectionedAddress::UndefSection}, f.size, rows)) return;
  const llvm::DWARFDebugLine::Row* previous = nullptr;
  for (uint32_t index : rows) {
    const auto& row = table->Rows[index];
    uint64_t address = row.Address.Address;
    if (address < f.start) {
      address = f.start;  // the row in force at the function's start
    } else if (address >= f.start + f.size) {
      continue;
    }
    if (previous != nullptr && row.Address.Address < previous->Address.Address) break;  // a repeated sequence
    if (row.EndSequence) {
      previous = nullptr;
      continue;
    }
    const std::string& path = lines.path(row.File);
    if (!f.lines.empty() && f.lines.back().line == row.Line && f.lines.back().file == path) {
      previous = &row;
      continue;
    }
    if (!f.lines.empty() && address < f.lines.back().address) break;
    f.lines.push_back({address, path, row.Line});
    previous = &row;
  }
}

void collect_functions(const DWARFDie& die, UnitLines& lines, const std::vector<AddressRange>& text,
                       std::vector<Function>& out, size_t depth) {
  if (depth > kMaxInlineDepth) return;
  for (DWARFDie child = die.getFirstChild(); child && !child.isNULL(); child = child.getSibling()) {
    const auto tag = child.getTag();
    if (tag == dw::DW_TAG_subprogram) {
      const std::string name = die_name(child);
      if (!name.empty()) {
        for (const AddressRange& r : die_ranges(child)) {
          if (!inside(r, text)) continue;  // discarded code (address 0 tombstones) or not code at all
          Function f;
          f.start = r.start;
          f.size = r.end - r.start;
          f.name = name;
          collect_lines(f, lines);
          collect_inlined(child, {r}, lines, f.inlined, 0);
          out.push_back(std::move(f));
        }
      }
    }
    if (tag != dw::DW_TAG_inlined_subroutine) collect_functions(child, lines, text, out, depth + 1);
  }
}

std::string find_companion(const std::string& build_id_hex, const ConvertOptions& options) {
  if (build_id_hex.size() < 3) return "";
  for (const std::string& dir : options.debug_dirs) {
    const std::string path = dir + "/.build-id/" + build_id_hex.substr(0, 2) + "/" + build_id_hex.substr(2) + ".debug";
    std::error_code ignored;
    if (std::filesystem::is_regular_file(path, ignored)) return path;
  }
  return "";
}

bool has_section(const llvm::object::ObjectFile& object, llvm::StringRef name) {
  for (const auto& section : object.sections()) {
    auto section_name = section.getName();
    if (!section_name) {
      llvm::consumeError(section_name.takeError());
      continue;
    }
    if (*section_name == name || (name.starts_with(".debug_") && *section_name == ".z" + name.substr(1).str())) {
      return true;
    }
  }
  return false;
}

// LLVM decompresses an SHF_COMPRESSED section into one buffer of the size its header states, and stops the process
// when that allocation fails ("LLVM ERROR: out of memory"). The stated sizes are checked first, as the formats
// library checks them for extract-section, and more tightly: debug information compresses 3 to 20 times, so a
// section that claims more than kMaxDebugExpansion times its compressed size is a bomb or a lie.
constexpr uint64_t kMaxDebugExpansion = 200;

std::string check_compressed_sections(const llvm::object::ObjectFile& object) {
  const auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&object);
  if (elf == nullptr) return "";
  const bool is64 = object.getBytesInAddress() == 8;
  const bool little = object.isLittleEndian();
  uint64_t total = 0;
  for (const llvm::object::ELFSectionRef section : elf->sections()) {
    if ((section.getFlags() & llvm::ELF::SHF_COMPRESSED) == 0) continue;
    llvm::Expected<llvm::StringRef> name = section.getName();
    std::string label = name ? "section '" + name->str() + "'" : "a compressed section";
    if (!name) llvm::consumeError(name.takeError());
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      return label + ": its contents lie outside the file";
    }
    // Elf32_Chdr: type, size, alignment (4 bytes each); Elf64_Chdr: type, reserved, size, alignment.
    size_t header = is64 ? 24 : 12, at = is64 ? 8 : 4, width = is64 ? 8 : 4;
    if (contents->size() < header) return label + ": shorter than its compression header";
    uint64_t stated = 0;
    for (size_t i = 0; i < width; ++i) {
      uint64_t byte = static_cast<unsigned char>((*contents)[at + (little ? i : width - 1 - i)]);
      stated |= byte << (8 * i);
    }
    uint64_t compressed = contents->size() - header;
    if (stated / kMaxDebugExpansion > compressed || stated > kMaxDecompressedSize - total) {
      return label + " states a decompressed size of " + std::to_string(stated) + " bytes from " +
             std::to_string(compressed) + " (the limits: " + std::to_string(kMaxDebugExpansion) +
             " times the compressed size, and " + std::to_string(kMaxDecompressedSize) + " bytes in all)";
    }
    total += stated;
  }
  return "";
}

std::vector<AddressRange> text_ranges(const llvm::object::ObjectFile& object) {
  std::vector<AddressRange> out;
  for (const auto& section : object.sections()) {
    if (section.isText() && section.getSize() > 0) {
      out.push_back({section.getAddress(), section.getAddress() + section.getSize()});
    }
  }
  return out;
}

/// The symbol table as llvm-symbolizer reads it (SymbolizableObjectFile): function, object and untyped symbols
/// of a section, ordered by (address, size), the last of each address kept. llvm-symbolizer names a stack's
/// outermost frame by this table rather than by DWARF (clones such as "f.isra.0", "main.cold", constructor
/// variants), so the GSYM functions are named the same way.
class SymbolTable {
 public:
  struct Symbol {
    uint64_t address;
    uint64_t size;
    std::string name;
    bool function;
    std::string file;  ///< a local symbol's STT_FILE name (llvm-symbolizer's file when DWARF has none)
  };
  explicit SymbolTable(const llvm::object::ObjectFile& object) {
    const auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&object);
    if (elf == nullptr) return;
    auto symbols = elf->symbols();
    if (symbols.empty()) symbols = elf->getDynamicSymbolIterators();
    for (const llvm::object::ELFSymbolRef symbol : symbols) add(object, symbol);
    std::stable_sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
      return a.address != b.address ? a.address < b.address : a.size < b.size;
    });
    std::vector<Symbol> kept;
    for (size_t i = 0; i < symbols_.size(); ++i) {
      if (i + 1 == symbols_.size() || symbols_[i + 1].address != symbols_[i].address) {
        kept.push_back(std::move(symbols_[i]));
      }
    }
    symbols_ = std::move(kept);
  }
  /// The symbol llvm-symbolizer finds for `address`, or nullptr.
  const Symbol* find(uint64_t address) const {
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                               [](uint64_t a, const Symbol& s) { return a < s.address; });
    if (it == symbols_.begin()) return nullptr;
    --it;
    if (it->size != 0 && address - it->address >= it->size) return nullptr;
    return &*it;
  }
  const std::vector<Symbol>& all() const { return symbols_; }

 private:
  void add(const llvm::object::ObjectFile& object, const llvm::object::ELFSymbolRef& symbol) {
    // ELF puts each STT_FILE symbol before the local symbols of its file.
    if (symbol.getELFType() == llvm::ELF::STT_FILE) {
      auto name = symbol.getName();
      if (name) {
        current_file_ = name->str();
      } else {
        llvm::consumeError(name.takeError());
      }
      return;
    }
    auto section = symbol.getSection();
    if (!section) {
      llvm::consumeError(section.takeError());
      return;
    }
    if (*section == object.section_end()) return;
    const uint8_t type = symbol.getELFType();
    if (type != llvm::ELF::STT_NOTYPE && type != llvm::ELF::STT_FUNC && type != llvm::ELF::STT_OBJECT &&
        type != llvm::ELF::STT_GNU_IFUNC) {
      return;
    }
    auto flags = symbol.getFlags();
    if (!flags) {
      llvm::consumeError(flags.takeError());
      return;
    }
    if (*flags & llvm::object::SymbolRef::SF_FormatSpecific) return;
    auto address = symbol.getAddress();
    auto name = symbol.getName();
    if (!address || !name) {
      if (!address) llvm::consumeError(address.takeError());
      if (!name) llvm::consumeError(name.takeError());
      return;
    }
    const bool local = symbol.getBinding() == llvm::ELF::STB_LOCAL;
    symbols_.push_back({*address, symbol.getSize(), name->str(), type == llvm::ELF::STT_FUNC,
                        local ? current_file_ : std::string()});
  }
  std::vector<Symbol> symbols_;
  std::string current_file_;
};

/// Names DWARF functions by the symbol table, and adds function symbols no DWARF function covers (start-up
/// code, assembly) with a name and no lines.
void apply_symbols(const SymbolTable& table, const std::vector<AddressRange>& text, std::vector<Function>& functions) {
  std::vector<AddressRange> covered;
  for (Function& f : functions) {
    covered.push_back({f.start, f.start + f.size});
    if (const auto* symbol = table.find(f.start)) {
      f.name = symbol->name;
      // Where no line row covers the code (before a function part's first row), llvm-symbolizer names the file of
      // a local symbol by its STT_FILE symbol, line 0.
      if (!symbol->file.empty() && (f.lines.empty() || f.lines.front().address > f.start)) {
        f.lines.insert(f.lines.begin(), LineRow{f.start, symbol->file, 0});
      }
    }
  }
  std::sort(covered.begin(), covered.end(), [](const AddressRange& a, const AddressRange& b) {
    return a.start < b.start;
  });
  auto is_covered = [&](uint64_t address) {
    auto it = std::upper_bound(covered.begin(), covered.end(), address,
                               [](uint64_t a, const AddressRange& r) { return a < r.start; });
    return it != covered.begin() && address < std::prev(it)->end;
  };
  for (const auto& symbol : table.all()) {
    if (!symbol.function || symbol.size == 0 || symbol.name.empty() || is_covered(symbol.address)) continue;
    if (!inside({symbol.address, symbol.address + symbol.size}, text)) continue;
    Function f;
    f.start = symbol.address;
    f.size = symbol.size;
    f.name = symbol.name;
    // No DWARF: llvm-symbolizer names the file of a local symbol by its STT_FILE symbol, with line 0.
    if (!symbol.file.empty()) f.lines.push_back({symbol.address, symbol.file, 0});
    functions.push_back(std::move(f));
  }
}

}  // namespace


bool read_debug_info(const std::string& path, const ConvertOptions& options, DebugInfo& out, DiagnosticSink& sink) {
  auto binary = llvm::object::ObjectFile::createObjectFile(path);
  if (!binary) {
    sink.error(path, 0, "cannot read: " + llvm::toString(binary.takeError()));
    return false;
  }
  const llvm::object::ObjectFile& object = *binary->getBinary();
  if (!object.isELF()) {
    sink.error(path, 0, "not an ELF file");
    return false;
  }
  if (std::string problem = check_compressed_sections(object); !problem.empty()) {
    sink.error(path, 0, problem);
    return false;
  }
  const auto id = llvm::object::getBuildID(&object);
  out.build_id.assign(id.begin(), id.end());
  const std::vector<AddressRange> text = text_ranges(object);

  // The DWARF: in the file itself, else in a separate debug file found by build ID.
  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> companion =
      llvm::object::OwningBinary<llvm::object::ObjectFile>();
  const llvm::object::ObjectFile* dwarf_object = &object;
  if (!has_section(object, ".debug_info")) {
    const std::string found = find_companion(hex_bytes(out.build_id), options);
    if (!found.empty()) {
      companion = llvm::object::ObjectFile::createObjectFile(found);
      if (companion) {
        if (std::string problem = check_compressed_sections(*companion->getBinary()); !problem.empty()) {
          sink.error(found, 0, problem);
          return false;
        }
        dwarf_object = companion->getBinary();
      } else {
        sink.warning(path, 0, "cannot read debug file '" + found + "': " + llvm::toString(companion.takeError()));
        companion = llvm::object::OwningBinary<llvm::object::ObjectFile>();
      }
    }
  }
  DwarfProblems problems;
  auto context = llvm::DWARFContext::create(
      *dwarf_object, llvm::DWARFContext::ProcessDebugRelocations::Process, nullptr, "",
      [&](llvm::Error e) { problems.add(std::move(e)); }, [&](llvm::Error e) { problems.add(std::move(e)); });
  for (const auto& unit : context->compile_units()) {
    out.had_dwarf = true;
    UnitLines lines(*context, *unit);
    collect_functions(unit->getUnitDIE(false), lines, text, out.functions, 0);
  }
  for (const std::string& message : problems.messages) sink.warning(path, 0, "DWARF: " + message);
  if (problems.count > problems.messages.size()) {
    sink.warning(path, 0, "DWARF: " + std::to_string(problems.count - problems.messages.size()) + " more problems");
  }
  // The symbols of the file itself (a separate debug file has the same table, or none after stripping).
  const size_t from_dwarf = out.functions.size();
  apply_symbols(SymbolTable(object), text, out.functions);
  // A function with no DW_TAG_subprogram (compiler-made constructors, some assembly) may still have rows in its
  // compile unit's line table: llvm-symbolizer prints those, so they go into its GSYM entry as well.
  for (size_t i = from_dwarf; i < out.functions.size(); ++i) {
    Function& f = out.functions[i];
    llvm::DWARFCompileUnit* unit = context->getCompileUnitForCodeAddress(f.start);
    if (unit == nullptr) continue;
    UnitLines lines(*context, *unit);
    std::vector<LineRow> symbol_file = std::move(f.lines);
    f.lines.clear();
    collect_lines(f, lines);
    // Rows without a file name: llvm-symbolizer finds no file there and falls back to the STT_FILE name.
    if (std::all_of(f.lines.begin(), f.lines.end(), [](const LineRow& r) { return r.file.empty(); })) {
      f.lines = std::move(symbol_file);
    } else if (!symbol_file.empty() && f.lines.front().address > f.start) {
      // Before the first row no sequence covers the code: there too, the STT_FILE name.
      f.lines.insert(f.lines.begin(), symbol_file.front());
    }
  }
  return true;
}

namespace {

/// Writes `bytes` to `target` through a temporary file renamed into place: a reader never sees half a file.
bool write_file(const std::string& target, const std::string& bytes, DiagnosticSink& sink) {
  const std::string temporary = target + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    file.close();
    if (!file) {
      sink.error(temporary, 0, "cannot write");
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      return false;
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) {
    sink.error(target, 0, "cannot write: " + error.message());
    return false;
  }
  return true;
}

}  // namespace

bool make_symbol_files(const std::string& path, const ConvertOptions& options, SymbolFiles& out,
                       DiagnosticSink& sink) {
  DebugInfo info;
  if (!read_debug_info(path, options, info, sink)) return false;
  if (info.build_id.empty()) {
    sink.error(path, 0, "no build ID (link with -Wl,--build-id): the symbols could not be matched to crashes");
    return false;
  }
  if (!info.had_dwarf) sink.warning(path, 0, "no DWARF debug information: function names from the symbol table only");
  out.build_id = info.build_id;
  out.ranges = options.symbfile ? write_symbfile_ranges(info.functions) : "";
  out.gsym = write_gsym(std::move(info.functions), info.build_id);
  if (out.gsym.size() > 0xffffffffu) {
    sink.error(path, 0, "the GSYM file would be over 4 GiB (its offsets are 32-bit)");
    return false;
  }
  out.returnpads.clear();
  if (options.symbfile) {
    std::vector<uint64_t> pads;
    if (!find_return_pads(path, pads, sink)) return false;
    out.returnpads = write_symbfile_returnpads(pads, out.gsym);
  }
  return true;
}

std::string convert_to_gsym(const std::string& path, const std::string& out_dir, const ConvertOptions& options,
                            DiagnosticSink& sink) {
  SymbolFiles files;
  if (!make_symbol_files(path, options, files, sink)) return "";
  const std::string stem = out_dir + "/" + hex_bytes(files.build_id);
  const std::string target = stem + ".gsym";
  if (!write_file(target, files.gsym, sink)) return "";
  if (options.symbfile && (!write_file(stem + ".ranges.symbfile", files.ranges, sink) ||
                           !write_file(stem + ".returnpads.symbfile", files.returnpads, sink))) {
    return "";
  }
  return target;
}

void on_llvm_fatal_error(void (*gave_up)(const char* reason)) {
  static void (*handler)(const char*) = nullptr;
  handler = gave_up;
  llvm::install_fatal_error_handler([](void*, const char* reason, bool) { handler(reason); });
  llvm::install_bad_alloc_error_handler([](void*, const char* reason, bool) { handler(reason); });
}

}  // namespace sampler::symbols
