// symbfile writing (symbols/symbfile.h): protobuf wire format encoded by hand, field numbers of symbfile.proto.
#include "symbols/symbfile.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <unordered_map>

#include "sections/gsym.h"
#include "sections/symbfile.h"
#include "symbols/llvm_demangle.h"

namespace sampler::symbols {
namespace {

using namespace symbfile::field;
using symbfile::MessageType;

/// Protobuf wire format, the little of it a symbfile needs.
class Proto {
 public:
  void varint(uint64_t v) {
    while (v >= 0x80) {
      data.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    data.push_back(static_cast<char>(v));
  }
  void key(uint32_t field, uint32_t wire_type) { varint(uint64_t{field} << 3 | wire_type); }
  void uint(uint32_t field, uint64_t v) {
    key(field, 0);
    varint(v);
  }
  void bytes(uint32_t field, std::string_view v) {
    key(field, 2);
    varint(v.size());
    data.append(v);
  }
  void packed(uint32_t field, const std::vector<uint32_t>& values) {
    if (values.empty()) return;
    Proto inner;
    for (uint32_t v : values) inner.varint(v);
    bytes(field, inner.data);
  }
  std::string data;
};

/// Appends one length- and type-prefixed message (symbfile.proto, "General format").
void append_message(std::string& file, MessageType type, const std::string& message) {
  Proto prefix;
  prefix.varint(message.size());
  prefix.varint(static_cast<uint32_t>(type));
  file += prefix.data;
  file += message;
}

std::string start_file() {
  std::string file(symbfile::kMagic);
  append_message(file, MessageType::kHeader, "");
  return file;
}

struct Span {
  uint64_t start, end;
};

bool covered(uint64_t address, const std::vector<Span>& spans) {
  return std::any_of(spans.begin(), spans.end(), [&](const Span& s) { return address >= s.start && address < s.end; });
}

/// One RangeV1 for [range.start, range.end) at `depth`: its line table holds the rows of `lines` in the range that
/// no deeper call covers, with the row in force at the start moved to the start.
void append_range(std::string& file, const AddressRange& range, const std::string& name, const std::string& call_file,
                  uint32_t call_line, uint32_t depth, const std::vector<LineRow>& lines,
                  const std::vector<Span>& deeper) {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> numbers;
  std::string source;
  uint64_t previous = range.start;
  for (size_t i = 0; i < lines.size(); ++i) {
    const LineRow& row = lines[i];
    const bool last_before = row.address < range.start && (i + 1 == lines.size() || lines[i + 1].address > range.start);
    if (row.address >= range.end || (row.address < range.start && !last_before)) continue;
    const uint64_t at = std::max(row.address, range.start);
    if (covered(at, deeper)) continue;
    if (source.empty()) source = row.file;
    offsets.push_back(static_cast<uint32_t>(at - previous));
    numbers.push_back(row.line);
    previous = at;
  }
  Proto m;
  m.uint(kRangeSetElfVa, range.start);
  m.uint(kRangeLength, range.end - range.start);
  m.bytes(kRangeFuncStr, llvm_demangle(name));
  if (!source.empty()) m.bytes(kRangeFileStr, source);
  if (call_line != 0) m.uint(kRangeCallLine, call_line);
  if (depth > 0 && !call_file.empty()) m.bytes(kRangeCallFileStr, call_file);
  if (depth != 0) m.uint(kRangeDepth, depth);
  if (!offsets.empty()) {
    Proto table;
    table.packed(kLineTableOffset, offsets);
    table.packed(kLineTableLineNumber, numbers);
    m.bytes(kRangeLineTable, table.data);
  }
  append_message(file, MessageType::kRangeV1, m.data);
}

std::vector<Span> spans_of(const std::vector<InlineCall>& calls) {
  std::vector<Span> out;
  for (const InlineCall& c : calls) {
    for (const AddressRange& r : c.ranges) out.push_back({r.start, r.end});
  }
  return out;
}

void append_calls(std::string& file, const std::vector<InlineCall>& calls, uint32_t depth,
                  const std::vector<LineRow>& lines) {
  for (const InlineCall& call : calls) {
    const std::vector<Span> deeper = spans_of(call.children);
    for (const AddressRange& r : call.ranges) {
      append_range(file, r, call.name, call.call_file, call.call_line, depth, lines, deeper);
    }
    append_calls(file, call.children, depth + 1, lines);
  }
}

}  // namespace

std::string write_symbfile_ranges(const std::vector<Function>& functions) {
  std::string file = start_file();
  for (const Function& f : functions) {
    append_range(file, {f.start, f.start + f.size}, f.name, "", 0, 0, f.lines, spans_of(f.inlined));
    append_calls(file, f.inlined, 1, f.lines);
  }
  return file;
}

std::string write_symbfile_returnpads(const std::vector<uint64_t>& pads, const std::string& gsym_bytes) {
  std::string file = start_file();
  gsym::Error error;
  auto reader = gsym::Reader::open(gsym_bytes, error);
  std::vector<std::string> strings;
  std::unordered_map<std::string, uint32_t> index;
  auto ref = [&](const std::string& s) {
    auto [it, added] = index.try_emplace(s, static_cast<uint32_t>(strings.size()));
    if (added) strings.push_back(s);
    return it->second;
  };
  // The string table must come before the records that refer to it: the records are built first.
  std::vector<std::string> records;
  gsym::LookupResult result;
  gsym::LineTableCache cache;
  for (uint64_t pad : pads) {
    Proto m;
    m.uint(kPadSetElfVa, pad - 1);  // symbfile.proto: "the instruction following a call, minus 1"
    std::vector<uint32_t> funcs, files, lines;
    if (reader && reader->lookup(pad - 1, result, error, &cache) == gsym::Found::kYes) {
      for (size_t i = result.frames.size(); i-- > 0;) {  // outermost first
        const gsym::Location& f = result.frames[i];
        std::string path(f.dir);
        if (!path.empty()) path += '/';
        path.append(f.file);
        funcs.push_back(ref(llvm_demangle(f.name)));
        files.push_back(ref(path));
        lines.push_back(f.line);
      }
    }
    m.packed(kPadFunc, funcs);
    m.packed(kPadFile, files);
    m.packed(kPadLine, lines);
    records.push_back(std::move(m.data));
  }
  Proto table;
  for (const std::string& s : strings) table.bytes(kStringTableStrings, s);
  append_message(file, MessageType::kStringTableV1, table.data);
  for (const std::string& r : records) append_message(file, MessageType::kReturnPadV1, r);
  return file;
}

bool find_return_pads(const std::string& path, std::vector<uint64_t>& pads, DiagnosticSink& sink) {
  auto binary = llvm::object::ObjectFile::createObjectFile(path);
  if (!binary) {
    sink.error(path, 0, "cannot read: " + llvm::toString(binary.takeError()));
    return false;
  }
  const llvm::object::ObjectFile& object = *binary->getBinary();
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllDisassemblers();
  const llvm::Triple triple = object.makeTriple();
  std::string problem;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.str(), problem);
  if (target == nullptr) {
    sink.error(path, 0, "no disassembler for " + triple.str() + ": " + problem);
    return false;
  }
  std::unique_ptr<llvm::MCRegisterInfo> registers(target->createMCRegInfo(triple.str()));
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCAsmInfo> asm_info(target->createMCAsmInfo(*registers, triple.str(), options));
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(target->createMCSubtargetInfo(triple.str(), "", ""));
  std::unique_ptr<llvm::MCInstrInfo> instructions(target->createMCInstrInfo());
  if (!registers || !asm_info || !subtarget || !instructions) {
    sink.error(path, 0, "cannot set up the disassembler for " + triple.str());
    return false;
  }
  llvm::MCContext context(triple, asm_info.get(), registers.get(), subtarget.get());
  std::unique_ptr<llvm::MCDisassembler> disassembler(target->createMCDisassembler(*subtarget, context));
  std::unique_ptr<llvm::MCInstrAnalysis> analysis(target->createMCInstrAnalysis(instructions.get()));
  if (!disassembler || !analysis) {
    sink.error(path, 0, "cannot set up the disassembler for " + triple.str());
    return false;
  }
  for (const auto& section : object.sections()) {
    if (!section.isText() || section.getSize() == 0) continue;
    auto contents = section.getContents();
    if (!contents) {
      sink.error(path, 0, "cannot read a code section: " + llvm::toString(contents.takeError()));
      continue;
    }
    const auto bytes = llvm::arrayRefFromStringRef(*contents);
    const uint64_t base = section.getAddress();
    for (uint64_t offset = 0; offset < bytes.size();) {
      llvm::MCInst instruction;
      uint64_t size = 0;
      const auto status =
          disassembler->getInstruction(instruction, size, bytes.slice(offset), base + offset, llvm::nulls());
      if (size == 0) size = 1;  // undecodable byte: step over it, as a linear sweep (objdump -d) does
      // A call that ends its section is followed by no instruction: no return pad.
      if (status == llvm::MCDisassembler::Success && analysis->isCall(instruction) && offset + size < bytes.size()) {
        pads.push_back(base + offset + size);
      }
      offset += size;
    }
  }
  return true;
}

}  // namespace sampler::symbols
