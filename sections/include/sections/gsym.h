// Reading GSYM symbol files (seed 001; the layout LLVM's llvm-gsymutil writes): address -> function, source file
// and line, with the inline call chain.
//
// Layout (docs/formats.md, "GSYM"): a 48-byte header (magic "GSYM", version 1, address offset size, UUID size,
// base address, number of addresses, string table offset and size, 20 UUID bytes), the sorted address table
// (offsets from the base address, 1/2/4/8 bytes each), one 32-bit file offset per address (its function info),
// the file table (count, then directory/name string offsets), the string table, and the function infos (size,
// name, then typed records: line table, inline info, end of list). Either byte order (the magic tells).
//
// The file is never parsed whole: opening checks the header and that every table lies inside the bytes; a lookup
// reads one binary search's worth of the address table and one function info. Every offset and size is checked
// (sections/src/checked.h); a malformed part is an error naming its byte offset, never a crash. verify() walks
// every function info, for tests and fuzzing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sampler::gsym {

constexpr uint32_t kMagic = 0x4753594d;  ///< "GSYM" as a 32-bit number in the file's byte order
constexpr uint16_t kVersion = 1;
constexpr size_t kHeaderSize = 48;
constexpr size_t kMaxUuidSize = 20;
constexpr size_t kMaxInlineDepth = 256;  ///< deeper inline nesting is an error (bounds the recursion)

/// The record types of a function info (seed 001, "InfoType").
enum class InfoType : uint32_t { kEndOfList = 0, kLineTable = 1, kInlineInfo = 2 };

/// A problem in a GSYM file: where (byte offset from the start of the file) and what.
struct Error {
  uint64_t offset = 0;
  std::string message;
};

/// One frame of a lookup. Views point into the GSYM bytes (valid while they are).
struct Location {
  std::string_view name;  ///< the function (inlined or concrete); as stored (a linkage name for C++)
  std::string_view dir;   ///< the source file's directory (empty if unknown)
  std::string_view file;  ///< the source file's base name (empty if unknown)
  uint32_t line = 0;      ///< 0 if unknown
  uint64_t offset = 0;    ///< address minus the start of this (inlined) function's first range
};

/// The answer for one address: the function's range and the frames, innermost inlined function first, the
/// concrete function last (the order llvm-symbolizer prints).
struct LookupResult {
  uint64_t start = 0;
  uint64_t size = 0;
  std::vector<Location> frames;
};

enum class Found { kYes, kNo, kError };

/// A GSYM file over bytes the caller keeps alive (a mapping or a buffer).
class Reader {
 public:
  /// Checks the header and the extents of the tables; nullopt and `error` if they are malformed.
  static std::optional<Reader> open(std::string_view bytes, Error& error);

  /// Looks up `address`: kYes fills `result`; kNo if no function covers it (before the first, after the last,
  /// or in a gap between functions); kError fills `error` if the function info found is malformed.
  Found lookup(uint64_t address, LookupResult& result, Error& error) const;

  /// Decodes every function info completely (its line table and inline tree); false and `error` at the first
  /// malformed one. Touches the whole file: for tests, fuzzing and checking a file once after writing it.
  bool verify(Error& error) const;

  uint64_t base_address() const { return base_address_; }
  uint32_t address_count() const { return address_count_; }
  /// The start address of function info `index` (< address_count()).
  uint64_t address_at(uint32_t index) const;
  std::string_view uuid() const { return uuid_; }
  /// The NUL-terminated string at `offset` in the string table, or nullopt if it does not end inside it.
  std::optional<std::string_view> string_at(uint32_t offset) const;

 private:
  Reader() = default;
  struct FileEntry {
    std::string_view dir, file;
  };
  bool file_at(uint64_t index, FileEntry& entry, uint64_t where, Error& error) const;
  bool string_or_error(uint32_t offset, uint64_t where, std::string_view& out, Error& error) const;
  Found lookup_at(uint32_t index, uint64_t address, LookupResult& result, Error& error) const;
  friend class FunctionDecoder;

  std::string_view bytes_;
  bool little_ = true;
  uint8_t address_size_ = 0;
  uint64_t base_address_ = 0;
  uint32_t address_count_ = 0;
  uint64_t address_table_ = 0;  // file offsets of the tables
  uint64_t info_offsets_ = 0;
  uint64_t file_table_ = 0;
  uint32_t file_count_ = 0;
  std::string_view strings_;
  uint64_t strings_offset_ = 0;
  std::string_view uuid_;
};

/// A GSYM file mapped read-only, with its Reader.
class MappedFile {
 public:
  /// Maps and opens `path`; nullptr and `error` (offset 0 for a file that cannot be read) on failure.
  static std::unique_ptr<MappedFile> open(const std::string& path, Error& error);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const Reader& reader() const { return *reader_; }

 private:
  MappedFile() = default;
  void* address_ = nullptr;
  size_t size_ = 0;
  std::optional<Reader> reader_;
};

}  // namespace sampler::gsym
