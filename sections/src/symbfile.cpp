// Reading symbfiles (sections/symbfile.h): the protobuf wire format decoded by hand, field numbers of
// symbfile.proto (the writer, symbols/src/symbfile.cpp, uses the same ones; docs/formats.md lists them).
#include "sections/symbfile.h"

#include <algorithm>
#include <unordered_map>

namespace sampler::symbfile {
namespace {

using namespace field;

/// A cursor over protobuf bytes that remembers where its bytes lie in the file (for errors).
class Cursor {
 public:
  Cursor(std::string_view data, uint64_t base) : data_(data), base_(base) {}
  bool done() const { return at_ >= data_.size(); }
  /// The next `size` bytes; false if fewer are left.
  bool take(uint64_t size, std::string_view& out) {
    if (size > data_.size() - at_) return false;
    out = data_.substr(at_, size);
    at_ += size;
    return true;
  }
  uint64_t offset() const { return base_ + at_; }

  bool varint(uint64_t& value, gsym::Error& error) {
    value = 0;
    const uint64_t start = offset();
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (at_ >= data_.size()) return fail(error, start, "a varint is cut short by the end of its message");
      const auto byte = static_cast<uint8_t>(data_[at_++]);
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return fail(error, start, "a varint longer than 10 bytes");
  }
  bool bytes(std::string_view& value, uint64_t& where, gsym::Error& error) {
    uint64_t size = 0;
    const uint64_t start = offset();
    if (!varint(size, error)) return false;
    if (size > data_.size() - at_) {
      return fail(error, start, "a field of " + std::to_string(size) + " bytes, but only " +
                                    std::to_string(data_.size() - at_) + " are left in its message");
    }
    where = offset();
    value = data_.substr(at_, size);
    at_ += size;
    return true;
  }
  /// Skips a field of an unknown number (wire types 0, 1, 2, 5).
  bool skip(uint32_t wire_type, gsym::Error& error) {
    const uint64_t start = offset();
    uint64_t ignored = 0;
    std::string_view view;
    switch (wire_type) {
      case 0: return varint(ignored, error);
      case 2: return bytes(view, ignored, error);
      case 1:
      case 5: {
        const size_t size = wire_type == 1 ? 8 : 4;
        if (data_.size() - at_ < size) return fail(error, start, "a fixed-size field cut short");
        at_ += size;
        return true;
      }
      default: return fail(error, start, "protobuf wire type " + std::to_string(wire_type) + " (groups are not used)");
    }
  }
  static bool fail(gsym::Error& error, uint64_t offset, std::string message) {
    error.offset = offset;
    error.message = std::move(message);
    return false;
  }

 private:
  std::string_view data_;
  uint64_t base_;
  size_t at_ = 0;
};

/// A repeated uint32 field: packed (wire type 2) or one value per key (wire type 0); values above 32 bits are
/// errors.
bool repeated(Cursor& c, uint32_t wire_type, std::vector<uint32_t>& out, gsym::Error& error) {
  auto add = [&](uint64_t value, uint64_t at) {
    if (value > UINT32_MAX) return Cursor::fail(error, at, "a value above 32 bits in a uint32 field");
    out.push_back(static_cast<uint32_t>(value));
    return true;
  };
  if (wire_type == 0) {
    const uint64_t at = c.offset();
    uint64_t value = 0;
    return c.varint(value, error) && add(value, at);
  }
  if (wire_type != 2) return Cursor::fail(error, c.offset(), "a repeated number field of the wrong wire type");
  std::string_view packed;
  uint64_t where = 0;
  if (!c.bytes(packed, where, error)) return false;
  Cursor inner(packed, where);
  while (!inner.done()) {
    const uint64_t at = inner.offset();
    uint64_t value = 0;
    if (!inner.varint(value, error) || !add(value, at)) return false;
  }
  return true;
}

/// Reads the key of the next field; false at an error.
bool next_key(Cursor& c, uint32_t& field, uint32_t& wire_type, gsym::Error& error) {
  const uint64_t at = c.offset();
  uint64_t key = 0;
  if (!c.varint(key, error)) return false;
  if (key >> 3 == 0 || key >> 3 > UINT32_MAX)
    return Cursor::fail(error, at, "a protobuf field number of 0 or too large");
  field = static_cast<uint32_t>(key >> 3);
  wire_type = static_cast<uint32_t>(key & 7);
  return true;
}

bool want(uint32_t wire_type, uint32_t expected, uint64_t at, gsym::Error& error) {
  if (wire_type == expected) return true;
  return Cursor::fail(error, at, "a field of wire type " + std::to_string(wire_type) + " where " +
                                     std::to_string(expected) + " is expected");
}

class Parser {
 public:
  Parser(std::vector<std::string>& strings) : strings_(strings) { strings_.emplace_back(); }

  uint32_t intern(std::string_view text) {
    if (text.empty()) return 0;
    auto [it, added] = index_.try_emplace(std::string(text), static_cast<uint32_t>(strings_.size()));
    if (added) strings_.emplace_back(text);
    return it->second;
  }

 private:
  std::vector<std::string>& strings_;
  std::unordered_map<std::string, uint32_t> index_;
};

}  // namespace

std::optional<File> File::parse(std::string_view bytes, Kind kind, gsym::Error& error) {
  if (!bytes.starts_with(kMagic)) {
    Cursor::fail(error, 0, "not a symbfile (it does not start with the magic \"symbfile\")");
    return std::nullopt;
  }
  File file;
  file.kind_ = kind;
  Parser strings(file.strings_);
  std::vector<uint32_t> table;  // the returnpads file's string table: its index -> strings_
  bool have_table = false;
  Cursor c(bytes.substr(kMagic.size()), kMagic.size());
  while (!c.done()) {
    const uint64_t at = c.offset();
    uint64_t length = 0, type = 0;
    if (!c.varint(length, error)) return std::nullopt;
    const uint64_t type_at = c.offset();
    if (!c.varint(type, error)) return std::nullopt;
    std::string_view body;
    if (!c.take(length, body)) {
      Cursor::fail(error, at, "a message of " + std::to_string(length) + " bytes, but only " +
                                  std::to_string(bytes.size() - type_at) + " are left in the file");
      return std::nullopt;
    }
    Cursor m(body, c.offset() - body.size());
    uint32_t field = 0, wire = 0;
    switch (static_cast<MessageType>(type)) {
      case MessageType::kHeader:
        while (!m.done()) {
          if (!next_key(m, field, wire, error) || !m.skip(wire, error)) return std::nullopt;
        }
        break;
      case MessageType::kStringTableV1: {
        if (kind != Kind::kReturnPads) {
          Cursor::fail(error, type_at, "a string table in a ranges file (only returnpads files have one)");
          return std::nullopt;
        }
        if (have_table) {
          Cursor::fail(error, type_at, "a second string table");
          return std::nullopt;
        }
        have_table = true;
        while (!m.done()) {
          const uint64_t key_at = m.offset();
          if (!next_key(m, field, wire, error)) return std::nullopt;
          if (field != kStringTableStrings) {
            if (!m.skip(wire, error)) return std::nullopt;
            continue;
          }
          std::string_view text;
          uint64_t where = 0;
          if (!want(wire, 2, key_at, error) || !m.bytes(text, where, error)) return std::nullopt;
          table.push_back(strings.intern(text));
        }
        break;
      }
      case MessageType::kRangeV1: {
        if (kind != Kind::kRanges) {
          Cursor::fail(error, type_at, "a range record in a returnpads file");
          return std::nullopt;
        }
        Range range;
        std::vector<uint32_t> offsets, lines;
        uint64_t table_at = 0;
        while (!m.done()) {
          const uint64_t key_at = m.offset();
          if (!next_key(m, field, wire, error)) return std::nullopt;
          uint64_t number = 0;
          std::string_view text;
          uint64_t where = 0;
          switch (field) {
            case kRangeSetElfVa:
            case kRangeLength:
            case kRangeCallLine:
            case kRangeDepth:
              if (!want(wire, 0, key_at, error) || !m.varint(number, error)) return std::nullopt;
              if (field == kRangeSetElfVa) range.start = number;
              if (field == kRangeLength) range.length = number;
              if ((field == kRangeCallLine || field == kRangeDepth) && number > UINT32_MAX) {
                Cursor::fail(error, key_at, "a call line or depth above 32 bits");
                return std::nullopt;
              }
              if (field == kRangeCallLine) range.call_line = static_cast<uint32_t>(number);
              if (field == kRangeDepth) range.depth = static_cast<uint32_t>(number);
              break;
            case kRangeFuncStr:
            case kRangeFileStr:
            case kRangeCallFileStr:
              if (!want(wire, 2, key_at, error) || !m.bytes(text, where, error)) return std::nullopt;
              (field == kRangeFuncStr ? range.func : field == kRangeFileStr ? range.file : range.call_file) =
                  strings.intern(text);
              break;
            case kRangeLineTable: {
              if (!want(wire, 2, key_at, error) || !m.bytes(text, where, error)) return std::nullopt;
              table_at = key_at;
              Cursor t(text, where);
              while (!t.done()) {
                if (!next_key(t, field, wire, error)) return std::nullopt;
                if (field == kLineTableOffset || field == kLineTableLineNumber) {
                  if (!repeated(t, wire, field == kLineTableOffset ? offsets : lines, error)) return std::nullopt;
                } else if (!t.skip(wire, error)) {
                  return std::nullopt;
                }
              }
              break;
            }
            default:
              if (!m.skip(wire, error)) return std::nullopt;
          }
        }
        if (range.length == 0 || range.start + range.length < range.start) {
          Cursor::fail(error, type_at, range.length == 0 ? "a range of length 0" : "a range past the address space");
          return std::nullopt;
        }
        if (range.depth > gsym::kMaxInlineDepth) {
          Cursor::fail(error, type_at, "an inline depth above " + std::to_string(gsym::kMaxInlineDepth));
          return std::nullopt;
        }
        if (offsets.size() != lines.size()) {
          Cursor::fail(error, table_at, "a line table with " + std::to_string(offsets.size()) + " offsets but " +
                                            std::to_string(lines.size()) + " line numbers");
          return std::nullopt;
        }
        range.rows_begin = static_cast<uint32_t>(file.rows_.size());
        uint64_t address = range.start;
        for (size_t i = 0; i < offsets.size(); ++i) {
          address += offsets[i];
          if (address - range.start >= range.length) {
            Cursor::fail(error, table_at, "a line table row past the end of its range");
            return std::nullopt;
          }
          file.rows_.push_back({address, lines[i]});
        }
        range.rows_end = static_cast<uint32_t>(file.rows_.size());
        file.ranges_.push_back(range);
        break;
      }
      case MessageType::kReturnPadV1: {
        if (kind != Kind::kReturnPads) {
          Cursor::fail(error, type_at, "a return pad record in a ranges file");
          return std::nullopt;
        }
        uint64_t address = 0;
        std::vector<uint32_t> funcs, files, lines;
        while (!m.done()) {
          const uint64_t key_at = m.offset();
          if (!next_key(m, field, wire, error)) return std::nullopt;
          if (field == kPadSetElfVa) {
            if (!want(wire, 0, key_at, error) || !m.varint(address, error)) return std::nullopt;
          } else if (field == kPadFunc || field == kPadFile || field == kPadLine) {
            if (!repeated(m, wire, field == kPadFunc ? funcs : field == kPadFile ? files : lines, error)) {
              return std::nullopt;
            }
            if (funcs.size() > kMaxPadFrames || files.size() > kMaxPadFrames || lines.size() > kMaxPadFrames) {
              Cursor::fail(error, key_at, "a return pad of more than " + std::to_string(kMaxPadFrames) + " frames");
              return std::nullopt;
            }
          } else if (!m.skip(wire, error)) {
            return std::nullopt;
          }
        }
        if (funcs.size() != files.size() || funcs.size() != lines.size()) {
          Cursor::fail(error, type_at, "a return pad with " + std::to_string(funcs.size()) + " functions, " +
                                           std::to_string(files.size()) + " files and " +
                                           std::to_string(lines.size()) + " lines");
          return std::nullopt;
        }
        Pad pad{address, static_cast<uint32_t>(file.pad_frames_.size()), 0};
        for (size_t i = 0; i < funcs.size(); ++i) {
          if (funcs[i] >= table.size() || files[i] >= table.size()) {
            Cursor::fail(error, type_at, "a return pad names string " +
                                             std::to_string(std::max(funcs[i], files[i])) + " of a string table of " +
                                             std::to_string(table.size()) + (have_table ? "" : " (none came before)"));
            return std::nullopt;
          }
          file.pad_frames_.push_back({table[funcs[i]], table[files[i]], lines[i]});
        }
        pad.frames_end = static_cast<uint32_t>(file.pad_frames_.size());
        file.pads_.push_back(pad);
        break;
      }
      default:
        Cursor::fail(error, type_at, "unknown message type " + std::to_string(type));
        return std::nullopt;
    }
    if (file.rows_.size() > UINT32_MAX / 2 || file.pad_frames_.size() > UINT32_MAX / 2) {
      Cursor::fail(error, at, "too many records");
      return std::nullopt;
    }
  }
  std::stable_sort(file.ranges_.begin(), file.ranges_.end(), [](const Range& a, const Range& b) {
    return a.start != b.start ? a.start < b.start : a.depth < b.depth;
  });
  for (size_t i = 0; i < file.ranges_.size(); ++i) {
    if (file.ranges_[i].depth == 0) file.functions_.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(file.pads_.begin(), file.pads_.end(),
                   [](const Pad& a, const Pad& b) { return a.address < b.address; });
  return file;
}

File::Path File::path(uint32_t index) const {
  std::string_view text = strings_[index];
  const size_t slash = text.rfind('/');
  if (slash == std::string_view::npos) return {{}, text};
  return {text.substr(0, slash), text.substr(slash + 1)};
}

bool File::lookup_pad(uint64_t address, gsym::LookupResult& result) const {
  auto it = std::lower_bound(pads_.begin(), pads_.end(), address,
                             [](const Pad& p, uint64_t a) { return p.address < a; });
  if (it == pads_.end() || it->address != address || it->frames_begin == it->frames_end) return false;
  result.frames.clear();
  result.start = address;
  result.size = 1;
  for (uint32_t i = it->frames_end; i-- > it->frames_begin;) {  // stored outermost first
    const PadFrame& f = pad_frames_[i];
    const Path p = path(f.file);
    result.frames.push_back({strings_[f.func], p.dir, p.file, f.line, 0});
  }
  return true;
}

bool File::lookup_ranges(uint64_t address, gsym::LookupResult& result) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), address,
                             [this](uint64_t a, uint32_t i) { return a < ranges_[i].start; });
  if (it == functions_.begin()) return false;
  --it;
  const Range& function = ranges_[*it];
  if (address - function.start >= function.length) return false;
  const size_t end = it + 1 == functions_.end() ? ranges_.size() : *(it + 1);
  // The chain: for each depth, the first range of this function at that depth holding the address.
  std::vector<const Range*> chain{&function};
  for (size_t i = *it + 1; i < end && chain.size() <= gsym::kMaxInlineDepth; ++i) {
    const Range& r = ranges_[i];
    if (r.depth == chain.size() && address >= r.start && address - r.start < r.length) chain.push_back(&r);
  }
  result.frames.clear();
  result.start = function.start;
  result.size = function.length;
  for (size_t d = chain.size(); d-- > 0;) {
    const Range& r = *chain[d];
    gsym::Location frame;
    frame.name = strings_[r.func];
    frame.offset = address - r.start;
    if (d + 1 == chain.size()) {
      const Path p = path(r.file);
      frame.dir = p.dir;
      frame.file = p.file;
      auto row = std::upper_bound(rows_.begin() + r.rows_begin, rows_.begin() + r.rows_end, address,
                                  [](uint64_t a, const Row& x) { return a < x.address; });
      if (row != rows_.begin() + r.rows_begin) frame.line = (row - 1)->line;
    } else {
      const Range& inner = *chain[d + 1];
      const Path p = path(inner.call_file);
      frame.dir = p.dir;
      frame.file = p.file;
      frame.line = inner.call_line;
    }
    result.frames.push_back(frame);
  }
  return true;
}

}  // namespace sampler::symbfile
