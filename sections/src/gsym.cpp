// GSYM reading (sections/gsym.h): the header and tables checked once, function infos decoded at lookup time.
//
// The encodings of the line table and of the inline tree are those of LLVM's lib/DebugInfo/GSYM (LineTable.h,
// InlineInfo.h), so that files written by llvm-gsymutil and by sampler-symbols read alike; docs/formats.md
// states them.
#include "sections/gsym.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>

#include "checked.h"

namespace sampler::gsym {
namespace {

using checked::ByteOrder;

template <typename T>
T byteswap(T value) {
  if constexpr (sizeof(T) == 2) {
    return __builtin_bswap16(value);
  } else if constexpr (sizeof(T) == 4) {
    return __builtin_bswap32(value);
  } else {
    return __builtin_bswap64(value);
  }
}

// The line table's opcodes (LLVM LineTable.h).
constexpr uint8_t kEndSequence = 0;
constexpr uint8_t kSetFile = 1;
constexpr uint8_t kAdvancePc = 2;
constexpr uint8_t kAdvanceLine = 3;
constexpr uint8_t kFirstSpecial = 4;

}  // namespace

/// A cursor over [position, end) of the file's bytes; every read checks the end and reports the byte offset.
class FunctionDecoder {
 public:
  FunctionDecoder(const Reader& reader, Error& error) : reader_(reader), error_(error) {}

  bool fail(uint64_t offset, std::string message) {
    if (ok_) error_ = Error{offset, std::move(message)};
    ok_ = false;
    return false;
  }
  // Out of line: the reads below stay small enough to be inlined into the decoding loops (the hot path of a
  // lookup walks a function's inline tree byte by byte).
  [[gnu::noinline, gnu::cold]] bool truncated(uint64_t offset, const char* what) {
    return fail(offset, std::string("truncated ") + what);
  }
  [[gnu::noinline, gnu::cold]] bool too_big(uint64_t offset, const char* what) {
    return fail(offset, std::string(what) + " does not fit in 64 bits");
  }
  bool ok() const { return ok_; }

  // `end` never exceeds the file's size (callers pass the file's size or a checked record end).
  bool u8(uint64_t& pos, uint64_t end, uint8_t& out, const char* what) {
    if (pos >= end) return truncated(pos, what);
    out = byte_at(pos);
    ++pos;
    return true;
  }
  bool u32(uint64_t& pos, uint64_t end, uint32_t& out, const char* what) {
    if (!checked::range_fits(pos, 4, end)) return truncated(pos, what);
    const uint32_t b0 = byte_at(pos), b1 = byte_at(pos + 1), b2 = byte_at(pos + 2), b3 = byte_at(pos + 3);
    out = reader_.little_ ? b0 | b1 << 8 | b2 << 16 | b3 << 24 : b3 | b2 << 8 | b1 << 16 | b0 << 24;
    pos += 4;
    return true;
  }
  bool uleb(uint64_t& pos, uint64_t end, uint64_t& out, const char* what) {
    if (pos < end && byte_at(pos) < 0x80) {  // most values: one byte
      out = byte_at(pos++);
      return true;
    }
    const uint64_t start = pos;
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (pos >= end) return truncated(start, what);
      const uint8_t byte = byte_at(pos++);
      const uint64_t bits = byte & 0x7f;
      if (shift >= 64 || (shift > 0 && bits >> (64 - shift) != 0)) return too_big(start, what);
      value |= bits << shift;
      if ((byte & 0x80) == 0) break;
    }
    out = value;
    return true;
  }
  bool sleb(uint64_t& pos, uint64_t end, int64_t& out, const char* what) {
    const uint64_t start = pos;
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
      if (pos >= end) return truncated(start, what);
      if (shift >= 64) return too_big(start, what);
      byte = static_cast<uint8_t>(reader_.bytes_[pos++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
    out = static_cast<int64_t>(value);
    return true;
  }

  using Row = LineTableCache::Row;

  /// Decodes the line table at [pos, end) for a function at `base`. Stops early (true) at the first row past
  /// `address` when `address` is given; `best` is then the last row at or before it.
  bool line_table(uint64_t pos, uint64_t end, uint64_t base, std::optional<uint64_t> address,
                  std::optional<Row>& best, std::vector<LineTableCache::Row>* all = nullptr) {
    int64_t min_delta = 0;
    int64_t max_delta = 0;
    uint64_t first_line = 0;
    const uint64_t prolog = pos;
    if (!sleb(pos, end, min_delta, "line table minimum line delta") ||
        !sleb(pos, end, max_delta, "line table maximum line delta") ||
        !uleb(pos, end, first_line, "line table first line")) {
      return false;
    }
    if (min_delta > max_delta) return fail(prolog, "line table minimum line delta above its maximum");
    // The range of line deltas the special opcodes encode; a wider one than the opcode space is malformed.
    const uint64_t line_range = static_cast<uint64_t>(max_delta) - static_cast<uint64_t>(min_delta) + 1;
    if (line_range == 0 || line_range > 256) return fail(prolog, "line table line delta range over 256");
    Row row{base, 1, static_cast<uint32_t>(first_line)};
    for (;;) {
      const uint64_t at = pos;
      uint8_t op = 0;
      if (!u8(pos, end, op, "line table (no end of sequence)")) return false;
      bool push = false;
      if (op == kEndSequence) return true;
      if (op == kSetFile) {
        if (!uleb(pos, end, row.file, "line table file index")) return false;
        if (row.file >= reader_.file_count_) return fail(at, "line table file index " + std::to_string(row.file) +
                                                                  " past the file table");
      } else if (op == kAdvancePc) {
        uint64_t delta = 0;
        if (!uleb(pos, end, delta, "line table address delta")) return false;
        row.address += delta;
        push = true;
      } else if (op == kAdvanceLine) {
        int64_t delta = 0;
        if (!sleb(pos, end, delta, "line table line delta")) return false;
        row.line = static_cast<uint32_t>(row.line + static_cast<uint64_t>(delta));
      } else {
        const uint64_t adjusted = op - kFirstSpecial;
        row.line = static_cast<uint32_t>(row.line + static_cast<uint64_t>(min_delta) + adjusted % line_range);
        row.address += adjusted / line_range;
        push = true;
      }
      if (push) {
        if (address && row.address > *address) return true;
        best = row;
        if (all != nullptr) all->push_back(row);
      }
    }
  }

  /// Skips an inline info whose ranges were read; `depth` bounds the recursion.
  bool skip_inline_rest(uint64_t& pos, uint64_t end, size_t depth) {
    uint8_t has_children = 0;
    uint32_t name = 0;
    uint64_t call_file = 0;
    uint64_t call_line = 0;
    const uint64_t at = pos;
    if (!u8(pos, end, has_children, "inline info") || !u32(pos, end, name, "inline info name") ||
        !uleb(pos, end, call_file, "inline info call file") || !uleb(pos, end, call_line, "inline info call line")) {
      return false;
    }
    if (verifying_) {
      std::string_view text;
      Reader::FileEntry entry;
      if (!reader_.string_or_error(name, at + 1, text, error_) ||
          !reader_.file_at(call_file, entry, at + 5, error_)) {
        ok_ = false;
        return false;
      }
    }
    if (has_children == 0) return true;
    if (depth >= kMaxInlineDepth) return fail(at, "inline info nested deeper than " + std::to_string(kMaxInlineDepth));
    for (;;) {
      uint64_t count = 0;
      uint64_t first_start = 0;
      bool contains = false;
      if (!ranges(pos, end, 0, 0, count, first_start, contains)) return false;
      if (count == 0) return true;
      if (!skip_inline_rest(pos, end, depth + 1)) return false;
    }
  }

  /// Reads an address range list relative to `base`: its count, its first start, whether it holds `address`.
  bool ranges(uint64_t& pos, uint64_t end, uint64_t base, uint64_t address, uint64_t& count, uint64_t& first_start,
              bool& contains) {
    if (!uleb(pos, end, count, "inline info range count")) return false;
    contains = false;
    for (uint64_t i = 0; i < count; ++i) {  // each range takes at least 2 bytes: the loop ends with the data
      uint64_t offset = 0;
      uint64_t size = 0;
      if (!uleb(pos, end, offset, "inline info range start") || !uleb(pos, end, size, "inline info range size")) {
        return false;
      }
      const uint64_t start = base + offset;
      if (i == 0) first_start = start;
      if (address >= start && address - start < size) contains = true;
    }
    return true;
  }

  /// LLVM's InlineInfo lookup: true when this level is done (the terminator, or the address was found here).
  bool inline_lookup(uint64_t& pos, uint64_t end, uint64_t base, uint64_t address, std::vector<Location>& frames,
                     size_t depth) {
    uint64_t count = 0;
    uint64_t first_start = 0;
    bool contains = false;
    if (!ranges(pos, end, base, address, count, first_start, contains)) return true;
    if (count == 0) return true;
    if (!contains) {
      skip_inline_rest(pos, end, depth);
      return !ok_;
    }
    const uint64_t at = pos;
    uint8_t has_children = 0;
    uint32_t name = 0;
    uint64_t call_file = 0;
    uint64_t call_line = 0;
    if (!u8(pos, end, has_children, "inline info") || !u32(pos, end, name, "inline info name") ||
        !uleb(pos, end, call_file, "inline info call file") || !uleb(pos, end, call_line, "inline info call line")) {
      return true;
    }
    if (has_children != 0) {
      if (depth >= kMaxInlineDepth) {
        fail(at, "inline info nested deeper than " + std::to_string(kMaxInlineDepth));
        return true;
      }
      while (ok_ && !inline_lookup(pos, end, first_start, address, frames, depth + 1)) {
      }
      if (!ok_) return true;
    }
    Reader::FileEntry file;
    std::string_view name_text;
    if (!reader_.file_at(call_file, file, at + 5, error_) ||
        !reader_.string_or_error(name, at + 1, name_text, error_)) {
      ok_ = false;
      return true;
    }
    // The concrete function's own entry has call file 0 (no file): it adds no frame.
    if (!file.dir.empty() || !file.file.empty()) {
      Location caller = frames.back();
      caller.dir = file.dir;
      caller.file = file.file;
      caller.line = static_cast<uint32_t>(call_line);
      frames.back().name = name_text;
      frames.back().offset = address - first_start;
      frames.push_back(caller);
    }
    return true;
  }

  /// Decodes one node and its subtree (whose ranges count was not read yet) into `tree`; false at the
  /// terminator (count 0) or on an error (then ok() is false).
  bool decode_node(uint64_t& pos, uint64_t end, uint64_t base, LineTableCache::Tree& tree, size_t depth) {
    uint64_t count = 0;
    if (!uleb(pos, end, count, "inline info range count")) return false;
    if (count == 0) return false;
    const auto index = static_cast<uint32_t>(tree.nodes.size());
    tree.nodes.push_back({});
    LineTableCache::Node node{};
    node.ranges_begin = static_cast<uint32_t>(tree.ranges.size());
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t offset = 0;
      uint64_t size = 0;
      if (!uleb(pos, end, offset, "inline info range start") || !uleb(pos, end, size, "inline info range size")) {
        return false;
      }
      if (i == 0) node.first_start = base + offset;
      tree.ranges.emplace_back(base + offset, size);
    }
    node.ranges_end = static_cast<uint32_t>(tree.ranges.size());
    uint8_t has_children = 0;
    uint32_t name = 0;
    node.at = pos;
    if (!u8(pos, end, has_children, "inline info") || !u32(pos, end, name, "inline info name") ||
        !uleb(pos, end, node.call_file, "inline info call file") ||
        !uleb(pos, end, node.call_line, "inline info call line")) {
      return false;
    }
    node.name = name;
    if (has_children != 0) {
      if (depth >= kMaxInlineDepth) return fail(node.at, "inline info nested deeper than 256");
      while (decode_node(pos, end, node.first_start, tree, depth + 1)) {
      }
      if (!ok_) return false;
    }
    node.subtree_end = static_cast<uint32_t>(tree.nodes.size());
    tree.nodes[index] = node;
    return true;
  }

  bool verifying_ = false;

 private:
  uint8_t byte_at(uint64_t pos) const { return static_cast<uint8_t>(reader_.bytes_[pos]); }
  const Reader& reader_;
  Error& error_;
  bool ok_ = true;
};

std::optional<Reader> Reader::open(std::string_view bytes, Error& error) {
  Reader r;
  r.bytes_ = bytes;
  if (bytes.size() < kHeaderSize) {
    error = {0, "not a GSYM file (" + std::to_string(bytes.size()) + " bytes, shorter than the header)"};
    return std::nullopt;
  }
  const uint32_t magic = *checked::read_uint<uint32_t>(bytes, 0, ByteOrder::kLittle);
  if (magic == kMagic) {
    r.little_ = true;
  } else if (__builtin_bswap32(magic) == kMagic) {
    r.little_ = false;
  } else {
    error = {0, "not a GSYM file (bad magic)"};
    return std::nullopt;
  }
  const ByteOrder order = r.little_ ? ByteOrder::kLittle : ByteOrder::kBig;
  const uint16_t version = *checked::read_uint<uint16_t>(bytes, 4, order);
  if (version != kVersion) {
    error = {4, "unsupported GSYM version " + std::to_string(version)};
    return std::nullopt;
  }
  r.address_size_ = static_cast<uint8_t>(bytes[6]);
  if (r.address_size_ != 1 && r.address_size_ != 2 && r.address_size_ != 4 && r.address_size_ != 8) {
    error = {6, "invalid address offset size " + std::to_string(r.address_size_)};
    return std::nullopt;
  }
  const auto uuid_size = static_cast<uint8_t>(bytes[7]);
  if (uuid_size > kMaxUuidSize) {
    error = {7, "UUID size " + std::to_string(uuid_size) + " over 20"};
    return std::nullopt;
  }
  r.uuid_ = bytes.substr(28, uuid_size);
  r.base_address_ = *checked::read_uint<uint64_t>(bytes, 8, order);
  r.address_count_ = *checked::read_uint<uint32_t>(bytes, 16, order);
  const uint32_t strtab_offset = *checked::read_uint<uint32_t>(bytes, 20, order);
  const uint32_t strtab_size = *checked::read_uint<uint32_t>(bytes, 24, order);
  auto strings = checked::substr(bytes, strtab_offset, strtab_size);
  if (!strings) {
    error = {20, "string table (" + std::to_string(strtab_size) + " bytes at " + std::to_string(strtab_offset) +
                     ") past the end of the file (" + std::to_string(bytes.size()) + " bytes)"};
    return std::nullopt;
  }
  r.strings_ = *strings;
  r.strings_offset_ = strtab_offset;
  // The tables follow the header, each aligned to its entry size (LLVM GsymReader::parse).
  r.address_table_ = kHeaderSize;  // 48 is a multiple of every address size
  const uint64_t table_size = uint64_t{r.address_count_} * r.address_size_;
  if (!checked::range_fits(r.address_table_, table_size, bytes.size())) {
    error = {16, std::to_string(r.address_count_) + " addresses: the address table runs past the end of the file"};
    return std::nullopt;
  }
  r.info_offsets_ = (r.address_table_ + table_size + 3) & ~uint64_t{3};
  if (!checked::range_fits(r.info_offsets_, uint64_t{r.address_count_} * 4, bytes.size())) {
    // Named by the count that sizes it: the table's own start may lie past the end.
    error = {16, std::to_string(r.address_count_) + " addresses: the address info offsets table runs past the end"
                                                    " of the file"};
    return std::nullopt;
  }
  const uint64_t files_at = r.info_offsets_ + uint64_t{r.address_count_} * 4;
  auto file_count = checked::read_uint<uint32_t>(bytes, files_at, order);
  if (!file_count) {
    error = {files_at, "truncated file table"};
    return std::nullopt;
  }
  r.file_count_ = *file_count;
  r.file_table_ = files_at + 4;
  if (!checked::range_fits(r.file_table_, uint64_t{r.file_count_} * 8, bytes.size())) {
    error = {files_at, std::to_string(r.file_count_) + " files: the file table runs past the end of the file"};
    return std::nullopt;
  }
  return r;
}

uint64_t Reader::address_at(uint32_t index) const {
  // The hot loop of every lookup's binary search: plain loads, since open() checked the table's extent.
  const char* at = bytes_.data() + address_table_ + uint64_t{index} * address_size_;
  auto load = [&](auto value) -> uint64_t {
    std::memcpy(&value, at, sizeof value);
    if (little_ != (std::endian::native == std::endian::little)) value = byteswap(value);
    return value;
  };
  uint64_t offset = 0;
  switch (address_size_) {
    case 1: offset = static_cast<uint8_t>(*at); break;
    case 2: offset = load(uint16_t{0}); break;
    case 4: offset = load(uint32_t{0}); break;
    default: offset = load(uint64_t{0}); break;
  }
  return base_address_ + offset;
}

std::optional<std::string_view> Reader::string_at(uint32_t offset) const {
  if (offset >= strings_.size()) return std::nullopt;
  const size_t end = strings_.find('\0', offset);
  if (end == std::string_view::npos) return std::nullopt;
  return strings_.substr(offset, end - offset);
}

bool Reader::string_or_error(uint32_t offset, uint64_t where, std::string_view& out, Error& error) const {
  auto text = string_at(offset);
  if (!text) {
    error = {where, "string offset " + std::to_string(offset) + " outside the string table (or unterminated)"};
    return false;
  }
  out = *text;
  return true;
}

bool Reader::file_at(uint64_t index, FileEntry& entry, uint64_t where, Error& error) const {
  if (index >= file_count_) {
    error = {where, "file index " + std::to_string(index) + " past the file table (" + std::to_string(file_count_) +
                        " files)"};
    return false;
  }
  const ByteOrder order = little_ ? ByteOrder::kLittle : ByteOrder::kBig;
  const uint64_t at = file_table_ + index * 8;
  return string_or_error(*checked::read_uint<uint32_t>(bytes_, at, order), at, entry.dir, error) &&
         string_or_error(*checked::read_uint<uint32_t>(bytes_, at + 4, order), at + 4, entry.file, error);
}

Found Reader::lookup(uint64_t address, LookupResult& result, Error& error, LineTableCache* cache) const {
  result.frames.clear();
  if (address_count_ == 0 || address < base_address_) return Found::kNo;
  // The last entry at or before the address (upper bound minus one).
  uint32_t low = 0;
  uint32_t high = address_count_;
  while (low < high) {
    const uint32_t mid = low + (high - low) / 2;
    if (address_at(mid) <= address) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low == 0) return Found::kNo;
  if (cache != nullptr) {
    if (const LineTableCache::Function* function = cached_function(*cache, low - 1)) {
      return cached_lookup(*cache, *function, address, result, error);
    }
  }
  return lookup_at(low - 1, address, result, error);
}

Found Reader::lookup_at(uint32_t index, uint64_t address, LookupResult& result, Error& error) const {
  const ByteOrder order = little_ ? ByteOrder::kLittle : ByteOrder::kBig;
  const uint64_t entry = info_offsets_ + uint64_t{index} * 4;
  uint64_t pos = *checked::read_uint<uint32_t>(bytes_, entry, order);
  const uint64_t end = bytes_.size();
  const uint64_t start = address_at(index);
  FunctionDecoder d(*this, error);
  uint32_t size = 0;
  uint32_t name = 0;
  if (pos >= end) {
    error = {entry, "address info offset " + std::to_string(pos) + " past the end of the file"};
    return Found::kError;
  }
  if (!d.u32(pos, end, size, "function info size") || !d.u32(pos, end, name, "function info name")) {
    return Found::kError;
  }
  // A size of 0 (a symbol without size) covers everything up to the next entry, as in LLVM.
  if (size != 0 && address - start >= size) return Found::kNo;
  if (name == 0) {
    error = {pos - 4, "function info without a name (string offset 0)"};
    return Found::kError;
  }
  Location location;
  if (!string_or_error(name, pos - 4, location.name, error)) return Found::kError;
  location.offset = address - start;
  std::optional<FunctionDecoder::Row> row;
  std::optional<std::pair<uint64_t, uint64_t>> inline_info;
  for (;;) {
    uint32_t type = 0;
    uint32_t length = 0;
    const uint64_t at = pos;
    if (!d.u32(pos, end, type, "function info record type") || !d.u32(pos, end, length, "function info record")) {
      return Found::kError;
    }
    if (!checked::range_fits(pos, length, end)) {
      error = {at, "function info record of " + std::to_string(length) + " bytes past the end of the file"};
      return Found::kError;
    }
    const uint64_t record_end = pos + length;
    if (type == static_cast<uint32_t>(InfoType::kEndOfList)) break;
    if (type == static_cast<uint32_t>(InfoType::kLineTable)) {
      if (!d.line_table(pos, record_end, start, address, row)) return Found::kError;
    } else if (type == static_cast<uint32_t>(InfoType::kInlineInfo)) {
      inline_info = {pos, record_end};
    }  // other types: records a later version added; skipped as the format intends
    pos = record_end;
  }
  result.start = start;
  result.size = size;
  if (row) {
    FileEntry file;
    if (!file_at(row->file, file, pos, error)) return Found::kError;
    location.dir = file.dir;
    location.file = file.file;
    location.line = row->line;
  }
  result.frames.push_back(location);
  // Inline frames only with a line entry (as LLVM does: the inline chain needs the innermost line).
  if (row && inline_info) {
    uint64_t p = inline_info->first;
    d.inline_lookup(p, inline_info->second, start, address, result.frames, 0);
    if (!d.ok()) return Found::kError;
  }
  return Found::kYes;
}

const LineTableCache::Function* Reader::cached_function(LineTableCache& cache, uint32_t index) const {
  if (cache.reader_ != bytes_.data() || cache.slots_.size() != address_count_) {
    cache.reader_ = bytes_.data();
    cache.slots_.assign(address_count_, LineTableCache::kNotDecoded);
    cache.functions_.clear();
    cache.files_.assign(file_count_, {});
  }
  uint32_t slot = cache.slots_[index];
  if (slot == LineTableCache::kNotDecoded) {
    if (cache.functions_.size() >= cache.max_functions_) {
      for (const LineTableCache::Function& f : cache.functions_) cache.slots_[f.index] = LineTableCache::kNotDecoded;
      cache.functions_.clear();
    }
    LineTableCache::Function function;
    if (decode_function(index, function)) {
      cache.functions_.push_back(std::move(function));
      slot = static_cast<uint32_t>(cache.functions_.size() + 1);
    } else {
      slot = LineTableCache::kByteWalk;
    }
    cache.slots_[index] = slot;
  }
  return slot == LineTableCache::kByteWalk ? nullptr : &cache.functions_[slot - 2];
}

bool Reader::decode_function(uint32_t index, LineTableCache::Function& function) const {
  // Any problem leaves the function to the byte walk, which answers (or fails) exactly as without a cache.
  const ByteOrder order = little_ ? ByteOrder::kLittle : ByteOrder::kBig;
  uint64_t pos = *checked::read_uint<uint32_t>(bytes_, info_offsets_ + uint64_t{index} * 4, order);
  const uint64_t end = bytes_.size();
  if (pos >= end) return false;
  Error ignored;
  FunctionDecoder d(*this, ignored);
  uint32_t name = 0;
  function.index = index;
  function.start = address_at(index);
  if (!d.u32(pos, end, function.size, "") || !d.u32(pos, end, name, "") || name == 0 ||
      !string_or_error(name, 0, function.name, ignored)) {
    return false;
  }
  for (;;) {
    uint32_t type = 0;
    uint32_t length = 0;
    if (!d.u32(pos, end, type, "") || !d.u32(pos, end, length, "") || !checked::range_fits(pos, length, end)) {
      return false;
    }
    const uint64_t record_end = pos + length;
    if (type == static_cast<uint32_t>(InfoType::kEndOfList)) break;
    if (type == static_cast<uint32_t>(InfoType::kLineTable)) {
      // Several line tables (the last with a row at or before the address counts) are left to the byte walk.
      if (function.has_rows) return false;
      function.has_rows = true;
      std::vector<LineTableCache::Row> rows;
      std::optional<FunctionDecoder::Row> last;
      if (!d.line_table(pos, record_end, function.start, std::nullopt, last, &rows)) return false;
      function.row_addresses.reserve(rows.size());
      function.row_file_line.reserve(rows.size());
      for (size_t i = 0; i < rows.size(); ++i) {
        if (i > 0 && rows[i].address < rows[i - 1].address) function.sorted = false;
        function.row_addresses.push_back(rows[i].address);
        // The decoder checked the file index against the file table's 32-bit count.
        function.row_file_line.emplace_back(static_cast<uint32_t>(rows[i].file), rows[i].line);
      }
    } else if (type == static_cast<uint32_t>(InfoType::kInlineInfo)) {
      if (function.has_tree) return false;
      function.has_tree = true;
      uint64_t p = pos;
      if (!d.decode_node(p, record_end, function.start, function.tree, 0) || !d.ok()) return false;
      index_children(function.tree);
      // Strings found once per tree, not at each lookup; a node whose strings are not found fails at lookup.
      for (LineTableCache::Node& n : function.tree.nodes) {
        FileEntry file;
        n.resolved = file_at(n.call_file, file, n.at + 5, ignored) &&
                     string_or_error(n.name, n.at + 1, n.name_text, ignored);
        n.call_dir = file.dir;
        n.call_file_name = file.file;
      }
    }
    pos = record_end;
  }
  function.end = pos;
  return true;
}

Found Reader::cached_lookup(LineTableCache& cache, const LineTableCache::Function& function, uint64_t address,
                            LookupResult& result, Error& error) const {
  if (function.size != 0 && address - function.start >= function.size) return Found::kNo;
  Location location;
  location.name = function.name;
  location.offset = address - function.start;
  result.start = function.start;
  result.size = function.size;
  // The row the decoder's scan stops on: the last at or before the address.
  const std::vector<uint64_t>& addresses = function.row_addresses;
  size_t row = 0;  // one past the row found; 0: none
  if (function.sorted) {
    row = static_cast<size_t>(std::upper_bound(addresses.begin(), addresses.end(), address) - addresses.begin());
  } else {
    while (row < addresses.size() && addresses[row] <= address) ++row;
  }
  if (row > 0) {
    const auto [file_index, line] = function.row_file_line[row - 1];
    FileEntry entry;
    if (file_index >= cache.files_.size()) {
      // A row without a file opcode has file 1, which the file table may lack: file_at names the error.
      file_at(file_index, entry, function.end, error);
      return Found::kError;
    }
    LineTableCache::File& file = cache.files_[file_index];
    if (!file.resolved) {
      if (!file_at(file_index, entry, function.end, error)) return Found::kError;
      file = {true, entry.dir, entry.file};
    }
    location.dir = file.dir;
    location.file = file.name;
    location.line = line;
  }
  result.frames.push_back(location);
  // Inline frames only with a line entry (as LLVM does: the inline chain needs the innermost line).
  if (row > 0 && function.has_tree && !cached_inline(function.tree, address, result.frames, error)) {
    return Found::kError;
  }
  return Found::kYes;
}

void Reader::index_children(LineTableCache::Tree& tree) {
  for (uint32_t i = 0; i < tree.nodes.size(); ++i) {
    LineTableCache::Node& parent = tree.nodes[i];
    parent.spans_begin = static_cast<uint32_t>(tree.child_spans.size());
    bool disjoint = true;
    for (uint32_t child = i + 1; child < parent.subtree_end; child = tree.nodes[child].subtree_end) {
      const LineTableCache::Node& n = tree.nodes[child];
      for (uint32_t r = n.ranges_begin; r < n.ranges_end; ++r) {
        const auto [start, size] = tree.ranges[r];
        if (size == 0) continue;                     // holds no address
        if (start + size < start) disjoint = false;  // wraps around: left to the ordered walk
        tree.child_spans.push_back({start, start + size, child});
      }
    }
    parent.spans_end = static_cast<uint32_t>(tree.child_spans.size());
    const auto first = tree.child_spans.begin() + parent.spans_begin;
    const auto last = tree.child_spans.end();
    std::sort(first, last, [](const auto& a, const auto& b) { return a.start < b.start; });
    for (auto it = first; it != last && disjoint; ++it) {
      if (it != first && it->start < std::prev(it)->end) disjoint = false;
    }
    parent.disjoint_children = disjoint;
  }
}

bool Reader::cached_inline(const LineTableCache::Tree& tree, uint64_t address, std::vector<Location>& frames,
                           Error& error) const {
  auto contains = [&](const LineTableCache::Node& n) {
    for (uint32_t r = n.ranges_begin; r < n.ranges_end; ++r) {
      if (address >= tree.ranges[r].first && address - tree.ranges[r].first < tree.ranges[r].second) return true;
    }
    return false;
  };
  // The path of nodes holding the address: at each level the first child that holds it (as the byte walk). The
  // decoder bounds the depth.
  std::array<uint32_t, kMaxInlineDepth + 1> path;
  size_t depth = 0;
  if (tree.nodes.empty() || !contains(tree.nodes[0])) return true;
  path[depth++] = 0;
  for (uint32_t i = 0;;) {
    const LineTableCache::Node& parent = tree.nodes[i];
    uint32_t child = parent.subtree_end;
    if (parent.disjoint_children) {
      // Functions inlining hundreds of calls: the last span starting at or before the address is the only one
      // that can hold it.
      const auto first = tree.child_spans.begin() + parent.spans_begin;
      const auto last = tree.child_spans.begin() + parent.spans_end;
      auto it = std::upper_bound(first, last, address,
                                 [](uint64_t a, const LineTableCache::ChildSpan& s) { return a < s.start; });
      if (it != first && address < std::prev(it)->end) child = std::prev(it)->child;
    } else {
      child = i + 1;
      while (child < parent.subtree_end && !contains(tree.nodes[child])) child = tree.nodes[child].subtree_end;
    }
    if (child >= parent.subtree_end) break;
    path[depth++] = child;
    i = child;
  }
  // Innermost first, as the byte walk applies them on its way back up.
  for (size_t k = depth; k-- > 0;) {
    const LineTableCache::Node& n = tree.nodes[path[k]];
    FileEntry file{n.call_dir, n.call_file_name};
    std::string_view name_text = n.name_text;
    if (!n.resolved &&
        (!file_at(n.call_file, file, n.at + 5, error) || !string_or_error(n.name, n.at + 1, name_text, error))) {
      return false;
    }
    if (!file.dir.empty() || !file.file.empty()) {
      Location caller = frames.back();
      caller.dir = file.dir;
      caller.file = file.file;
      caller.line = static_cast<uint32_t>(n.call_line);
      frames.back().name = name_text;
      frames.back().offset = address - n.first_start;
      frames.push_back(caller);
    }
  }
  return true;
}

bool Reader::verify(Error& error) const {
  const ByteOrder order = little_ ? ByteOrder::kLittle : ByteOrder::kBig;
  uint64_t previous = 0;
  for (uint32_t i = 0; i < address_count_; ++i) {
    const uint64_t address = address_at(i);
    if (i > 0 && address < previous) {
      error = {address_table_ + uint64_t{i} * address_size_, "address table not sorted"};
      return false;
    }
    previous = address;
    const uint64_t entry = info_offsets_ + uint64_t{i} * 4;
    uint64_t pos = *checked::read_uint<uint32_t>(bytes_, entry, order);
    const uint64_t end = bytes_.size();
    if (pos >= end) {  // named by its table entry: an error's offset is always inside the file
      error = {entry, "address info offset " + std::to_string(pos) + " past the end of the file"};
      return false;
    }
    FunctionDecoder d(*this, error);
    d.verifying_ = true;
    uint32_t size = 0;
    uint32_t name = 0;
    std::string_view text;
    if (!d.u32(pos, end, size, "function info size") || !d.u32(pos, end, name, "function info name")) return false;
    if (!string_or_error(name, pos - 4, text, error)) return false;
    for (;;) {
      uint32_t type = 0;
      uint32_t length = 0;
      const uint64_t at = pos;
      if (!d.u32(pos, end, type, "function info record type") || !d.u32(pos, end, length, "function info record")) {
        return false;
      }
      if (!checked::range_fits(pos, length, end)) {
        error = {at, "function info record of " + std::to_string(length) + " bytes past the end of the file"};
        return false;
      }
      const uint64_t record_end = pos + length;
      if (type == static_cast<uint32_t>(InfoType::kEndOfList)) break;
      if (type == static_cast<uint32_t>(InfoType::kLineTable)) {
        std::optional<FunctionDecoder::Row> row;
        if (!d.line_table(pos, record_end, address, std::nullopt, row)) return false;
      } else if (type == static_cast<uint32_t>(InfoType::kInlineInfo)) {
        uint64_t p = pos;
        uint64_t count = 0;
        uint64_t first = 0;
        bool contains = false;
        if (!d.ranges(p, record_end, address, 0, count, first, contains)) return false;
        if (count == 0) return d.fail(pos, "inline info without ranges");
        if (!d.skip_inline_rest(p, record_end, 0)) return false;
      }
      pos = record_end;
    }
  }
  return true;
}

std::unique_ptr<MappedFile> MappedFile::open(const std::string& path, Error& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = {0, std::string("cannot open: ") + std::strerror(errno)};
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = {0, "not a regular file"};
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<MappedFile> file(new MappedFile());
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* map = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      error = {0, std::string("cannot map: ") + std::strerror(errno)};
      ::close(fd);
      return nullptr;
    }
    file->address_ = map;
  }
  ::close(fd);
  file->reader_ = Reader::open(std::string_view(static_cast<const char*>(file->address_), file->size_), error);
  if (!file->reader_) return nullptr;
  return file;
}

MappedFile::~MappedFile() {
  if (address_ != nullptr) munmap(address_, size_);
}

}  // namespace sampler::gsym
