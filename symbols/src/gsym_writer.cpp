// The GSYM encoder (symbols/gsym_writer.h): tables in the order and alignment the GSYM format lays out, line tables and
// inline trees in LLVM's encodings (docs/formats.md section 4), so llvm-gsymutil-19 reads what we write.
#include "symbols/gsym_writer.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace sampler::symbols {
namespace {

class Bytes {
 public:
  void u8(uint64_t v) { data.push_back(static_cast<char>(v & 0xff)); }
  void u16(uint64_t v) { le(v, 2); }
  void u32(uint64_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void le(uint64_t v, int size) {
    for (int i = 0; i < size; ++i) u8(v >> (8 * i));
  }
  void uleb(uint64_t v) {
    do {
      const uint8_t byte = v & 0x7f;
      v >>= 7;
      u8(byte | (v != 0 ? 0x80 : 0));
    } while (v != 0);
  }
  void sleb(int64_t v) {
    for (;;) {
      const uint8_t byte = static_cast<uint8_t>(v & 0x7f);
      v >>= 7;  // arithmetic shift: the sign is kept
      const bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
      u8(byte | (done ? 0 : 0x80));
      if (done) return;
    }
  }
  void align(size_t to) {
    while (data.size() % to != 0) u8(0);
  }
  void patch32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) data[at + i] = static_cast<char>(v >> (8 * i));
  }
  std::string data;
};

/// Strings and files, each stored once (GSYM format: "the same string table entry for common directories").
class Tables {
 public:
  Tables() {
    string("");
    files_.push_back({0, 0});  // file 0: no file (an inline root's call file)
  }
  uint32_t string(const std::string& text) {
    auto [it, added] = strings_.try_emplace(text, static_cast<uint32_t>(strtab_.size()));
    if (added) {
      strtab_ += text;
      strtab_.push_back('\0');
    }
    return it->second;
  }
  uint32_t file(const std::string& path) {
    if (path.empty()) return 0;
    auto found = file_index_.find(path);
    if (found != file_index_.end()) return found->second;
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    files_.push_back({string(dir), string(base)});
    const auto index = static_cast<uint32_t>(files_.size() - 1);
    file_index_.emplace(path, index);
    return index;
  }
  const std::string& strtab() const { return strtab_; }
  const std::vector<std::pair<uint32_t, uint32_t>>& files() const { return files_; }

 private:
  std::unordered_map<std::string, uint32_t> strings_;
  std::string strtab_;
  std::unordered_map<std::string, uint32_t> file_index_;
  std::vector<std::pair<uint32_t, uint32_t>> files_;
};

// Line deltas the special opcodes cover; anything else takes an advance-line opcode. -4..10 with the 252 special
// opcodes leaves address steps of up to 16 bytes in one byte: most rows of compiled code.
constexpr int64_t kMinDelta = -4;
constexpr int64_t kMaxDelta = 10;
constexpr uint8_t kFirstSpecial = 4;

void encode_line_table(const Function& f, Tables& tables, Bytes& out) {
  const int64_t line_range = kMaxDelta - kMinDelta + 1;
  out.sleb(kMinDelta);
  out.sleb(kMaxDelta);
  out.uleb(f.lines.front().line);
  uint64_t address = f.start;
  uint32_t file = 1;
  int64_t line = f.lines.front().line;
  for (const LineRow& row : f.lines) {
    const uint32_t row_file = tables.file(row.file);
    if (row_file != file) {
      out.u8(1);
      out.uleb(row_file);
      file = row_file;
    }
    const uint64_t address_delta = row.address - address;
    const int64_t line_delta = static_cast<int64_t>(row.line) - line;
    const uint64_t special = line_delta >= kMinDelta && line_delta <= kMaxDelta
                                 ? static_cast<uint64_t>(line_delta - kMinDelta) + address_delta * line_range
                                 : 256;
    if (address_delta <= 255 && special + kFirstSpecial <= 255) {
      out.u8(special + kFirstSpecial);
    } else {
      if (line_delta != 0) {
        out.u8(3);
        out.sleb(line_delta);
      }
      out.u8(2);
      out.uleb(address_delta);
    }
    address = row.address;
    line = row.line;
  }
  out.u8(0);
}

void encode_ranges(const std::vector<AddressRange>& ranges, uint64_t base, Bytes& out) {
  out.uleb(ranges.size());
  for (const AddressRange& r : ranges) {
    out.uleb(r.start - base);
    out.uleb(r.end - r.start);
  }
}

void encode_inline(const InlineCall& call, uint64_t base, Tables& tables, Bytes& out) {
  encode_ranges(call.ranges, base, out);
  out.u8(call.children.empty() ? 0 : 1);
  out.u32(tables.string(call.name));
  out.uleb(tables.file(call.call_file));
  out.uleb(call.call_line);
  if (call.children.empty()) return;
  // A call without ranges would read as the end of the list: never written.
  for (const InlineCall& child : call.children) {
    if (!child.ranges.empty()) encode_inline(child, call.ranges.front().start, tables, out);
  }
  out.uleb(0);
}

}  // namespace

std::string write_gsym(std::vector<Function> functions, std::string_view uuid) {
  std::stable_sort(functions.begin(), functions.end(),
                   [](const Function& a, const Function& b) { return a.start < b.start; });
  functions.erase(std::unique(functions.begin(), functions.end(),
                              [](const Function& a, const Function& b) { return a.start == b.start; }),
                  functions.end());
  // The function infos first (they fill the string and file tables), placed after the tables below.
  Tables tables;
  std::vector<std::string> infos;
  infos.reserve(functions.size());
  for (const Function& f : functions) {
    Bytes info;
    info.u32(f.size);
    info.u32(tables.string(f.name.empty() ? std::string("<unnamed>") : f.name));
    if (!f.lines.empty()) {
      Bytes table;
      encode_line_table(f, tables, table);
      info.u32(1);
      info.u32(table.data.size());
      info.data += table.data;
    }
    if (!f.inlined.empty()) {
      // The root is the function itself (call file 0); its children's ranges are relative to its start.
      InlineCall root;
      root.ranges = {{f.start, f.start + f.size}};
      root.name = f.name;
      Bytes tree;
      encode_ranges(root.ranges, f.start, tree);
      tree.u8(1);
      tree.u32(tables.string(f.name));
      tree.uleb(0);
      tree.uleb(0);
      for (const InlineCall& call : f.inlined) {
        if (!call.ranges.empty()) encode_inline(call, f.start, tables, tree);
      }
      tree.uleb(0);
      info.u32(2);
      info.u32(tree.data.size());
      info.data += tree.data;
    }
    info.u32(0);
    info.u32(0);
    infos.push_back(std::move(info.data));
  }

  const uint64_t base = functions.empty() ? 0 : functions.front().start;
  const uint64_t span = functions.empty() ? 0 : functions.back().start - base;
  const uint8_t address_size = span <= 0xff ? 1 : span <= 0xffff ? 2 : span <= 0xffffffffu ? 4 : 8;
  Bytes out;
  out.u32(0x4753594d);
  out.u16(1);
  out.u8(address_size);
  const size_t uuid_size = std::min<size_t>(uuid.size(), 20);
  out.u8(uuid_size);
  out.u64(base);
  out.u32(functions.size());
  const size_t strtab_field = out.data.size();
  out.u32(0);
  out.u32(tables.strtab().size());
  out.data.append(uuid.substr(0, uuid_size));
  out.data.append(20 - uuid_size, '\0');
  for (const Function& f : functions) out.le(f.start - base, address_size);
  out.align(4);
  const size_t offsets = out.data.size();
  out.data.append(functions.size() * 4, '\0');
  out.u32(tables.files().size());
  for (const auto& [dir, file] : tables.files()) {
    out.u32(dir);
    out.u32(file);
  }
  out.patch32(strtab_field, static_cast<uint32_t>(out.data.size()));
  out.data += tables.strtab();
  for (size_t i = 0; i < infos.size(); ++i) {
    out.align(4);
    out.patch32(offsets + 4 * i, static_cast<uint32_t>(out.data.size()));
    out.data += infos[i];
  }
  return out.data;
}

}  // namespace sampler::symbols
